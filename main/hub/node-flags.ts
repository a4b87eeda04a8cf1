// The V8 flags the hub's process runs with: `npm run hub`, `npm run web` and `npm start` pass them
// to node (package.json; test/main/hub/node-flags.test.ts holds the scripts to this list), `npm
// start` to Electron's main process (--js-flags), and bench:hub to its server children.
//
// Why a larger young generation: at 10,000 samples a second the hub allocates ~10 MB/s of parsed
// packets that die within a message, and with node's default 16 MB semi-spaces a scavenge every
// ~0.4 s catches enough of them in flight to promote ~2.4 MB/s into the old generation; V8 then ran
// a major GC of the whole history-sized heap every 2-3 s. With 64 MB: scavenges and major GCs fall
// by more than half, and the hub's CPU per sample by a third (bench:hub, docs/benchmarks.md), for
// ~40 MB more resident memory. A library user embedding createHub() chooses their own flags.
export const HUB_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=64"];
