// Naming the fix under a convoy or starvation alert, from the semaphore's recorded numbers (the
// 1 s history up to the alert). Three causes look alike on the dashboard (all permits busy, a
// queue, long waits) and want different fixes:
//
//   slow_downstream   holds got longer while arrivals did not grow: the dependency slowed down
//                     by itself. A bigger N only piles more concurrent work on it.
//   cap_too_tight     holds stayed at their healthy length, every permit is busy and waits rose:
//                     demand outruns N / W. Little's law gives the N the arrivals need:
//                     N ≈ arrival rate × healthy mean hold, plus headroom.
//   rate_limit_needed holds grew along with the load (arrivals rose, throughput did not follow):
//                     the downstream serves a fixed rate however many run at once, so no N helps.
//                     Arrivals must be metered: a rate limiter (token bucket) is the tool.
//   cap_lowered       N itself fell (an adaptive limit cut on rising latency, a replica's share
//                     of a budget shrunk, a resize) while arrivals did not rise: the limit, not
//                     the demand, made the queue. Named with the limit's own reason.
//
// Pure, and a function of the numbers alone, so a replay computes the same diagnosis.
import type { SampleLimit, SampleShare } from "../protocol/types.js";
import { meanFromQuantiles } from "./littles-law.js";

export type DiagnosisCause = "slow_downstream" | "cap_too_tight" | "rate_limit_needed" | "cap_lowered" | "inconclusive";

/** What the hub knows of the semaphore's cap besides its history, to name why it fell. */
export interface DiagnosisContext {
  /** Its adaptive limit's changes, oldest first (SemaphoreTracker.limitChanges). */
  readonly limitChanges?: readonly SampleLimit[];
  /** Its latest share of a budget split across replicas. */
  readonly share?: SampleShare;
}

/** The history columns read (aligned on t, ascending; as ColumnarWindow's 1 s tier). */
export interface DiagnosisSeries {
  readonly length: number;
  readonly t: ArrayLike<number>;
  readonly cap: ArrayLike<number>;
  readonly inUse: ArrayLike<number>;
  readonly waiters: ArrayLike<number>;
  readonly acquiredPerSec: ArrayLike<number>;
  readonly releasedPerSec: ArrayLike<number>;
  readonly timeoutsPerSec: ArrayLike<number>;
  readonly rejectionsPerSec: ArrayLike<number>;
  readonly abortsPerSec: ArrayLike<number>;
  readonly intervalMs: ArrayLike<number>;
  readonly holdCount: ArrayLike<number>;
  readonly holdP50: ArrayLike<number>;
  readonly holdP90: ArrayLike<number>;
  readonly holdP99: ArrayLike<number>;
  readonly waitCount: ArrayLike<number>;
  readonly waitP99: ArrayLike<number>;
}

export interface DiagnosisNumbers {
  cap: number;
  /** Mean inUse / cap over the incident. */
  utilization: number;
  /** Acquire attempts per second plus queue growth, over the incident and before it. */
  arrivalsPerSec: number;
  baselineArrivalsPerSec: number | null;
  /** Permits released per second. */
  throughputPerSec: number;
  baselineThroughputPerSec: number | null;
  /** Mean hold (ms), over the incident, and the healthy one before it. */
  holdMs: number;
  baselineHoldMs: number | null;
  holdRatio: number | null;
  arrivalsRatio: number | null;
  waitP99Ms: number;
  baselineWaitP99Ms: number | null;
  meanWaiters: number;
  /** cap_too_tight: the N the measured arrivals need (Little's law with headroom). */
  neededN: number | null;
  /** rate_limit_needed: what the downstream serves at most, as measured. */
  maxThroughputPerSec: number | null;
  /** cap_lowered: N before it fell (the highest in the rows read). */
  capBefore?: number;
  /** cap_lowered: what lowered it ("adaptive", "share" or "resize") and, for an adaptive limit, its reason. */
  capLoweredBy?: "adaptive" | "share" | "resize";
  capReason?: string;
}

