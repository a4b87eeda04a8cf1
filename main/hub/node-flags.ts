// The V8 flags the hub's process runs with: `npm run hub`, `npm run web` and `npm start` pass them
// to node (package.json; test/main/hub/node-flags.test.ts holds the scripts to this list), `npm
// start` to Electron's main process (--js-flags), bench:hub to its server children, and bench:ui to
// its own process, which holds the hub.
//
// Why a larger young generation: at 10,000 samples a second the hub allocates ~10 MB/s of parsed
// packets that die within a message, and with node's default 16 MB semi-spaces a scavenge every
// ~0.4 s catches enough of them in flight to promote ~2.4 MB/s into the old generation; V8 then ran
// a major GC of the whole history-sized heap every 2-3 s. With 64 MB: scavenges and major GCs fall
// by more than half, and the hub's CPU per sample by a third (bench:hub, docs/benchmarks.md), for
// ~40 MB more resident memory. A library user embedding createHub() chooses their own flags.
//
// Why the young generation held at that size (min = max): V8 sets the old generation's limit after
// a major GC as the live size × a growing factor + the new space's capacity *then*, and starts
// marking again once the headroom left is below the new space's capacity *now*. A new space that
// grows back after the GC (V8 resizes it with the allocation rate) eats that headroom at once, and
// with the hub's slow old-generation growth the factor is near its 1.1 floor: half of bench:hub's
// hub runs marked the whole ~100 MB heap every ~4 s, +5-17 µs a sample and an ack p99 of 40-80
// ms. Held at 64 MB, no run did: ack p99 17-24 ms (docs/benchmarks.md, 2026-12-01). The cost:
// the young generation is that size from the start, so a lightly loaded process touches all of it
// too (a node process allocating a little garbage for 20 s: 51 MB resident, 160 MB held at 64).
export const HUB_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=64", "--min-semi-space-size=64"];
