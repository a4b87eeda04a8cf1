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
import type { Sample } from "../protocol/types.js";
import { ColumnRing } from "./column-ring.js";
import {
  COUNTERS,
  addCounters,
  MINUTE_MS,
  RATE_COLUMN,
  type ColumnarWindow,
  type HistKind,
  type MutableWindow,
  type TierReader,
} from "./columnar-window.js";
import { HistAccumulator, bucketValueMs } from "./hist-accumulator.js";
import { isEmptySlot, packDense } from "./packed-hist.js";

const QUANTILES = [0.5, 0.9, 0.99] as const;

/**
 * The Float32 values of a row, in this order, stored row-major (one stride-VALUES.length column,
 * as in second-tier.ts): one typed array per tier rather than twenty. At 10,000 semaphores the
 * columns' views were ~200,000 heap objects for every major GC to mark.
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
  ...COUNTERS,
  "waitCount",
  "waitMax",
  "holdCount",
  "holdMax",
] as const;
const STRIDE = VALUES.length;
const AT = Object.fromEntries(VALUES.map((name, i) => [name, i])) as Record<(typeof VALUES)[number], number>;
const COUNTER_AT = COUNTERS.map((k) => AT[k]);
const RATE_OF = COUNTERS.map((k) => RATE_COLUMN[k]);
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

type MinuteSchema = ReturnType<typeof minuteSchema>;

// -1 (empty: the row's empty histogram says so) and BUCKETS (rank out of reach through rounding:
// read as max, which the last bucket's value is capped to anyway) must fit a Uint8.
function storedBucket(b: number): number {
  return b < 0 ? 0 : Math.min(b, BUCKETS - 1);
}

/** The minute being filled: exact, dense, reused from minute to minute. */
class OpenMinute {
  start = NaN;
  samples = 0;
  coveredMs = 0;
  cap = 0;
  inUseArea = 0;
  inUseMax = 0;
  availableMin = Infinity;
  waitersArea = 0;
  waitersMax = 0;
  oldestWaitMsMax = 0;
  longestHoldMsMax = 0;
  /** Sums in COUNTERS order. */
  readonly counters = new Float64Array(COUNTERS.length);
  readonly wait = new HistAccumulator();
  readonly hold = new HistAccumulator();

  begin(start: number): void {
    this.start = start;
    this.samples = 0;
    this.coveredMs = 0;
    this.inUseArea = 0;
    this.inUseMax = 0;
    this.availableMin = Infinity;
    this.waitersArea = 0;
    this.waitersMax = 0;
    this.oldestWaitMsMax = 0;
    this.longestHoldMsMax = 0;
    this.counters.fill(0);
    this.wait.reset();
    this.hold.reset();
  }

  add(s: Sample, intervalMs: number): void {
    this.samples++;
    this.coveredMs += intervalMs;
    this.cap = s.cap;
    // A gauge is read at the end of its interval; weighting by the interval keeps the mean honest
    // when an agent changes its interval mid-minute.
    this.inUseArea += s.inUse * intervalMs;
    this.waitersArea += s.waiters * intervalMs;
    if (s.inUse > this.inUseMax) this.inUseMax = s.inUse;
    if (s.waiters > this.waitersMax) this.waitersMax = s.waiters;
    if (s.available < this.availableMin) this.availableMin = s.available;
    if (s.oldestWaitMs > this.oldestWaitMsMax) this.oldestWaitMsMax = s.oldestWaitMs;
    if (s.longestHoldMs > this.longestHoldMsMax) this.longestHoldMsMax = s.longestHoldMs;
    addCounters(this.counters, s);
    this.wait.addSummary(s.waitMs);
    this.hold.addSummary(s.holdMs);
  }
}

export class MinuteTier implements TierReader {
  readonly tier = "1m";
  private readonly ring: ColumnRing<MinuteSchema>;
  private readonly open = new OpenMinute();

  constructor(
    maxPoints: number,
    private readonly histBytes: number,
    spread = 0,
  ) {
    this.ring = new ColumnRing(minuteSchema(histBytes), maxPoints, 16, spread);
  }

