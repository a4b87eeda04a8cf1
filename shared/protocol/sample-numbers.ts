// A Sample's numbers laid out in a Float64Array, one layout for whoever keeps samples as numbers:
// LatestSample (a semaphore's latest sample) and the hub's SampleArena (deferred batches).
// Float64 holds every JSON number exactly, so what is read back is what was written.
import type { SummaryMerge } from "../histogram.js";
import { SAMPLE_NUMBERS, SUMMARY_NUMBERS, type SampleNumber } from "./sample-layout.js";
import type { Sample, Summary } from "./types.js";

// SAMPLE_NUMBERS at indices 0.., then each Summary's SUMMARY_NUMBERS and its pair count. Written
// out below rather than looped over by name (a keyed read per field costs more than the rest of a
// sample's copy); test/shared/sample-layout.test.ts round-trips every field of the layout.
const index = (k: SampleNumber): number => SAMPLE_NUMBERS.indexOf(k);
const [CAP, IN_USE, AVAILABLE, WAITERS, OLDEST_WAIT, LONGEST_HOLD] = [index("cap"), index("inUse"), index("available"), index("waiters"), index("oldestWaitMs"), index("longestHoldMs")];
const [ACQUIRED, RELEASED, TIMEOUTS, REJECTIONS] = [index("acquired"), index("released"), index("timeouts"), index("rejections")];
const [ABORTS, DOUBLE_RELEASES, LEASE_EXPIRIES] = [index("aborts"), index("doubleReleases"), index("leaseExpiries")];

/** Where each Summary's numbers start: count, p50, p90, p99, max, pairs held. */
export const WAIT_AT = SAMPLE_NUMBERS.length;
export const HOLD_AT = WAIT_AT + SUMMARY_NUMBERS.length + 1;
/** Numbers before the histograms' pairs, which go wherever the keeper puts them. */
export const PAIRS_AT = HOLD_AT + SUMMARY_NUMBERS.length + 1;
/** Where a Summary's pair count sits, after its numbers. */
const PAIR_COUNT = SUMMARY_NUMBERS.length;
const [SUMMARY_COUNT, SUMMARY_MAX] = [SUMMARY_NUMBERS.indexOf("count"), SUMMARY_NUMBERS.indexOf("max")];

function writeSummary(v: Float64Array, at: number, pairsAt: number, s: Summary): void {
  v[at] = s.count;
  v[at + 1] = s.p50;
  v[at + 2] = s.p90;
  v[at + 3] = s.p99;
  v[at + 4] = s.max;
  const h = s.hist;
  const n = h.length;
  v[at + PAIR_COUNT] = n;
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
  v[at + CAP] = s.cap;
  v[at + IN_USE] = s.inUse;
  v[at + AVAILABLE] = s.available;
  v[at + WAITERS] = s.waiters;
  v[at + OLDEST_WAIT] = s.oldestWaitMs;
  v[at + LONGEST_HOLD] = s.longestHoldMs;
  v[at + ACQUIRED] = s.acquired;
  v[at + RELEASED] = s.released;
  v[at + TIMEOUTS] = s.timeouts;
  v[at + REJECTIONS] = s.rejections;
  v[at + ABORTS] = s.aborts;
  v[at + DOUBLE_RELEASES] = s.doubleReleases;
  v[at + LEASE_EXPIRIES] = s.leaseExpiries;
  writeSummary(v, at + WAIT_AT, waitPairsAt, s.waitMs);
  writeSummary(v, at + HOLD_AT, holdPairsAt, s.holdMs);
}

/**
 * Reads the plain numbers writeSampleNumbers wrote from v[at] back into `into` (the summaries'
 * pairs are the caller's to read: where they go is the keeper's own layout).
 */
export function readSampleNumbers(v: Float64Array, at: number, into: Sample): void {
  into.cap = v[at + CAP];
  into.inUse = v[at + IN_USE];
  into.available = v[at + AVAILABLE];
  into.waiters = v[at + WAITERS];
  into.oldestWaitMs = v[at + OLDEST_WAIT];
  into.longestHoldMs = v[at + LONGEST_HOLD];
  into.acquired = v[at + ACQUIRED];
  into.released = v[at + RELEASED];
  into.timeouts = v[at + TIMEOUTS];
  into.rejections = v[at + REJECTIONS];
  into.aborts = v[at + ABORTS];
  into.doubleReleases = v[at + DOUBLE_RELEASES];
  into.leaseExpiries = v[at + LEASE_EXPIRIES];
}

/** Reads a Summary's numbers written at v[at] into `into`; the number of its pairs. */
export function readSummaryNumbers(v: Float64Array, at: number, into: Omit<Summary, "hist">): number {
  into.count = v[at];
  into.p50 = v[at + 1];
  into.p90 = v[at + 2];
  into.p99 = v[at + 3];
  into.max = v[at + 4];
  return v[at + PAIR_COUNT];
}

/** Adds the Summary writeSampleNumbers wrote at v[at], its pairs from v[pairsAt], to `merge`, building nothing. */
export function mergeSummaryNumbers(v: Float64Array, at: number, pairsAt: number, merge: SummaryMerge): void {
  merge.addNumbers(v[at + SUMMARY_COUNT], v[at + SUMMARY_MAX], v, pairsAt, v[at + PAIR_COUNT]);
}