export interface Diagnosis {
  cause: DiagnosisCause;
  /** One line, e.g. "N is too tight for the arrival rate: raise it to about 17". */
  headline: string;
  /** The reasoning with the numbers. */
  detail: string;
  /** What to do. */
  fix: string;
  numbers: DiagnosisNumbers;
  /** Sample time of the rows read: the incident and the baseline before it. */
  incident: { from: number; to: number; samples: number };
  baseline: { from: number; to: number; samples: number } | null;
}

/** Hold at or above this multiple of the healthy hold: holds "rose". */
export const HOLD_ROSE = 1.5;
/** Arrivals at or above this multiple of the baseline's: the load "rose". */
export const ARRIVALS_ROSE = 1.3;
/** Headroom on Little's-law N: the mean is not the peak. */
export const N_HEADROOM = 1.25;
/** cap_lowered: N fell by at least this share of its earlier value (and at least 1). */
export const CAP_FELL = 0.1;
/** Mean inUse / cap from which the semaphore counts as fully used. */
const FULL = 0.9;
/** Rows of baseline needed to call anything "healthy". */
const MIN_BASELINE_ROWS = 3;
/** The incident reads at most this many of the last rows (what the alert window saw, and a bit). */
const MAX_INCIDENT_ROWS = 15;
/** The baseline reads at most this many rows, those just before the busy run began. */
const MAX_BASELINE_ROWS = 120;

/** Sums over a stretch of rows (the incident, the baseline); kept in a DiagnosisAnchor for the baseline. */
export interface RowStats {
  rows: number;
  from: number;
  to: number;
  inUse: number;
  cap: number;
  waiters: number;
  attempts: number;
  released: number;
  growthPerSec: number;
  holdMs: number;
  waitP99: number;
}

function stats(s: DiagnosisSeries, from: number, to: number): RowStats {
  let rows = 0;
  let inUse = 0;
  let waiters = 0;
  let attempts = 0;
  let released = 0;
  let holdW = 0;
  let holdSum = 0;
  let waitW = 0;
  let waitSum = 0;
  let cap = 0;
  for (let i = from; i < to; i++) {
    rows++;
    inUse += s.inUse[i];
    waiters += s.waiters[i];
    cap = s.cap[i];
    attempts += s.acquiredPerSec[i] + s.timeoutsPerSec[i] + s.rejectionsPerSec[i] + s.abortsPerSec[i];
    released += s.releasedPerSec[i];
    const hc = s.holdCount[i];
    if (hc > 0) {
      holdW += hc;
      holdSum += hc * meanFromQuantiles(s.holdP50[i], s.holdP90[i], s.holdP99[i]);
    }
    const wc = s.waitCount[i];
    if (wc > 0) {
      waitW += wc;
      waitSum += wc * s.waitP99[i];
    }
  }
  // The queue's growth is demand that neither got a permit nor gave up yet.
  const span = to - from >= 2 ? (s.t[to - 1] - s.t[from]) / 1000 : 0;
  const growthPerSec = span > 0 ? (s.waiters[to - 1] - s.waiters[from]) / span : 0;
  return {
    rows,
    from: rows > 0 ? s.t[from] - s.intervalMs[from] : 0,
    to: rows > 0 ? s.t[to - 1] : 0,
    inUse: rows > 0 ? inUse / rows : 0,
    cap,
    waiters: rows > 0 ? waiters / rows : 0,
    attempts: rows > 0 ? attempts / rows : 0,
    released: rows > 0 ? released / rows : 0,
    growthPerSec,
    holdMs: holdW > 0 ? holdSum / holdW : 0,
    waitP99: waitW > 0 ? waitSum / waitW : 0,
  };
}

/**
 * Where the incident began: walking back from the last row, the run of rows that were busy (a
 * queue, or nearly every permit in use), however long. The rows before it are the baseline: how
 * the semaphore did before the run, not the run's own older rows (judged against those, a slow
 * downstream lasting two minutes looked healthy, and was called a too-tight N). `end` when the
 * last row is not busy.
 */