  /** Closed minutes held, plus the open one. */
  get length(): number {
    return this.ring.length + (this.open.samples > 0 ? 1 : 0);
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

  writeRow(i: number, win: MutableWindow<ColumnarWindow>, j: number): void {
    if (i === this.ring.length) return this.writeOpenRow(win, j);
    const c = this.ring.cols;
    const p = this.ring.phys(i);
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
    const perSec = 1000 / v[o + AT.coveredMs];
    for (let k = 0; k < COUNTERS.length; k++) win[RATE_OF[k]][j] = v[o + COUNTER_AT[k]] * perSec;
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
      acc.addAccumulator(kind === "wait" ? this.open.wait : this.open.hold);
      return;
    }
    const c = this.ring.cols;
    const p = this.ring.phys(i);
    const o = p * STRIDE;
    if (kind === "wait") acc.addPacked(c.waitHist, p * this.histBytes, this.histBytes, c.v[o + AT.waitCount], c.v[o + AT.waitMax]);
    else acc.addPacked(c.holdHist, p * this.histBytes, this.histBytes, c.v[o + AT.holdCount], c.v[o + AT.holdMax]);
  }

  bytes(): number {
    return this.ring.bytes() + 2 * HistAccumulator.BYTES;
  }

  private close(): void {
    const o = this.open;
    const p = this.ring.append();
    const c = this.ring.cols;
    c.t[p] = o.start;
    const v = c.v;
    const r = p * STRIDE;
    v[r + AT.coveredMs] = o.coveredMs;
    v[r + AT.cap] = o.cap;
    v[r + AT.inUseMean] = o.inUseArea / o.coveredMs;
    v[r + AT.inUseMax] = o.inUseMax;
    v[r + AT.availableMin] = o.availableMin;
    v[r + AT.waitersMean] = o.waitersArea / o.coveredMs;
    v[r + AT.waitersMax] = o.waitersMax;
    v[r + AT.oldestWaitMsMax] = o.oldestWaitMsMax;
    v[r + AT.longestHoldMsMax] = o.longestHoldMsMax;
    for (let i = 0; i < COUNTERS.length; i++) v[r + COUNTER_AT[i]] = o.counters[i];
    v[r + AT.waitCount] = o.wait.count;
    v[r + AT.waitMax] = o.wait.max;
    v[r + AT.holdCount] = o.hold.count;
    v[r + AT.holdMax] = o.hold.max;
    const q = p * 2 * Q;
    for (let i = 0; i < Q; i++) {
      c.q[q + i] = storedBucket(o.wait.quantileBucket(QUANTILES[i]));
      c.q[q + Q + i] = storedBucket(o.hold.quantileBucket(QUANTILES[i]));
    }
    packDense(o.wait.counts, c.waitHist, p * this.histBytes, this.histBytes);
    packDense(o.hold.counts, c.holdHist, p * this.histBytes, this.histBytes);
    o.samples = 0;
  }

  private writeOpenRow(win: MutableWindow<ColumnarWindow>, j: number): void {
    const o = this.open;
    win.t[j] = o.start;
    win.intervalMs[j] = MINUTE_MS;
    win.cap[j] = o.cap;
    win.inUse[j] = o.inUseArea / o.coveredMs;
    win.inUseMax[j] = o.inUseMax;
    win.available[j] = o.availableMin;
    win.waiters[j] = o.waitersArea / o.coveredMs;
    win.waitersMax[j] = o.waitersMax;
    win.oldestWaitMs[j] = o.oldestWaitMsMax;
    win.longestHoldMs[j] = o.longestHoldMsMax;
    const perSec = 1000 / o.coveredMs;
    for (let i = 0; i < COUNTERS.length; i++) win[RATE_COLUMN[COUNTERS[i]]][j] = o.counters[i] * perSec;
    win.waitCount[j] = o.wait.count;
    win.waitP50[j] = o.wait.quantile(0.5);
    win.waitP90[j] = o.wait.quantile(0.9);
    win.waitP99[j] = o.wait.quantile(0.99);
    win.waitMax[j] = o.wait.max;
    win.holdCount[j] = o.hold.count;
    win.holdP50[j] = o.hold.quantile(0.5);
    win.holdP90[j] = o.hold.quantile(0.9);
    win.holdP99[j] = o.hold.quantile(0.99);
    win.holdMax[j] = o.hold.max;
  }
}
