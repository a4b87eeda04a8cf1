// The 1m tier: one row per minute of sample time (minute = floor(t / 60 000)), the last
// `maxPoints` closed minutes (1440 = 24 h), plus the open minute as a provisional last point.
//
// The open minute accumulates every accepted sample exactly, its two histograms densely, and is
// rolled up into one row when the first sample of a later minute arrives: gauges as time-weighted
// means and maxima (cap: last, available: min), counters as sums, and p50/p90/p99 from the MERGED
// histogram of the minute, never from an average of per-second percentiles.
//
// Those percentiles are stored as the bucket index they fall in (Uint8): a percentile read from a
// histogram is by construction that bucket's middle capped at the exact max, so index + max give
// it back (up to max's Float32 rounding) for 1 byte instead of 4. The merged histogram itself is packed (packed-hist.ts) for
// later merges (1 h p99, fleet). Value columns are Float32 for the reasons given in second-tier.ts;
// minute sums stay exact to 2^24 events per minute.

import { BUCKETS } from "../histogram.js";
import { SAMPLE_COUNTERS } from "../protocol/sample-layout.js";
import type { Sample } from "../protocol/types.js";
import { ColumnRing, type RowPool } from "./column-ring.js";
import {
  addCounters,
  MINUTE_MS,
  perSecond,
  RATE_COLUMN,
  type ColumnarWindow,
  type HistKind,
  type MutableWindow,
  type TierReader,
} from "./columnar-window.js";
import { addSummaryAt, HistAccumulator, bucketValueMs, quantileBucket } from "./hist-accumulator.js";
import { isEmptySlot, packDense } from "./packed-hist.js";
import { SlotPool } from "./slot-pool.js";

const QUANTILES = [0.5, 0.9, 0.99] as const;

/**
 * The Float32 values of a row, in this order, stored row-major (one stride-VALUES.length column,
 * as in second-tier.ts): one typed array per tier rather than twenty, so 10,000 semaphores do
 * not add ~200,000 column views for every major GC to mark.
 */
const VALUES = [
  "coveredMs",
  "cap",
  "inUseMean",
  "inUseMax",
  "availableMin",
  "waitersMean",
  "waitersMax",
  "oldestWaitMsMax",
  "longestHoldMsMax",
  ...SAMPLE_COUNTERS,
  "waitCount",
  "waitMax",
  "holdCount",
  "holdMax",
] as const;
const STRIDE = VALUES.length;
const AT = Object.fromEntries(VALUES.map((name, i) => [name, i])) as Record<(typeof VALUES)[number], number>;
const COUNTER_AT = SAMPLE_COUNTERS.map((k) => AT[k]);
const RATE_OF = SAMPLE_COUNTERS.map((k) => RATE_COLUMN[k]);
/** Per row: the wait percentiles' bucket indices, then the hold ones. */
const Q = QUANTILES.length;

export function minuteSchema(histBytes: number) {
  return {
    t: [Float64Array, 1],
    v: [Float32Array, STRIDE],
    q: [Uint8Array, 2 * Q],
    waitHist: [Uint8Array, histBytes],
    holdHist: [Uint8Array, histBytes],
  } as const;
}

export type MinuteSchema = ReturnType<typeof minuteSchema>;

/** Rows per chunk the 1 m tier aims at (16 minutes; 1,440 rows come in 90 chunks of 16). */
export const MINUTE_CHUNK_ROWS = 16;

// -1 (empty: the row's empty histogram says so) and BUCKETS (rank out of reach through rounding:
// read as max, which the last bucket's value is capped to anyway) must fit a Uint8.
function storedBucket(b: number): number {
  return b < 0 ? 0 : Math.min(b, BUCKETS - 1);
}

// The open minute's numbers, all in one Float64Array (OpenMinute.v), at these indices.
const START = 0;
const SAMPLES = 1;
const COVERED = 2;
const CAP = 3;
const IN_USE_AREA = 4;
const IN_USE_MAX = 5;
const AVAILABLE_MIN = 6;
const WAITERS_AREA = 7;
const WAITERS_MAX = 8;
const OLDEST_WAIT_MAX = 9;
const LONGEST_HOLD_MAX = 10;
/** Sums in SAMPLE_COUNTERS order. */
const SUMS = 11;
/** A histogram's mass, count and max (see HistAccumulator), then its BUCKETS dense counts. */
const WAIT = SUMS + SAMPLE_COUNTERS.length;
const HOLD = WAIT + 3;
const WAIT_COUNTS = HOLD + 3;
const HOLD_COUNTS = WAIT_COUNTS + BUCKETS;
/** Numbers an open minute takes: the length of its slot (openMinutePool). */
const OPEN_LENGTH = HOLD_COUNTS + BUCKETS;

