// What checking a full `samples` batch costs: the hub's fast path (fast-samples.ts) against zod
// on the same 1,000-item batch, medians in this process. The fast path is held to zod's answers
// by test/shared/protocol-fast-path.test.ts; how much cheaper it is is measured here.
import { fastSamplesBatch } from "../../shared/protocol/fast-samples.js";
import { samplesBatchSchema } from "../../shared/protocol/index.js";

export interface ParseCost {
  readonly bytes: number;
  readonly fastMs: number;
  readonly zodMs: number;
}

function item(i: number) {
  return {
    id: `s${i}`, cap: 10, inUse: 2, available: 8, waiters: 0, oldestWaitMs: 0, acquired: 5, released: 5, timeouts: 0, rejections: 0,
    aborts: 0, doubleReleases: 0, leaseExpiries: 0, longestHoldMs: 15,
    waitMs: { count: 3, p50: 1, p90: 2, p99: 3, max: 3, hist: [[0, 1], [80, 2]] },
    holdMs: { count: 2, p50: 10, p90: 20, p99: 20, max: 20, hist: Array.from({ length: 40 }, (_, b) => [b * 6, b + 1]) },
  };
}

function median(fn: () => unknown, n: number): number {
  const runs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    fn();
    runs.push(performance.now() - t0);
  }
  return runs.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

export function parseCost(): ParseCost {
  // As it arrives: a JSON round trip, so the values are what socket.io hands the hub.
  const text = JSON.stringify({ seq: 1, t: 1, intervalMs: 1000, items: Array.from({ length: 1000 }, (_, i) => item(i)) });
  const data: unknown = JSON.parse(text);
  if (fastSamplesBatch(data) === undefined || !samplesBatchSchema.safeParse(data).success) throw new Error("parse-cost: the batch is not valid");
  median(() => fastSamplesBatch(data), 5);
  median(() => samplesBatchSchema.safeParse(data), 3);
  return { bytes: text.length, fastMs: median(() => fastSamplesBatch(data), 21), zodMs: median(() => samplesBatchSchema.safeParse(data), 9) };
}
