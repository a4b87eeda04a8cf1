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
  MINUTE_MS,
  RATE_COLUMN,
  type ColumnarWindow,
  type HistKind,
  type MutableWindow,
  type TierReader,
} from "./columnar-window.js";
import { HistAccumulator, bucketValueMs } from "./hist-accumulator.js";
import { isEmptySlot, packDense } from "./packed-hist.js";

const F32 = [Float32Array, 1] as const;
const QUANTILES = [0.5, 0.9, 0.99] as const;

export function minuteSchema(histBytes: number) {
  return {
    t: [Float64Array, 1],
    coveredMs: F32,
    cap: F32,
    inUseMean: F32,
    inUseMax: F32,
    availableMin: F32,
    waitersMean: F32,
    waitersMax: F32,
    oldestWaitMsMax: F32,
    longestHoldMsMax: F32,
    acquired: F32,
    released: F32,
    timeouts: F32,
    rejections: F32,
    aborts: F32,
    doubleReleases: F32,
    leaseExpiries: F32,
    waitCount: F32,
    waitMax: F32,
    waitQ: [Uint8Array, QUANTILES.length],
    holdCount: F32,
    holdMax: F32,
    holdQ: [Uint8Array, QUANTILES.length],
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
    const n = this.counters;
    n[0] += s.acquired;
    n[1] += s.released;
    n[2] += s.timeouts;
    n[3] += s.rejections;
    n[4] += s.aborts;
    n[5] += s.doubleReleases;
    n[6] += s.leaseExpiries;
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
  ) {
    this.ring = new ColumnRing(minuteSchema(histBytes), maxPoints, 16);
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
    win.t[j] = c.t[p];
    win.intervalMs[j] = MINUTE_MS;
    win.cap[j] = c.cap[p];
    win.inUse[j] = c.inUseMean[p];
    win.inUseMax[j] = c.inUseMax[p];
    win.available[j] = c.availableMin[p];
    win.waiters[j] = c.waitersMean[p];
    win.waitersMax[j] = c.waitersMax[p];
    win.oldestWaitMs[j] = c.oldestWaitMsMax[p];
    win.longestHoldMs[j] = c.longestHoldMsMax[p];
    const perSec = 1000 / c.coveredMs[p];
    for (const k of COUNTERS) win[RATE_COLUMN[k]][j] = c[k][p] * perSec;
    const q = p * QUANTILES.length;
    // An empty histogram has every percentile 0, as DenseHist reports.
    const waitEmpty = isEmptySlot(c.waitHist, p * this.histBytes);
    const waitMax = c.waitMax[p];
    win.waitCount[j] = c.waitCount[p];
    win.waitP50[j] = waitEmpty ? 0 : bucketValueMs(c.waitQ[q], waitMax);
    win.waitP90[j] = waitEmpty ? 0 : bucketValueMs(c.waitQ[q + 1], waitMax);
    win.waitP99[j] = waitEmpty ? 0 : bucketValueMs(c.waitQ[q + 2], waitMax);
    win.waitMax[j] = waitMax;
    const holdEmpty = isEmptySlot(c.holdHist, p * this.histBytes);
    const holdMax = c.holdMax[p];
    win.holdCount[j] = c.holdCount[p];
    win.holdP50[j] = holdEmpty ? 0 : bucketValueMs(c.holdQ[q], holdMax);
    win.holdP90[j] = holdEmpty ? 0 : bucketValueMs(c.holdQ[q + 1], holdMax);
    win.holdP99[j] = holdEmpty ? 0 : bucketValueMs(c.holdQ[q + 2], holdMax);
    win.holdMax[j] = holdMax;
  }

  addHist(i: number, kind: HistKind, acc: HistAccumulator): void {
    if (i === this.ring.length) {
      acc.addAccumulator(kind === "wait" ? this.open.wait : this.open.hold);
      return;
    }
    const c = this.ring.cols;
    const p = this.ring.phys(i);
    if (kind === "wait") acc.addPacked(c.waitHist, p * this.histBytes, this.histBytes, c.waitCount[p], c.waitMax[p]);
    else acc.addPacked(c.holdHist, p * this.histBytes, this.histBytes, c.holdCount[p], c.holdMax[p]);
  }

  bytes(): number {
    return this.ring.bytes() + 2 * HistAccumulator.BYTES;
  }

  private close(): void {
    const o = this.open;
    const p = this.ring.append();
    const c = this.ring.cols;
    c.t[p] = o.start;
    c.coveredMs[p] = o.coveredMs;
    c.cap[p] = o.cap;
    c.inUseMean[p] = o.inUseArea / o.coveredMs;
    c.inUseMax[p] = o.inUseMax;
    c.availableMin[p] = o.availableMin;
    c.waitersMean[p] = o.waitersArea / o.coveredMs;
    c.waitersMax[p] = o.waitersMax;
    c.oldestWaitMsMax[p] = o.oldestWaitMsMax;
    c.longestHoldMsMax[p] = o.longestHoldMsMax;
    for (let i = 0; i < COUNTERS.length; i++) c[COUNTERS[i]][p] = o.counters[i];
    const q = p * QUANTILES.length;
    c.waitCount[p] = o.wait.count;
    c.waitMax[p] = o.wait.max;
    c.holdCount[p] = o.hold.count;
    c.holdMax[p] = o.hold.max;
    for (let i = 0; i < QUANTILES.length; i++) {
      c.waitQ[q + i] = storedBucket(o.wait.quantileBucket(QUANTILES[i]));
      c.holdQ[q + i] = storedBucket(o.hold.quantileBucket(QUANTILES[i]));
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
