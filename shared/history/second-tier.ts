// The 1s tier: one row per accepted sample, the last `maxPoints` of them (900 = 15 min at 1 s).
//
// Float32 for every value column: gauges and counts are integers, exact in Float32 up to 2^24
// (16.7 M permits, waiters or events in one interval); durations in ms keep a relative precision
// of 6e-8, far finer than the histogram's own 9 % buckets. Only `t` (epoch ms, 41 bits) needs Float64.
// Percentiles are the agent's own figures; the packed histograms are kept for merges (ranges, fleets).

import { SAMPLE_COUNTERS, type SampleCounter } from "../protocol/sample-layout.js";
import type { Sample } from "../protocol/types.js";
import { ColumnRing, type RowPool } from "./column-ring.js";
import {
  perSecond,
  RATE_COLUMN,
  WINDOW_COLUMNS,
  type RateColumn,
  type WindowColumn,
  type ColumnarWindow,
  type HistKind,
  type MutableWindow,
  type TierReader,
} from "./columnar-window.js";
import type { HistAccumulator } from "./hist-accumulator.js";
import { packSparse } from "./packed-hist.js";

/** Window columns a 1 s row does not store: its time (a column of its own) and the max of one sample (its gauge). */
const NOT_STORED = ["t", "inUseMax", "waitersMax"] as const satisfies readonly WindowColumn[];
const COUNT_OF_RATE = new Map<WindowColumn, SampleCounter>(SAMPLE_COUNTERS.map((c) => [RATE_COLUMN[c], c]));
type ValueName = Exclude<WindowColumn, (typeof NOT_STORED)[number] | RateColumn> | SampleCounter;

/**
 * The Float32 values of a row, stored row-major (one stride-VALUES.length column): the window's
 * columns in their order, a rate kept as its count. A sample's row is one run of consecutive
 * writes into one array, where 24 separate columns cost 24 column loads and 24 scattered stores.
 */
const VALUES = WINDOW_COLUMNS.filter((c) => !(NOT_STORED as readonly WindowColumn[]).includes(c)).map((c) => COUNT_OF_RATE.get(c) ?? c) as ValueName[];
const STRIDE = VALUES.length;
const AT = Object.fromEntries(VALUES.map((name, i) => [name, i])) as Record<ValueName, number>;
// Each value's index in a row, as plain numbers, for what writes a row (append) and reads rows
// (writeRows): both follow VALUES whatever its order.
const { intervalMs: INTERVAL, cap: CAP, inUse: IN_USE, available: AVAILABLE, waiters: WAITERS, oldestWaitMs: OLDEST_WAIT, longestHoldMs: LONGEST_HOLD } = AT;
const { acquired: ACQUIRED, released: RELEASED, timeouts: TIMEOUTS, rejections: REJECTIONS, aborts: ABORTS, doubleReleases: DOUBLE_RELEASES, leaseExpiries: LEASE_EXPIRIES } = AT;
const { waitCount: WAIT_COUNT, waitP50: WAIT_P50, waitP90: WAIT_P90, waitP99: WAIT_P99, waitMax: WAIT_MAX } = AT;
const { holdCount: HOLD_COUNT, holdP50: HOLD_P50, holdP90: HOLD_P90, holdP99: HOLD_P99, holdMax: HOLD_MAX } = AT;

export function secondSchema(histBytes: number) {
  return {
    t: [Float64Array, 1],
    v: [Float32Array, STRIDE],
    // Both packed histograms of a row side by side (wait, then hold): one place a sample writes, not two.
    hists: [Uint8Array, 2 * histBytes],
  } as const;
}

export type SecondSchema = ReturnType<typeof secondSchema>;

/** Rows per chunk the 1 s tier aims at (a minute at 1 s samples; 900 rows come in 15 chunks of 60). */
export const SECOND_CHUNK_ROWS = 64;

export class SecondTier implements TierReader {
  readonly tier = "1s";
  private readonly ring: ColumnRing<SecondSchema>;

  /** `pool`: chunks of secondSchema(histBytes) rows. */
  constructor(
    pool: RowPool<SecondSchema>,
    maxPoints: number,
    private readonly histBytes: number,
    spread = 0,
  ) {
    this.ring = new ColumnRing(pool, maxPoints, spread);
  }

  get length(): number {
    return this.ring.length;
  }