function runStart(s: DiagnosisSeries, end: number): number {
  let i = end;
  while (i > 0 && busy(s, i - 1)) i--;
  return i;
}

function busy(s: DiagnosisSeries, i: number): boolean {
  return s.waiters[i] > 0 || (s.cap[i] > 0 && s.inUse[i] >= FULL * s.cap[i]);
}

/**
 * What a diagnosis keeps so that the next one of the same semaphore, while its busy run lasts,
 * reads only the rows since (resumeDiagnosis): the run's baseline is computed once, from the rows
 * before the run, and kept however long the run lasts.
 */
export interface DiagnosisAnchor {
  /** t of the run's first row (of the first row read, when the run reached back past the rows read). */
  readonly runFromT: number;
  /** t of the first row the incident's numbers came from: a resumed read starts there. */
  readonly incidentFromT: number;
  /** t of the last row read: the run was busy through it. */
  readonly checkedT: number;
  /** The rows before the run, summed; null when there were too few (or none were read). */
  readonly baseline: RowStats | null;
  /** The cap at checkedT: a resumed read whose rows show another one diagnoses afresh. */
  readonly cap: number;
  /** Where N fell within the rows read, if it did (findCut). */
  readonly cut: CapCut | null;
}

/** N fell within the rows read: from `fromCap` (their highest) at `t`, with the rows before it. */
export interface CapCut {
  readonly fromCap: number;
  /** t of the first row with the lower cap. */
  readonly t: number;
  /** The rows just before it, summed (their arrivals: the demand N served); null with too few. */
  readonly before: RowStats | null;
}

/** Where the cap last came down from the highest it had in rows [0, end), if it is lower at the end. */
function findCut(s: DiagnosisSeries, end: number): CapCut | null {
  let peak = 0;
  let lastPeak = -1;
  for (let i = 0; i < end; i++) {
    if (s.cap[i] >= peak) {
      peak = s.cap[i];
      lastPeak = i;
    }
  }
  if (lastPeak < 0 || lastPeak === end - 1 || s.cap[end - 1] >= peak) return null;
  const at = lastPeak + 1;
  const from = Math.max(0, at - MAX_BASELINE_ROWS);
  return { fromCap: peak, t: s.t[at], before: at - from >= MIN_BASELINE_ROWS ? stats(s, from, at) : null };
}

export interface AnchoredDiagnosis {
  readonly diagnosis: Diagnosis;
  /** Null when the last row was not busy: there is no run to resume. */
  readonly anchor: DiagnosisAnchor | null;
}

function verdict(inc: RowStats, base: RowStats | null, numbers: DiagnosisNumbers, cause: DiagnosisCause, headline: string, detail: string, fix: string): Diagnosis {
  return {
    cause,
    headline,
    detail,
    fix,
    numbers,
    incident: { from: inc.from, to: inc.to, samples: inc.rows },
    baseline: base === null ? null : { from: base.from, to: base.to, samples: base.rows },
  };
}

const r1 = (v: number): number => Math.round(v * 10) / 10;
const fmtRate = (v: number): string => `${v >= 100 ? Math.round(v) : r1(v)}/s`;
const fmtMs = (v: number): string => (v >= 1000 ? `${r1(v / 1000)} s` : `${v >= 100 ? Math.round(v) : r1(v)} ms`);

/**
 * Diagnoses the semaphore from its 1 s history, the last row being the alert's moment. Returns
 * null when there is nothing to read (no rows).
 */
export function diagnose(s: DiagnosisSeries, ctx?: DiagnosisContext): Diagnosis | null {
  return diagnoseAnchored(s, ctx)?.diagnosis ?? null;
}