/** Where the open minutes of histories sharing `slabBytes` slabs come from (see RowPool for `sharedSlabs`). */
export function openMinutePool(slabBytes?: number, sharedSlabs = false): SlotPool {
  return new SlotPool(OPEN_LENGTH, slabBytes, sharedSlabs);
}

/** A released tier's open minute: holds no sample, and is never written (a released history stores nothing). */
const RELEASED = new Float64Array(SAMPLES + 1);

/**
 * The minute being filled: exact, dense, reused from minute to minute. Every number in one array,
 * its two histograms' counts included: a sample of each of 10,000 semaphores comes between two of
 * this one's, so what it touches is cold every time, and each object more (accumulators, counts,
 * sums, boxed doubles) would be one more cache line and dependent load. The array is a slot of
 * a pool (slot-pool.ts), given back when the tier is released.
 */
class OpenMinute {
  constructor(public v: Float64Array) {}

  get samples(): number {
    return this.v[SAMPLES];
  }

  get start(): number {
    return this.v[START];
  }

  begin(start: number): void {
    const v = this.v;
    v.fill(0);
    v[START] = start;
    v[AVAILABLE_MIN] = Infinity;
  }

  /** Ends the minute (its row is written): the next sample begins another. */
  end(): void {
    this.v[SAMPLES] = 0;
  }

  add(s: Sample, intervalMs: number): void {
    const v = this.v;
    v[SAMPLES]++;
    v[COVERED] += intervalMs;
    v[CAP] = s.cap;
    // A gauge is read at the end of its interval; weighting by the interval keeps the mean honest
    // when an agent changes its interval mid-minute.
    v[IN_USE_AREA] += s.inUse * intervalMs;
    v[WAITERS_AREA] += s.waiters * intervalMs;
    if (s.inUse > v[IN_USE_MAX]) v[IN_USE_MAX] = s.inUse;
    if (s.waiters > v[WAITERS_MAX]) v[WAITERS_MAX] = s.waiters;
    if (s.available < v[AVAILABLE_MIN]) v[AVAILABLE_MIN] = s.available;
    if (s.oldestWaitMs > v[OLDEST_WAIT_MAX]) v[OLDEST_WAIT_MAX] = s.oldestWaitMs;
    if (s.longestHoldMs > v[LONGEST_HOLD_MAX]) v[LONGEST_HOLD_MAX] = s.longestHoldMs;
    addCounters(v, s, SUMS);
    addSummaryAt(v, WAIT, WAIT_COUNTS, s.waitMs);
    addSummaryAt(v, HOLD, HOLD_COUNTS, s.holdMs);
  }

  /**
   * Where a histogram's dense counts start in `v`: readers take (v, countsAt) rather than a
   * subarray, which would be small allocations per semaphore each time a minute closes, for
   * every semaphore in the same second.
   */
  countsAt(kind: HistKind): number {
    return kind === "wait" ? WAIT_COUNTS : HOLD_COUNTS;
  }

  /** A histogram's mass (what its quantiles rank against; see HistAccumulator.total). */
  histMass(kind: HistKind): number {
    return this.v[kind === "wait" ? WAIT : HOLD];
  }

  histCount(kind: HistKind): number {
    return this.v[(kind === "wait" ? WAIT : HOLD) + 1];
  }

  histMax(kind: HistKind): number {
    return this.v[(kind === "wait" ? WAIT : HOLD) + 2];
  }

  quantileBucket(kind: HistKind, q: number): number {
    return quantileBucket(this.v, this.histMass(kind), q, this.countsAt(kind));
  }

  quantile(kind: HistKind, q: number): number {
    return bucketValueMs(this.quantileBucket(kind, q), this.histMax(kind));
  }
}

export class MinuteTier implements TierReader {
  readonly tier = "1m";
  private readonly ring: ColumnRing<MinuteSchema>;
  private readonly open: OpenMinute;