  append(s: Sample, t: number, intervalMs: number): void {
    const p = this.ring.append();
    const c = this.ring.at;
    c.t[p] = t;
    const v = c.v;
    const o = p * STRIDE;
    v[o + INTERVAL] = intervalMs;
    v[o + CAP] = s.cap;
    v[o + IN_USE] = s.inUse;
    v[o + AVAILABLE] = s.available;
    v[o + WAITERS] = s.waiters;
    v[o + OLDEST_WAIT] = s.oldestWaitMs;
    v[o + LONGEST_HOLD] = s.longestHoldMs;
    v[o + ACQUIRED] = s.acquired;
    v[o + RELEASED] = s.released;
    v[o + TIMEOUTS] = s.timeouts;
    v[o + REJECTIONS] = s.rejections;
    v[o + ABORTS] = s.aborts;
    v[o + DOUBLE_RELEASES] = s.doubleReleases;
    v[o + LEASE_EXPIRIES] = s.leaseExpiries;
    const w = s.waitMs;
    v[o + WAIT_COUNT] = w.count;
    v[o + WAIT_P50] = w.p50;
    v[o + WAIT_P90] = w.p90;
    v[o + WAIT_P99] = w.p99;
    v[o + WAIT_MAX] = w.max;
    const h = s.holdMs;
    v[o + HOLD_COUNT] = h.count;
    v[o + HOLD_P50] = h.p50;
    v[o + HOLD_P90] = h.p90;
    v[o + HOLD_P99] = h.p99;
    v[o + HOLD_MAX] = h.max;
    const hb = this.histBytes;
    packSparse(w.hist, c.hists, this.histAt(p, "wait"), hb);
    packSparse(h.hist, c.hists, this.histAt(p, "hold"), hb);
  }

  /** Reads the newest row's t and its last value and histogram byte, next to where append() writes (see HistoryStore.warm). */
  warm(): number {
    if (this.ring.length === 0) return 0;
    const p = this.ring.newest();
    const c = this.ring.at;
    return c.t[p] + c.v[p * STRIDE + STRIDE - 1] + c.hists[this.histAt(p, "hold") + this.histBytes - 1];
  }

  /** t of the newest row; -Infinity while there is none. */
  newestT(): number {
    return this.ring.length === 0 ? -Infinity : this.ring.newestTime();
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

  writeRows(lo: number, n: number, win: MutableWindow<ColumnarWindow>): void {
    // Every column named once, outside the loop, and rows read a chunk at a time: diagnoses read
    // an alerted semaphore's rows every 5–30 s (up to 180 when an incident begins), and a lookup
    // by name and a ring locate per row would cost more than the copy itself.
    const { t: wt, intervalMs: wInterval, cap, inUse, inUseMax, available, waiters, waitersMax, oldestWaitMs, longestHoldMs } = win;
    const { acquiredPerSec, releasedPerSec, timeoutsPerSec, rejectionsPerSec, abortsPerSec, doubleReleasesPerSec, leaseExpiriesPerSec } = win;
    const { waitCount, waitP50, waitP90, waitP99, waitMax, holdCount, holdP50, holdP90, holdP99, holdMax } = win;
    const ring = this.ring;
    for (let j = 0; j < n; ) {
      const first = ring.locate(lo + j);
      const end = j + ring.contiguous(lo + j, n - j);
      const { t, v } = ring.at;
      for (let o = first * STRIDE, p = first; j < end; j++, p++, o += STRIDE) {
        wt[j] = t[p];
        const intervalMs = v[o + INTERVAL];
        wInterval[j] = intervalMs;
        cap[j] = v[o + CAP];
        inUse[j] = inUseMax[j] = v[o + IN_USE];
        available[j] = v[o + AVAILABLE];
        waiters[j] = waitersMax[j] = v[o + WAITERS];
        oldestWaitMs[j] = v[o + OLDEST_WAIT];
        longestHoldMs[j] = v[o + LONGEST_HOLD];
        const perSec = perSecond(intervalMs);
        acquiredPerSec[j] = v[o + ACQUIRED] * perSec;
        releasedPerSec[j] = v[o + RELEASED] * perSec;
        timeoutsPerSec[j] = v[o + TIMEOUTS] * perSec;
        rejectionsPerSec[j] = v[o + REJECTIONS] * perSec;
        abortsPerSec[j] = v[o + ABORTS] * perSec;
        doubleReleasesPerSec[j] = v[o + DOUBLE_RELEASES] * perSec;
        leaseExpiriesPerSec[j] = v[o + LEASE_EXPIRIES] * perSec;
        waitCount[j] = v[o + WAIT_COUNT];
        waitP50[j] = v[o + WAIT_P50];
        waitP90[j] = v[o + WAIT_P90];
        waitP99[j] = v[o + WAIT_P99];
        waitMax[j] = v[o + WAIT_MAX];
        holdCount[j] = v[o + HOLD_COUNT];
        holdP50[j] = v[o + HOLD_P50];
        holdP90[j] = v[o + HOLD_P90];
        holdP99[j] = v[o + HOLD_P99];
        holdMax[j] = v[o + HOLD_MAX];
      }
    }
  }

  addHist(i: number, kind: HistKind, acc: HistAccumulator): void {
    const p = this.ring.locate(i);
    const c = this.ring.at;
    const o = p * STRIDE;
    const wait = kind === "wait";
    acc.addPacked(c.hists, this.histAt(p, kind), this.histBytes, c.v[o + (wait ? WAIT_COUNT : HOLD_COUNT)], c.v[o + (wait ? WAIT_MAX : HOLD_MAX)]);
  }

  /** Where physical row p's packed histogram of `kind` starts in `hists`: the wait one, then the hold one. */
  private histAt(p: number, kind: HistKind): number {
    return (2 * p + (kind === "wait" ? 0 : 1)) * this.histBytes;
  }

  bytes(): number {
    return this.ring.bytes();
  }

  /** Gives the tier's storage back to its pool (see ColumnRing.release). */
  release(): void {
    this.ring.release();
  }
}
