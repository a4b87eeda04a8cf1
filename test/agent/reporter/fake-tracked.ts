// A Tracked the way an adapter would write one, for tests that need items the registry lacks.
import type { Sample, SemaphoreInfo, Tracked } from "../../../agent/src/index.js";

/** A Tracked the way an adapter would write one. */
export function fakeTracked(id: string, cap: number, hist: [number, number][] = []): Tracked {
  const summary = { count: hist.reduce((n, [, c]) => n + c, 0), p50: 1, p90: 2, p99: 3, max: 4, hist };
  return {
    id,
    describe: (): SemaphoreInfo => ({
      id, name: id, kind: "generic-pool", cap, queue: "unknown", maxWaiters: null, acquireTimeoutMs: null, leaseTimeoutMs: null, leakThresholdMs: null, scope: "process",
    }),
    sample: (): Sample => ({
      id, cap, inUse: 0, available: cap, waiters: 0, oldestWaitMs: 0, acquired: 0, released: 0, timeouts: 0, rejections: 0, aborts: 0,
      doubleReleases: 0, leaseExpiries: 0, waitMs: summary, holdMs: summary, longestHoldMs: 0,
    }),
  };
}