  /** `pool`: chunks of minuteSchema(histBytes) rows; `openPool`: open minutes (openMinutePool). */
  constructor(
    pool: RowPool<MinuteSchema>,
    private readonly openPool: SlotPool,
    maxPoints: number,
    private readonly histBytes: number,
    spread = 0,
  ) {
    this.ring = new ColumnRing(pool, maxPoints, spread);
    this.open = new OpenMinute(openPool.take());
  }

  /** Closed minutes held, plus the open one. */
  get length(): number {
    return this.ring.length + (this.open.samples > 0 ? 1 : 0);
  }

  /** Reads the open minute's first numbers, which add() updates (see HistoryStore.warm). */
  warm(): number {
    return this.open.samples;
  }

  /** Samples must come in ascending t (SemaphoreHistory guarantees it). */
  add(s: Sample, t: number, intervalMs: number): void {
    const start = Math.floor(t / MINUTE_MS) * MINUTE_MS;
    if (this.open.samples > 0 && start !== this.open.start) this.close();
    if (this.open.samples === 0) this.open.begin(start);
    this.open.add(s, intervalMs);
  }

  range(fromT: number, toT: number): readonly [number, number] {
    const lo = this.ring.search(fromT, false);
    let hi = this.ring.search(toT, true);
    const o = this.open;
    if (o.samples > 0 && o.start >= fromT && o.start <= toT) hi = this.ring.length + 1;
    return [lo, hi];
  }

  isProvisional(i: number): boolean {
    return i === this.ring.length;
  }

  writeRows(lo: number, n: number, win: MutableWindow<ColumnarWindow>): void {
    // A minute window is read far less often than a 1 s one (and is 60× shorter): row by row.
    for (let j = 0; j < n; j++) this.writeRow(lo + j, win, j);
  }

  private writeRow(i: number, win: MutableWindow<ColumnarWindow>, j: number): void {
    if (i === this.ring.length) return this.writeOpenRow(win, j);
    const p = this.ring.locate(i);
    const c = this.ring.at;
    const v = c.v;
    const o = p * STRIDE;
    win.t[j] = c.t[p];
    win.intervalMs[j] = MINUTE_MS;
    win.cap[j] = v[o + AT.cap];
    win.inUse[j] = v[o + AT.inUseMean];
    win.inUseMax[j] = v[o + AT.inUseMax];
    win.available[j] = v[o + AT.availableMin];
    win.waiters[j] = v[o + AT.waitersMean];
    win.waitersMax[j] = v[o + AT.waitersMax];
    win.oldestWaitMs[j] = v[o + AT.oldestWaitMsMax];
    win.longestHoldMs[j] = v[o + AT.longestHoldMsMax];
    const perSec = perSecond(v[o + AT.coveredMs]);
    for (let k = 0; k < SAMPLE_COUNTERS.length; k++) win[RATE_OF[k]][j] = v[o + COUNTER_AT[k]] * perSec;
    const q = p * 2 * Q;
    // An empty histogram has every percentile 0, as DenseHist reports.
    const waitEmpty = isEmptySlot(c.waitHist, p * this.histBytes);
    const waitMax = v[o + AT.waitMax];
    win.waitCount[j] = v[o + AT.waitCount];
    win.waitP50[j] = waitEmpty ? 0 : bucketValueMs(c.q[q], waitMax);
    win.waitP90[j] = waitEmpty ? 0 : bucketValueMs(c.q[q + 1], waitMax);
    win.waitP99[j] = waitEmpty ? 0 : bucketValueMs(c.q[q + 2], waitMax);
    win.waitMax[j] = waitMax;
    const holdEmpty = isEmptySlot(c.holdHist, p * this.histBytes);
    const holdMax = v[o + AT.holdMax];
    win.holdCount[j] = v[o + AT.holdCount];
    win.holdP50[j] = holdEmpty ? 0 : bucketValueMs(c.q[q + Q], holdMax);
    win.holdP90[j] = holdEmpty ? 0 : bucketValueMs(c.q[q + Q + 1], holdMax);
    win.holdP99[j] = holdEmpty ? 0 : bucketValueMs(c.q[q + Q + 2], holdMax);
    win.holdMax[j] = holdMax;
  }

