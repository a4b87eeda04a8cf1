// Shared by the detail view's readout (renderer) and the alert diagnosis (diagnose.ts, in the hub).
// Little's law on a semaphore: permits in use L = throughput λ × hold time W. Read the other
// way it tells a slow downstream from a too-tight N, which is the question a saturated
// semaphore raises:
//   - N permits held for W can drain at most N / W per second. If all N are busy and W has
//     grown well past its healthy value W0, the downstream got slow: the same N now drains
//     less, and raising N only piles more concurrent work on it (throughput stays put, W grows).
//   - If W is at its healthy value and all N are still busy with a queue, demand outruns N / W:
//     demand D needs N ≥ D × W.
//   - If fewer permits come back per second than L / W predicts, some permits are not cycling
//     at all (held far past the typical hold: a leak or stragglers).
// Pure: the caller measures, this decides. W here is a mean; readoutInputs estimates it.

export interface LittleInput {
  /** N, the permit count now. */
  cap: number;
  /** L: mean permits in use over the window. */
  inUse: number;
  /** Mean queue length over the window. */
  waiters: number;
  /** W: mean hold time over the window (ms); 0 or less when nothing was released. */
  holdMs: number;
  /** W0: the hold time when things were healthy (ms), null when unknown. */
  baselineHoldMs: number | null;
  /** μ: permits released per second over the window (the measured drain rate). */
  releasedPerSec: number;
  /** D: acquire attempts per second (granted + timed out + rejected): the demand. */
  attemptsPerSec: number;
}

export type LittleVerdict =
  | "no-data"
  | "idle"
  | "headroom"
  | "saturated"
  | "stuck-permits";

export interface LittleReadout {
  verdict: LittleVerdict;
  /** One line, for the readout's title. */
  headline: string;
  /** The reasoning with the numbers, a sentence or two. */
  detail: string;
  /** L / N. */
  utilization: number;
  /** L / W: what Little's law says should be released per second. */
  predictedPerSec: number | null;
  /** μ as measured. */
  measuredPerSec: number;
  /** N / W: the most N permits can drain at the current hold time. */
  capacityPerSec: number | null;
  /** N / W0: what N would drain at the healthy hold time. */
  healthyCapacityPerSec: number | null;
  /** W / W0. */
  holdInflation: number | null;
  /** L − μ × W, when permits are not cycling: how many look stuck. */
  stuckPermits: number | null;
}

/** μ below this share of L / W: permits are not coming back. */
export const STUCK_RATIO = 0.5;
/** L / N at or above this (or a queue) counts as saturated. */
export const SATURATED_UTILIZATION = 0.9;
/** Mean queue length from which the semaphore is saturated whatever L says. */
const QUEUED = 0.5;

const pos = (v: number): boolean => Number.isFinite(v) && v > 0;
const round1 = (v: number): string => (v >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10));
const rate = (v: number): string => `${round1(v)}/s`;
const ms = (v: number): string => (v >= 1000 ? `${round1(v / 1000)} s` : `${round1(v)} ms`);

export function littlesLaw(input: LittleInput): LittleReadout {
  const { cap: n, inUse: l, waiters, holdMs: w, releasedPerSec: mu, attemptsPerSec: demand } = input;
  const w0 = input.baselineHoldMs !== null && pos(input.baselineHoldMs) ? input.baselineHoldMs : null;
  const hasW = pos(w);
  const out: LittleReadout = {
    verdict: "no-data",
    headline: "",
    detail: "",
    utilization: n > 0 ? l / n : 0,
    predictedPerSec: hasW ? l / (w / 1000) : null,
    measuredPerSec: Math.max(0, mu),
    capacityPerSec: hasW && n > 0 ? n / (w / 1000) : null,
    healthyCapacityPerSec: w0 !== null && n > 0 ? n / (w0 / 1000) : null,
    holdInflation: hasW && w0 !== null ? w / w0 : null,
    stuckPermits: null,
  };
  const saturated = out.utilization >= SATURATED_UTILIZATION || waiters >= QUEUED;

  if (!hasW) {
    if (l >= 1 && mu <= 0) {
      out.verdict = "stuck-permits";
      out.stuckPermits = l;
      out.headline = "Permits held, none released";
      out.detail = `${round1(l)} of ${n} permits are held and none came back in this window: work longer than the window, or a leak.`;
    } else if (l < 0.05 && demand <= 0) {
      out.verdict = "idle";
      out.headline = "Idle";
      out.detail = "No permits held and no acquires in this window.";
    } else {
      out.headline = "Not enough data";
      out.detail = "No releases with a measured hold time in this window.";
    }
    return out;
  }

  const predicted = out.predictedPerSec ?? 0;
  if (l >= 1 && mu < STUCK_RATIO * predicted) {
    out.verdict = "stuck-permits";
    out.stuckPermits = Math.max(0, l - (mu * w) / 1000);
    out.headline = "Some permits are not cycling";
    out.detail =
      `${round1(l)} in use ÷ ${ms(w)} hold predicts ${rate(predicted)}, but only ${rate(mu)} come back: ` +
      `about ${round1(out.stuckPermits)} permits are held far longer than the typical hold (a leak or stragglers).`;
    return out;
  }

  if (!saturated) {
    out.verdict = l < 0.05 && demand <= 0 ? "idle" : "headroom";
    out.headline = out.verdict === "idle" ? "Idle" : "N has headroom";
    out.detail =
      `${round1(l)} of ${n} in use: ${n} permits at ${ms(w)} could drain ${rate(out.capacityPerSec ?? 0)}; ` +
      `demand is ${rate(demand)}.`;
    return out;
  }

  // Busy: naming the cause (slow downstream, too tight an N, a rate problem) and the N to raise
  // it to is diagnose()'s alone, so this panel, the alert and its diagnosis never disagree.
  out.verdict = "saturated";
  out.headline = "All permits busy";
  out.detail =
    `${round1(l)} of ${n} in use, ${round1(waiters)} waiting: ${n} permits at ${ms(w)} drain at most ` +
    `${rate(out.capacityPerSec ?? 0)}; demand is ${rate(demand)}.` +
    (out.holdInflation !== null ? ` Holds are ${round1(out.holdInflation)}× their healthy ${ms(w0 ?? 0)}.` : "");
  return out;
}

