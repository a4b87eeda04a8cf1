import { setFlagsFromString } from "node:v8";

// The V8 flags the hub's process runs with: `npm run hub`, `npm run web` and `npm start` pass them
// to node (package.json; test/main/hub/node-flags.test.ts holds the scripts to this list), `npm
// start` to Electron's main process (--js-flags), bench:hub to its server children, and bench:ui to
// its own process, which holds the hub. The packaged app's main process sets those it still can
// (HUB_RUNTIME_FLAGS, below).
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
//
// Why a fixed heap growing factor of 2: V8 picks the factor from how fast the old generation
// grows against how fast it can be marked, and the hub's grows slowly (its state is allocated
// once per semaphore), so after any mark-compact under load the factor drops to its 1.1 floor.
// The limit then leaves ~10 % of the live heap plus the new space's capacity, which V8 already
// counts as too little: it starts marking again at the next scavenge, for good. The first such
// mark-compact comes when the 1 s rings first grow (64-80 s into a run, external memory
// pressure); from then on bench:hub's hub marked its ~95 MB heap every 2-3 s, 13 mark-compacts
// in a 40 s window 85 s in, and 17.8 µs a sample against 14.7 with the factor fixed at 2 (one
// mark-compact); 12 minutes in, 25.6 µs (docs/benchmarks.md, 2026-12-01 evening). The cost: up
// to the live heap again in garbage before a mark-compact (~100 MB at 10,000 semaphores).
//
// Why no allocation-site pretenuring: V8 watches what share of the objects made at each object or
// array literal outlive young GCs, and from then on makes that literal's objects in the old
// generation. An object there, even a dead one, keeps the young objects it points at alive through
// every young GC until the next full one. The hub's state is made once per semaphore, so
// pretenuring gains it little; and at start-up, while 1,000 agents' first batches wait their turn,
// per-message objects live long enough to be pretenured, after which each one holds its message's
// parsed packet: one bench:hub run of about ten promoted ~15 MB every young GC and ran a full GC
// every ~9 s for its whole twelve minutes (docs/benchmarks.md, 2026-12-02 afternoon). The
// scheduler's per-message object that did it is gone (agent-scheduler.ts, Lane), but other short
// literals on the message path remain, in the hub and in socket.io; this flag covers them all.
// test/main/hub/young-gc-retention.test.ts holds both.
export const HUB_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=64", "--min-semi-space-size=64", "--heap-growing-percent=100", "--no-allocation-site-pretenuring"];

/**
 * The flags of HUB_NODE_FLAGS that V8 reads at every garbage collection (the growing factor; the
 * pretenuring decisions, made after each young GC), and so still take effect when set after the
 * process started. The packaged app is launched without --js-flags (nothing
 * stands between the user and Electron's binary), so its main process, which holds the hub, sets
 * these itself (applyHubRuntimeFlags). The semi-space sizes are read once, when the heap is made.
 */
export const HUB_RUNTIME_FLAGS: readonly string[] = ["--heap-growing-percent=100", "--no-allocation-site-pretenuring"];

/** Sets HUB_RUNTIME_FLAGS in this process, for its next garbage collection on. */
export function applyHubRuntimeFlags(): void {
  for (const flag of HUB_RUNTIME_FLAGS) setFlagsFromString(flag);
}