  addHist(i: number, kind: HistKind, acc: HistAccumulator): void {
    if (i === this.ring.length) {
      const o = this.open;
      acc.addCounts(o.v, o.histMass(kind), o.histCount(kind), o.histMax(kind), o.countsAt(kind));
      return;
    }
    const p = this.ring.locate(i);
    const c = this.ring.at;
    const o = p * STRIDE;
    if (kind === "wait") acc.addPacked(c.waitHist, p * this.histBytes, this.histBytes, c.v[o + AT.waitCount], c.v[o + AT.waitMax]);
    else acc.addPacked(c.holdHist, p * this.histBytes, this.histBytes, c.v[o + AT.holdCount], c.v[o + AT.holdMax]);
  }

  /** The ring's chunks, and the open minute's dense histograms while it holds its slot. */
  bytes(): number {
    return this.ring.bytes() + (this.open.v === RELEASED ? 0 : 2 * HistAccumulator.BYTES);
  }

  /** Gives the tier's storage back to its pools (see ColumnRing.release), the open minute's slot too. */
  release(): void {
    this.ring.release();
    const open = this.open;
    if (open.v === RELEASED) return;
    open.end();
    this.openPool.give(open.v);
    open.v = RELEASED;
  }

  private close(): void {
    const o = this.open.v;
    const p = this.ring.append();
    const c = this.ring.at;
    c.t[p] = o[START];
    const v = c.v;
    const r = p * STRIDE;
    const covered = o[COVERED];
    v[r + AT.coveredMs] = covered;
    v[r + AT.cap] = o[CAP];
    v[r + AT.inUseMean] = o[IN_USE_AREA] / covered;
    v[r + AT.inUseMax] = o[IN_USE_MAX];
    v[r + AT.availableMin] = o[AVAILABLE_MIN];
    v[r + AT.waitersMean] = o[WAITERS_AREA] / covered;
    v[r + AT.waitersMax] = o[WAITERS_MAX];
    v[r + AT.oldestWaitMsMax] = o[OLDEST_WAIT_MAX];
    v[r + AT.longestHoldMsMax] = o[LONGEST_HOLD_MAX];
    for (let i = 0; i < SAMPLE_COUNTERS.length; i++) v[r + COUNTER_AT[i]] = o[SUMS + i];
    const open = this.open;
    v[r + AT.waitCount] = open.histCount("wait");
    v[r + AT.waitMax] = open.histMax("wait");
    v[r + AT.holdCount] = open.histCount("hold");
    v[r + AT.holdMax] = open.histMax("hold");
    const q = p * 2 * Q;
    for (let i = 0; i < Q; i++) {
      c.q[q + i] = storedBucket(open.quantileBucket("wait", QUANTILES[i]));
      c.q[q + Q + i] = storedBucket(open.quantileBucket("hold", QUANTILES[i]));
    }
    packDense(o, c.waitHist, p * this.histBytes, this.histBytes, open.countsAt("wait"));
    packDense(o, c.holdHist, p * this.histBytes, this.histBytes, open.countsAt("hold"));
    open.end();
  }

  private writeOpenRow(win: MutableWindow<ColumnarWindow>, j: number): void {
    const open = this.open;
    const o = open.v;
    const covered = o[COVERED];
    win.t[j] = o[START];
    win.intervalMs[j] = MINUTE_MS;
    win.cap[j] = o[CAP];
    win.inUse[j] = o[IN_USE_AREA] / covered;
    win.inUseMax[j] = o[IN_USE_MAX];
    win.available[j] = o[AVAILABLE_MIN];
    win.waiters[j] = o[WAITERS_AREA] / covered;
    win.waitersMax[j] = o[WAITERS_MAX];
    win.oldestWaitMs[j] = o[OLDEST_WAIT_MAX];
    win.longestHoldMs[j] = o[LONGEST_HOLD_MAX];
    const perSec = perSecond(covered);
    for (let i = 0; i < SAMPLE_COUNTERS.length; i++) win[RATE_COLUMN[SAMPLE_COUNTERS[i]]][j] = o[SUMS + i] * perSec;
    win.waitCount[j] = open.histCount("wait");
    win.waitP50[j] = open.quantile("wait", 0.5);
    win.waitP90[j] = open.quantile("wait", 0.9);
    win.waitP99[j] = open.quantile("wait", 0.99);
    win.waitMax[j] = open.histMax("wait");
    win.holdCount[j] = open.histCount("hold");
    win.holdP50[j] = open.quantile("hold", 0.5);
    win.holdP90[j] = open.quantile("hold", 0.9);
    win.holdP99[j] = open.quantile("hold", 0.99);
    win.holdMax[j] = open.histMax("hold");
  }
}
