// The 1s tier: one row per accepted sample, the last `maxPoints` of them (900 = 15 min at 1 s).
//
// Float32 for every value column: gauges and counts are integers, exact in Float32 up to 2^24
// (16.7 M permits, waiters or events in one interval); durations in ms keep a relative precision
// of 6e-8, far finer than the histogram's own 9 % buckets. Only `t` (epoch ms, 41 bits) needs Float64.
// Percentiles are the agent's own figures; the packed histograms are kept for merges (ranges, fleets).

import type { Sample, Summary } from "../protocol/types.js";
import { ColumnRing } from "./column-ring.js";
import {
  COUNTERS,
  GAUGES,
  RATE_COLUMN,
  type ColumnarWindow,
  type HistKind,
  type MutableWindow,
  type TierReader,
} from "./columnar-window.js";
import type { HistAccumulator } from "./hist-accumulator.js";
import { packSparse } from "./packed-hist.js";

const F32 = [Float32Array, 1] as const;

export function secondSchema(histBytes: number) {
  return {
    t: [Float64Array, 1],
    intervalMs: F32,
    cap: F32,
    inUse: F32,
    available: F32,
    waiters: F32,
    oldestWaitMs: F32,
    longestHoldMs: F32,
    acquired: F32,
    released: F32,
    timeouts: F32,
    rejections: F32,
    aborts: F32,
    doubleReleases: F32,
    leaseExpiries: F32,
    waitCount: F32,
    waitP50: F32,
    waitP90: F32,
    waitP99: F32,
    waitMax: F32,
    holdCount: F32,
    holdP50: F32,
    holdP90: F32,
    holdP99: F32,
    holdMax: F32,
    waitHist: [Uint8Array, histBytes],
    holdHist: [Uint8Array, histBytes],
  } as const;
}

type SecondSchema = ReturnType<typeof secondSchema>;

export class SecondTier implements TierReader {
  readonly tier = "1s";
  private readonly ring: ColumnRing<SecondSchema>;

  constructor(
    maxPoints: number,
    private readonly histBytes: number,
  ) {
    this.ring = new ColumnRing(secondSchema(histBytes), maxPoints);
  }

  get length(): number {
    return this.ring.length;
  }

  append(s: Sample, t: number, intervalMs: number): void {
    const p = this.ring.append();
    const c = this.ring.cols;
    c.t[p] = t;
    c.intervalMs[p] = intervalMs;
    c.cap[p] = s.cap;
    c.inUse[p] = s.inUse;
    c.available[p] = s.available;
    c.waiters[p] = s.waiters;
    c.oldestWaitMs[p] = s.oldestWaitMs;
    c.longestHoldMs[p] = s.longestHoldMs;
    c.acquired[p] = s.acquired;
    c.released[p] = s.released;
    c.timeouts[p] = s.timeouts;
    c.rejections[p] = s.rejections;
    c.aborts[p] = s.aborts;
    c.doubleReleases[p] = s.doubleReleases;
    c.leaseExpiries[p] = s.leaseExpiries;
    this.writeSummary(p, "wait", s.waitMs);
    this.writeSummary(p, "hold", s.holdMs);
  }

  range(fromT: number, toT: number): readonly [number, number] {
    return [this.ring.search(fromT, false), this.ring.search(toT, true)];
  }

  /** Whether the tier holds every sample from t on: it reaches back to t, or has dropped nothing yet. */
  covers(t: number): boolean {
    return this.ring.length > 0 && (!this.ring.wrapped || t >= this.ring.timeAt(0));
  }

  isProvisional(): boolean {
    return false;
  }

  writeRow(i: number, win: MutableWindow<ColumnarWindow>, j: number): void {
    const c = this.ring.cols;
    const p = this.ring.phys(i);
    win.t[j] = c.t[p];
    win.intervalMs[j] = c.intervalMs[p];
    for (const g of GAUGES) win[g][j] = c[g][p];
    win.inUseMax[j] = c.inUse[p];
    win.waitersMax[j] = c.waiters[p];
    const perSec = 1000 / c.intervalMs[p];
    for (const k of COUNTERS) win[RATE_COLUMN[k]][j] = c[k][p] * perSec;
    win.waitCount[j] = c.waitCount[p];
    win.waitP50[j] = c.waitP50[p];
    win.waitP90[j] = c.waitP90[p];
    win.waitP99[j] = c.waitP99[p];
    win.waitMax[j] = c.waitMax[p];
    win.holdCount[j] = c.holdCount[p];
    win.holdP50[j] = c.holdP50[p];
    win.holdP90[j] = c.holdP90[p];
    win.holdP99[j] = c.holdP99[p];
    win.holdMax[j] = c.holdMax[p];
  }

  addHist(i: number, kind: HistKind, acc: HistAccumulator): void {
    const c = this.ring.cols;
    const p = this.ring.phys(i);
    if (kind === "wait") acc.addPacked(c.waitHist, p * this.histBytes, this.histBytes, c.waitCount[p], c.waitMax[p]);
    else acc.addPacked(c.holdHist, p * this.histBytes, this.histBytes, c.holdCount[p], c.holdMax[p]);
  }

  bytes(): number {
    return this.ring.bytes();
  }

  private writeSummary(p: number, kind: HistKind, s: Summary): void {
    const c = this.ring.cols;
    if (kind === "wait") {
      c.waitCount[p] = s.count;
      c.waitP50[p] = s.p50;
      c.waitP90[p] = s.p90;
      c.waitP99[p] = s.p99;
      c.waitMax[p] = s.max;
      packSparse(s.hist, c.waitHist, p * this.histBytes, this.histBytes);
    } else {
      c.holdCount[p] = s.count;
      c.holdP50[p] = s.p50;
      c.holdP90[p] = s.p90;
      c.holdP99[p] = s.p99;
      c.holdMax[p] = s.max;
      packSparse(s.hist, c.holdHist, p * this.histBytes, this.histBytes);
    }
  }
}
