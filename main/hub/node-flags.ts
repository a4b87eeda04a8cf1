import { setFlagsFromString } from "node:v8";

// The V8 flags the hub's process runs with (npm run hub/web/start, bench:hub's servers, bench:ui;
// test/main/hub/node-flags.test.ts holds the scripts to this list). Each keeps the hub's per-message
// garbage out of the old generation: a young generation big enough and held at that size, a fixed
// heap growing factor, and no allocation-site pretenuring. What each bought: docs/benchmarks-log.md.
export const HUB_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=16", "--min-semi-space-size=16", "--heap-growing-percent=100", "--no-allocation-site-pretenuring"];

/**
 * The flags V8 reads at every GC, so they still work when set after start: the packaged app,
 * launched without --js-flags, sets these itself (the semi-space sizes are read only at start).
 */
export const HUB_RUNTIME_FLAGS: readonly string[] = ["--heap-growing-percent=100", "--no-allocation-site-pretenuring"];

/** Sets HUB_RUNTIME_FLAGS in this process, for its next garbage collection on. */
export function applyHubRuntimeFlags(): void {
  for (const flag of HUB_RUNTIME_FLAGS) setFlagsFromString(flag);
}