/** diagnose(), with the anchor a later diagnosis of the same semaphore can resume from. */
export function diagnoseAnchored(s: DiagnosisSeries, ctx?: DiagnosisContext): AnchoredDiagnosis | null {
  const end = s.length;
  if (end === 0) return null;
  const start = runStart(s, end);
  // A semaphore busy for the whole history (or all but a few rows) has no "before", and one not
  // busy now no run.
  const base = start === end || start < MIN_BASELINE_ROWS ? null : stats(s, Math.max(0, start - MAX_BASELINE_ROWS), start);
  return judgeRun(s, start === end ? 0 : start, base, start === end ? null : s.t[start], findCut(s, end), ctx);
}

/**
 * The diagnosis diagnose() would give of the whole history, from `s`, the newest rows of it (at
 * least those from `anchor.incidentFromT` on), and the anchor of an earlier diagnosis of the same
 * history: the same, number for number, while every row since that one is busy (the run goes on).
 * Undefined when it cannot tell (a row since was not busy, or `s` starts after the rows it needs):
 * diagnose the full rows again then.
 */
export function resumeDiagnosis(s: DiagnosisSeries, anchor: DiagnosisAnchor, ctx?: DiagnosisContext): AnchoredDiagnosis | undefined {
  const end = s.length;
  if (end === 0 || s.t[0] > anchor.incidentFromT) return undefined;
  let start = end;
  while (start > 0 && s.t[start - 1] > anchor.checkedT) {
    // A cap that moved since (an adaptive limit, a share) may have fallen: read the rows afresh.
    if (!busy(s, start - 1) || s.cap[start - 1] !== anchor.cap) return undefined;
    start--;
  }
  while (start > 0 && s.t[start - 1] >= anchor.runFromT) start--;
  // The run goes on, so it starts where it did, whether or not `s` reaches back that far.
  return judgeRun(s, start, anchor.baseline, anchor.runFromT, anchor.cut, ctx);
}

/**
 * The verdict on the rows from `start` to the end (their last MAX_INCIDENT_ROWS) against `base`;
 * `runFromT`: the busy run's first row (null: the last row is not busy, no run).
 */
function judgeRun(s: DiagnosisSeries, start: number, base: RowStats | null, runFromT: number | null, cut: CapCut | null, ctx: DiagnosisContext | undefined): AnchoredDiagnosis {
  const end = s.length;
  const incFrom = Math.max(start, end - MAX_INCIDENT_ROWS);
  const inc = stats(s, incFrom, end);
  const anchor = runFromT === null ? null : { runFromT, incidentFromT: s.t[incFrom], checkedT: s.t[end - 1], baseline: base, cap: s.cap[end - 1], cut };
  return { diagnosis: judge(inc, base, cut, ctx), anchor };
}