/**
 * Mean of a log-normal duration from its median and p90: hold times are skewed, and Little's law
 * needs the mean, which the wire does not carry. Falls back to the median when the spread is
 * unknown, and never exceeds the p99 when given (a heavy tail would blow the estimate up).
 */
export function meanFromQuantiles(p50: number, p90: number, p99?: number): number {
  if (!pos(p50)) return 0;
  if (!pos(p90) || p90 <= p50) return p50;
  const sigma = Math.log(p90 / p50) / 1.2815515655446004; // z(0.9)
  const mean = p50 * Math.exp((sigma * sigma) / 2);
  return p99 !== undefined && pos(p99) ? Math.min(mean, p99) : mean;
}

/** The columns readoutInputs reads (all aligned on t; null rows are gaps). */
export interface ReadoutColumns {
  cap: ArrayLike<number | null>;
  inUse: ArrayLike<number | null>;
  waiters: ArrayLike<number | null>;
  releasedPerSec: ArrayLike<number | null>;
  acquiredPerSec: ArrayLike<number | null>;
  timeoutsPerSec: ArrayLike<number | null>;
  rejectionsPerSec: ArrayLike<number | null>;
  holdCount: ArrayLike<number | null>;
  holdP50: ArrayLike<number | null>;
  holdP90: ArrayLike<number | null>;
  holdP99: ArrayLike<number | null>;
}

/**
 * Little's-law inputs from rows [from, to) of a window: means of the gauges and rates, W as the
 * release-weighted mean of each row's estimated mean hold, and W0 from `baseline` rows (usually
 * the whole loaded window) as the 10th percentile of the per-row hold medians: the hold time
 * the downstream manages on a good stretch.
 */
export function readoutInputs(c: ReadoutColumns, from: number, to: number, baselineFrom = 0): LittleInput | null {
  let rows = 0;
  let inUse = 0;
  let waiters = 0;
  let released = 0;
  let attempts = 0;
  let cap = 0;
  let holdWeight = 0;
  let holdSum = 0;
  for (let i = Math.max(0, from); i < to; i++) {
    const u = c.inUse[i];
    if (u === null || u === undefined) continue;
    rows++;
    inUse += u;
    waiters += c.waiters[i] ?? 0;
    released += c.releasedPerSec[i] ?? 0;
    attempts += (c.acquiredPerSec[i] ?? 0) + (c.timeoutsPerSec[i] ?? 0) + (c.rejectionsPerSec[i] ?? 0);
    cap = c.cap[i] ?? cap;
    const count = c.holdCount[i] ?? 0;
    if (count > 0) {
      holdWeight += count;
      holdSum += count * meanFromQuantiles(c.holdP50[i] ?? 0, c.holdP90[i] ?? 0, c.holdP99[i] ?? undefined);
    }
  }
  if (rows === 0) return null;
  const medians: number[] = [];
  for (let i = Math.max(0, baselineFrom); i < to; i++) {
    const count = c.holdCount[i];
    const p50 = c.holdP50[i];
    if (count !== null && count !== undefined && count > 0 && p50 !== null && p50 !== undefined && p50 > 0) medians.push(p50);
  }
  let baseline: number | null = null;
  if (medians.length >= 5) {
    medians.sort((a, b) => a - b);
    const p50AtBaseline = medians[Math.floor(0.1 * (medians.length - 1))];
    // Scale the baseline median to a mean with the same skew as the current window.
    const skew = holdWeight > 0 ? holdSum / holdWeight / Math.max(1e-9, weightedMedian(c, from, to)) : 1;
    baseline = p50AtBaseline * (Number.isFinite(skew) && skew > 0 ? skew : 1);
  }
  return {
    cap,
    inUse: inUse / rows,
    waiters: waiters / rows,
    holdMs: holdWeight > 0 ? holdSum / holdWeight : 0,
    baselineHoldMs: baseline,
    releasedPerSec: released / rows,
    attemptsPerSec: attempts / rows,
  };
}

function weightedMedian(c: ReadoutColumns, from: number, to: number): number {
  let w = 0;
  let s = 0;
  for (let i = Math.max(0, from); i < to; i++) {
    const count = c.holdCount[i] ?? 0;
    const p50 = c.holdP50[i] ?? 0;
    if (count > 0 && p50 > 0) {
      w += count;
      s += count * p50;
    }
  }
  return w > 0 ? s / w : 0;
}
