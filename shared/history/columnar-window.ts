// What a chart gets out of the history: one Float64Array per series over a time range, all the
// same length and aligned on `t`, plus the uPlot export that turns gaps into nulls.

import { SAMPLE_COUNTERS, type SampleCounter } from "../protocol/sample-layout.js";
import type { Sample } from "../protocol/types.js";
import type { HistAccumulator } from "./hist-accumulator.js";

export type Tier = "1s" | "1m";
export type HistKind = "wait" | "hold";

export const MINUTE_MS = 60_000;

/**
 * Adds a sample's counters into `sums` from index `at`, in SAMPLE_COUNTERS order: the hub's running
 * totals and the open minute's sums. Written out: a keyed read per field costs more than the rest
 * of a sample's store (test/shared/sample-layout.test.ts walks every counter).
 */
export function addCounters(sums: Float64Array, s: Sample, at = 0): void {
  sums[at] += s.acquired;
  sums[at + 1] += s.released;
  sums[at + 2] += s.timeouts;
  sums[at + 3] += s.rejections;
  sums[at + 4] += s.aborts;
  sums[at + 5] += s.doubleReleases;
  sums[at + 6] += s.leaseExpiries;
}

/**
 * A time range of one tier (or of a fleet), column by column: fresh arrays owned by the caller,
 * never views of the ring (a ring overwrites in place, and the values are computed anyway: rates,
 * percentiles). Hand `t` and any columns to uPlot's `setData` with `ms: 1` in its options (t is
 * epoch ms), or go through `toUplotData` to show gaps.
 *
 * In the 1s tier each point is one sample, so `inUse` and `inUseMax` hold the same values (as do
 * `waiters` and `waitersMax`). In the 1m tier each point is one minute of sample time, at the
 * minute's start; the comments say which roll-up each column holds.
 */
export interface ColumnarWindow {
  readonly tier: Tier;
  readonly length: number;
  /** The last point is the still-open minute (1m tier only): provisional until the minute closes. */
  readonly partialLast: boolean;
  /** Epoch ms, ascending: the sample's t (1s), the minute's start (1m). */
  readonly t: Float64Array;
  /** Time one point stands for: the sample's interval (1s), 60 000 (1m). Gaps are judged against it. */
  readonly intervalMs: Float64Array;
  /** 1m: the last sample's. */
  readonly cap: Float64Array;
  /** 1m: time-weighted mean. */
  readonly inUse: Float64Array;
  readonly inUseMax: Float64Array;
  /** 1m: the minimum (the tightest moment). */
  readonly available: Float64Array;
  /** 1m: time-weighted mean. */
  readonly waiters: Float64Array;
  readonly waitersMax: Float64Array;
  /** 1m: max. */
  readonly oldestWaitMs: Float64Array;
  /** 1m: max. */
  readonly longestHoldMs: Float64Array;
  /** Per second: count / (intervalMs / 1000); 1m: minute sum / seconds covered by its samples. */
  readonly acquiredPerSec: Float64Array;
  readonly releasedPerSec: Float64Array;
  readonly timeoutsPerSec: Float64Array;
  readonly rejectionsPerSec: Float64Array;
  readonly abortsPerSec: Float64Array;
  readonly doubleReleasesPerSec: Float64Array;
  readonly leaseExpiriesPerSec: Float64Array;
  /** Grants in the point. Percentiles: the agent's own (1s); from the minute's merged histogram (1m). */
  readonly waitCount: Float64Array;
  readonly waitP50: Float64Array;
  readonly waitP90: Float64Array;
  readonly waitP99: Float64Array;
  readonly waitMax: Float64Array;
  /** Releases in the point; percentiles as for wait. */
  readonly holdCount: Float64Array;
  readonly holdP50: Float64Array;
  readonly holdP90: Float64Array;
  readonly holdP99: Float64Array;
  readonly holdMax: Float64Array;
}

/** Names of the Float64Array columns of a window type. */
export type NumericColumn<W> = { [K in keyof W]-?: W[K] extends Float64Array ? K : never }[keyof W];
export type WindowColumn = NumericColumn<ColumnarWindow>;

export const WINDOW_COLUMNS = [
  "t", "intervalMs", "cap", "inUse", "inUseMax", "available", "waiters", "waitersMax",
  "oldestWaitMs", "longestHoldMs", "acquiredPerSec", "releasedPerSec", "timeoutsPerSec",
  "rejectionsPerSec", "abortsPerSec", "doubleReleasesPerSec", "leaseExpiriesPerSec",
  "waitCount", "waitP50", "waitP90", "waitP99", "waitMax",
  "holdCount", "holdP50", "holdP90", "holdP99", "holdMax",
] as const satisfies readonly WindowColumn[];
// Compile-time check that the list names every column of the interface.
const _allColumnsListed: [Exclude<WindowColumn, (typeof WINDOW_COLUMNS)[number]>] extends [never] ? true : false = true;

/** The window column of a counter's per-second rate. */
export type RateColumn<C extends SampleCounter = SampleCounter> = `${C}PerSec`;
export const RATE_COLUMN = Object.fromEntries(SAMPLE_COUNTERS.map((c) => [c, `${c}PerSec`])) as { readonly [C in SampleCounter]: RateColumn<C> };
// Compile-time check that every counter has its rate column in the interface.
const _everyRateIsAColumn: [Exclude<RateColumn, WindowColumn>] extends [never] ? true : false = true;