function judge(inc: RowStats, base: RowStats | null, cut: CapCut | null, ctx: DiagnosisContext | undefined): Diagnosis {
  const arrivals = Math.max(0, inc.attempts + Math.max(0, inc.growthPerSec));
  const baselineHold = base !== null && base.holdMs > 0 ? base.holdMs : null;
  const holdRatio = baselineHold !== null && inc.holdMs > 0 ? inc.holdMs / baselineHold : null;
  const baseArrivals = base !== null ? base.attempts + Math.max(0, base.growthPerSec) : null;
  const arrivalsRatio = baseArrivals !== null && baseArrivals > 0 ? arrivals / baseArrivals : null;
  const utilization = inc.cap > 0 ? inc.inUse / inc.cap : 0;
  const numbers: DiagnosisNumbers = {
    cap: inc.cap,
    utilization: Math.round(utilization * 100) / 100,
    arrivalsPerSec: r1(arrivals),
    baselineArrivalsPerSec: baseArrivals === null ? null : r1(baseArrivals),
    throughputPerSec: r1(inc.released),
    baselineThroughputPerSec: base === null ? null : r1(base.released),
    holdMs: r1(inc.holdMs),
    baselineHoldMs: baselineHold === null ? null : r1(baselineHold),
    holdRatio: holdRatio === null ? null : Math.round(holdRatio * 100) / 100,
    arrivalsRatio: arrivalsRatio === null ? null : Math.round(arrivalsRatio * 100) / 100,
    waitP99Ms: r1(inc.waitP99),
    baselineWaitP99Ms: base === null ? null : r1(base.waitP99),
    meanWaiters: r1(inc.waiters),
    neededN: null,
    maxThroughputPerSec: null,
  };

  if (inc.holdMs <= 0 || inc.cap <= 0) {
    return verdict(inc, base, numbers, "inconclusive", "Not enough data to name a cause", "No releases with a measured hold time during the incident.", "Look at the holders: permits may not be coming back at all.");
  }
  const rose = holdRatio !== null && holdRatio >= HOLD_ROSE;
  const loadRose = arrivalsRatio !== null && arrivalsRatio >= ARRIVALS_ROSE;
  // What the N permits would drain at the healthy hold time, against what they drain now.
  const healthyDrain = baselineHold !== null ? (inc.cap * 1000) / baselineHold : null;

  if (rose && loadRose && healthyDrain !== null && inc.released < 0.8 * healthyDrain) {
    numbers.maxThroughputPerSec = r1(inc.released);
    return verdict(
      inc,
      base,
      numbers,
      "rate_limit_needed",
      "A rate problem a semaphore cannot solve: use a rate limiter",
      `Arrivals rose ${numbers.arrivalsRatio}× (${fmtRate(baseArrivals ?? 0)} → ${fmtRate(arrivals)}) and holds grew with them ` +
        `(${fmtMs(baselineHold ?? 0)} → ${fmtMs(inc.holdMs)}, ${numbers.holdRatio}×): the downstream serves about ` +
        `${fmtRate(inc.released)} however many run at once, so more permits only lengthen each hold. ` +
        `No N drains ${fmtRate(arrivals)}.`,
      `Meter arrivals with a rate limiter (token bucket) at or below ~${fmtRate(inc.released)} and shed or defer the rest; ` +
        `keep N where it is (it still caps concurrency).`,
    );
  }
  const lowered = capLowered(inc, cut, arrivals, numbers, ctx);
  if (lowered !== null) return verdict(inc, base, numbers, "cap_lowered", lowered.headline, lowered.detail, lowered.fix);
  if (rose) {
    return verdict(
      inc,
      base,
      numbers,
      "slow_downstream",
      "Slow downstream: holds got longer, N is not the problem",
      `Holds take ${fmtMs(inc.holdMs)}, ${numbers.holdRatio}× the healthy ${fmtMs(baselineHold ?? 0)}` +
        (arrivalsRatio !== null ? `, while arrivals stayed at ${numbers.arrivalsRatio}× their earlier rate` : "") +
        `: the same ${inc.cap} permits now drain ${fmtRate(inc.released)} instead of ${fmtRate(healthyDrain ?? 0)}.`,
      "Look at the dependency behind the semaphore (its latency, errors, saturation). Raising N adds load to it without adding throughput.",
    );
  }
  const waitsRose = base === null || inc.waitP99 > 2 * Math.max(base.waitP99, 1) || inc.waiters >= 1;
  if (utilization >= FULL && waitsRose) {
    const hold = baselineHold ?? inc.holdMs;
    const needed = Math.max(inc.cap + 1, Math.ceil(((arrivals * hold) / 1000) * N_HEADROOM));
    numbers.neededN = needed;
    return verdict(
      inc,
      base,
      numbers,
      "cap_too_tight",
      `N is too tight for the arrival rate: raise it to about ${needed}`,
      `Holds are flat at ${fmtMs(inc.holdMs)}` +
        (holdRatio !== null ? ` (${numbers.holdRatio}× the healthy ${fmtMs(baselineHold ?? 0)})` : "") +
        `, yet all ${inc.cap} permits are busy and ${r1(inc.waiters)} wait on average: ${inc.cap} permits drain at most ` +
        `${fmtRate((inc.cap * 1000) / hold)}, and ${fmtRate(arrivals)} arrive. Little's law: N ≈ ${fmtRate(arrivals)} × ${fmtMs(hold)} ` +
        `= ${r1((arrivals * hold) / 1000)}, ${needed} with headroom.`,
      `Raise N to about ${needed}, if the downstream can take that many at once (check its own limit first).`,
    );
  }
  return verdict(
    inc,
    base,
    numbers,
    "inconclusive",
    "No clear cause in the numbers",
    `Holds ${fmtMs(inc.holdMs)}${holdRatio !== null ? ` (${numbers.holdRatio}× healthy)` : ""}, ${r1(utilization * 100)}% of N in use, ` +
      `${fmtRate(arrivals)} arriving, ${fmtRate(inc.released)} released.`,
    "Watch the holders and the queue discipline: a waiter passed over (LIFO, priority) starves without the semaphore being short.",
  );
}

