// A Sample's numbers laid out in a Float64Array, one layout for whoever keeps samples as numbers:
// LatestSample (a semaphore's latest sample) and the hub's SampleArena (deferred batches).
// Float64 holds every JSON number exactly, so what is read back is what was written.
import type { Sample, Summary } from "./types.js";

/** The plain-number fields of a Sample, in schema order (waitMs and holdMs go between the last two), at indices 0.. of the layout. */
export const SAMPLE_NUMBERS = [
  "cap",
  "inUse",
  "available",
  "waiters",
  "oldestWaitMs",
  "acquired",
  "released",
  "timeouts",
  "rejections",
  "aborts",
  "doubleReleases",
  "leaseExpiries",
  "longestHoldMs",
] as const;

/** Where each Summary's numbers start: count, p50, p90, p99, max, pairs held. */
export const WAIT_AT = SAMPLE_NUMBERS.length;
export const HOLD_AT = WAIT_AT + 6;
/** Numbers before the histograms' pairs, which go wherever the keeper puts them. */
export const PAIRS_AT = HOLD_AT + 6;

function writeSummary(v: Float64Array, at: number, pairsAt: number, s: Summary): void {
  v[at] = s.count;
  v[at + 1] = s.p50;
  v[at + 2] = s.p90;
  v[at + 3] = s.p99;
  v[at + 4] = s.max;
  const h = s.hist;
  const n = h.length;
  v[at + 5] = n;
  for (let i = 0; i < n; i++) {
    const pair = h[i];
    v[pairsAt + 2 * i] = pair[0];
    v[pairsAt + 2 * i + 1] = pair[1];
  }
}

/**
 * Writes `s` from v[at]: its plain numbers, then each Summary's numbers (at + WAIT_AT, at + HOLD_AT),
 * its wait pairs from `waitPairsAt` and its hold pairs from `holdPairsAt` (2 numbers a pair).
 */
export function writeSampleNumbers(v: Float64Array, at: number, s: Sample, waitPairsAt: number, holdPairsAt: number): void {
  v[at] = s.cap;
  v[at + 1] = s.inUse;
  v[at + 2] = s.available;
  v[at + 3] = s.waiters;
  v[at + 4] = s.oldestWaitMs;
  v[at + 5] = s.acquired;
  v[at + 6] = s.released;
  v[at + 7] = s.timeouts;
  v[at + 8] = s.rejections;
  v[at + 9] = s.aborts;
  v[at + 10] = s.doubleReleases;
  v[at + 11] = s.leaseExpiries;
  v[at + 12] = s.longestHoldMs;
  writeSummary(v, at + WAIT_AT, waitPairsAt, s.waitMs);
  writeSummary(v, at + HOLD_AT, holdPairsAt, s.holdMs);
}

/**
 * Reads the plain numbers writeSampleNumbers wrote from v[at] back into `into` (the summaries'
 * numbers and pairs are the caller's to read: where the pairs go is the keeper's own layout).
 */
export function readSampleNumbers(v: Float64Array, at: number, into: Sample): void {
  into.cap = v[at];
  into.inUse = v[at + 1];
  into.available = v[at + 2];
  into.waiters = v[at + 3];
  into.oldestWaitMs = v[at + 4];
  into.acquired = v[at + 5];
  into.released = v[at + 6];
  into.timeouts = v[at + 7];
  into.rejections = v[at + 8];
  into.aborts = v[at + 9];
  into.doubleReleases = v[at + 10];
  into.leaseExpiries = v[at + 11];
  into.longestHoldMs = v[at + 12];
}