/** What a count over an interval of `intervalMs` is multiplied by to read as a per-second rate: every rate column's one formula. */
export function perSecond(intervalMs: number): number {
  return 1000 / intervalMs;
}

/** The numbers of a sample's summaries a row keeps (histograms aside). */
type SummaryNumbers = Pick<Sample["waitMs"], "count" | "p50" | "p90" | "p99" | "max">;
type SampleNumbers = Omit<Sample, "waitMs" | "holdMs"> & { readonly waitMs: SummaryNumbers; readonly holdMs: SummaryNumbers };

/** One sample as a 1 s row of every window column but `t`: what the 1 s tier reads back for it (there in Float32). */
export function sampleRow(s: SampleNumbers, intervalMs: number): Record<Exclude<WindowColumn, "t">, number> {
  const k = perSecond(intervalMs);
  return {
    intervalMs,
    cap: s.cap,
    inUse: s.inUse,
    inUseMax: s.inUse,
    available: s.available,
    waiters: s.waiters,
    waitersMax: s.waiters,
    oldestWaitMs: s.oldestWaitMs,
    longestHoldMs: s.longestHoldMs,
    acquiredPerSec: s.acquired * k,
    releasedPerSec: s.released * k,
    timeoutsPerSec: s.timeouts * k,
    rejectionsPerSec: s.rejections * k,
    abortsPerSec: s.aborts * k,
    doubleReleasesPerSec: s.doubleReleases * k,
    leaseExpiriesPerSec: s.leaseExpiries * k,
    waitCount: s.waitMs.count,
    waitP50: s.waitMs.p50,
    waitP90: s.waitMs.p90,
    waitP99: s.waitMs.p99,
    waitMax: s.waitMs.max,
    holdCount: s.holdMs.count,
    holdP50: s.holdMs.p50,
    holdP90: s.holdMs.p90,
    holdP99: s.holdMs.p99,
    holdMax: s.holdMs.max,
  };
}

export type MutableWindow<W> = { -readonly [K in keyof W]: W[K] };

export function createWindow(tier: Tier, length: number, partialLast: boolean): MutableWindow<ColumnarWindow> {
  const w: Record<string, unknown> = { tier, length, partialLast };
  for (const name of WINDOW_COLUMNS) w[name] = new Float64Array(length);
  return w as unknown as MutableWindow<ColumnarWindow>;
}

/** Read access to one tier of one semaphore: what windows, summaries and fleet merges are built from. */
export interface TierReader {
  readonly tier: Tier;
  /** Logical rows [lo, hi) whose t lies in [fromT, toT] (both inclusive), oldest first. */
  range(fromT: number, toT: number): readonly [lo: number, hi: number];
  /**
   * Writes logical rows [lo, lo + n) into rows [0, n) of a window. A range at a time, so the
   * window's columns are looked up once per read, not once per row (a diagnosis reads 180 rows of
   * 27 columns every 5 s for each alert it watches).
   */
  writeRows(lo: number, n: number, win: MutableWindow<ColumnarWindow>): void;
  /** Adds row i's histogram of `kind` (with its count and max) into `acc`. */
  addHist(i: number, kind: HistKind, acc: HistAccumulator): void;
  /** Row i is the still-open minute. */
  isProvisional(i: number): boolean;
}

export function readWindow(reader: TierReader, fromT: number, toT: number): ColumnarWindow {
  return readWindowInto(reader, fromT, toT, (n) => createWindow(reader.tier, n, false));
}

/**
 * readWindow() into the window `storage(n)` returns for its n rows (columns at least n long: a
 * caller may hand the same one back each time, see WindowScratch); sets its tier, length and
 * partialLast.
 */
export function readWindowInto(
  reader: TierReader,
  fromT: number,
  toT: number,
  storage: (rows: number) => MutableWindow<ColumnarWindow>,
): ColumnarWindow {
  const [lo, hi] = fromT <= toT ? reader.range(fromT, toT) : [0, 0];
  const n = hi - lo;
  const win = storage(n);
  win.tier = reader.tier;
  win.length = n;
  win.partialLast = n > 0 && reader.isProvisional(hi - 1);
  if (n > 0) reader.writeRows(lo, n, win);
  return win;
}

/** uPlot's AlignedData with gaps: x values, then one array per series. */
export type UplotData = [xs: number[], ...ys: (number | null)[][]];

/**
 * The window as uPlot data, with a null row wherever two consecutive points are more than
 * 2 × intervalMs apart (the later point's interval), so uPlot breaks the line there instead of
 * drawing across missing data. The null row sits halfway between the two points.
 */
export function toUplotData<W extends ColumnarWindow>(win: W, series: readonly NumericColumn<W>[]): UplotData {
  const t = win.t;
  const iv = win.intervalMs;
  const cols = series.map((name) => win[name] as unknown as Float64Array);
  const xs: number[] = [];
  const ys: (number | null)[][] = cols.map(() => []);
  for (let i = 0; i < win.length; i++) {
    if (i > 0 && t[i] - t[i - 1] > 2 * iv[i]) {
      xs.push((t[i - 1] + t[i]) / 2);
      for (const y of ys) y.push(null);
    }
    xs.push(t[i]);
    for (let k = 0; k < cols.length; k++) ys[k].push(cols[k][i]);
  }
  return [xs, ...ys];
}