/**
 * cap_lowered: N is below what it was earlier in the rows read, the queue is there, and arrivals
 * did not rise against the rows before N fell (else the demand is a cause too, and the other
 * verdicts judge it). Names what lowered N: the adaptive limit's last cut (with its reason), a
 * smaller share of a replica budget, or else a resize.
 */
function capLowered(inc: RowStats, cut: CapCut | null, arrivals: number, numbers: DiagnosisNumbers, ctx: DiagnosisContext | undefined): { headline: string; detail: string; fix: string } | null {
  // A cap a permit or two under its peak (an adaptive limit's probing) did not make the queue.
  if (cut === null || inc.cap > cut.fromCap - Math.max(1, Math.ceil(CAP_FELL * cut.fromCap)) || (inc.waiters < 1 && inc.inUse < FULL * inc.cap)) return null;
  const before = cut.before === null ? null : cut.before.attempts + Math.max(0, cut.before.growthPerSec);
  if (before !== null && before > 0 && arrivals >= ARRIVALS_ROSE * before) return null;
  numbers.capBefore = cut.fromCap;
  const demand = before === null ? "" : ` Arrivals are ${fmtRate(arrivals)}, against ${fmtRate(before)} while N was ${cut.fromCap}: the demand did not grow.`;
  const drain = ` ${inc.cap} permits holding ${fmtMs(inc.holdMs)} each drain ${fmtRate((inc.cap * 1000) / inc.holdMs)}; ${r1(inc.waiters)} wait on average.`;
  // The adaptive limit's latest cut made by the end of the incident.
  const changes = ctx?.limitChanges ?? [];
  let c: SampleLimit | undefined;
  for (let i = changes.length - 1; i >= 0 && c === undefined; i--) {
    const x = changes[i];
    if (x.t <= inc.to && x.from !== undefined && x.limit < x.from) c = x;
  }
  if (c !== undefined) {
    numbers.capLoweredBy = "adaptive";
    numbers.capReason = c.reason;
    return {
      headline: `The limit, not the demand: the adaptive limit cut N from ${cut.fromCap} to ${inc.cap}`,
      detail: `Its last cut, ${c.from} → ${c.limit}: ${c.reason}.` + demand + drain,
      fix:
        `The limit is holding load off a downstream whose latency rose: look at the dependency (its latency, errors, saturation); ` +
        `the limit probes back up as latency recovers. If this queue costs more than the slowness, raise the adaptive min (${c.min}) or its tolerance.`,
    };
  }
  const share = ctx?.share;
  if (share !== undefined && inc.cap <= Math.max(1, share.target)) {
    numbers.capLoweredBy = "share";
    return {
      headline: `The limit, not the demand: this replica's share of the budget fell from ${cut.fromCap} to ${inc.cap}`,
      detail: `${share.replicas} replicas now divide a budget of ${share.budget}.` + demand + drain,
      fix: `Raise the budget if the dependency can take more at once, or send less work to this service's replicas; more replicas do not add permits, they split them.`,
    };
  }
  numbers.capLoweredBy = "resize";
  return {
    headline: `The limit, not the demand: N was lowered from ${cut.fromCap} to ${inc.cap}`,
    detail: `N fell while arrivals did not rise.` + demand + drain,
    fix: `Raise N back (resize(), the pool's settings) if the dependency can take ${cut.fromCap} at once.`,
  };
}
