// Rule `convoy`: `inUse ≥ cap`, `waiters ≥ 1` and `waitMs.p99 ≥ 2 × holdMs.p50` (callers wait
// much longer than the work takes: they queue behind each other) on the latest sample and for at
// least 80 % of the sample time of the trailing 5 s of consecutive samples. Resolved after
// `waiters = 0` for 5 s. Warning; critical when, over the window, the queue grew while releases
// per second fell (throughput collapsing under a growing queue).
//
// A share of the window, not an unbroken run (Prometheus's `for:`, which one false evaluation
// resets): inUse and waiters are gauges read at one instant, and a pool in a convoy reads 9/10 or
// no waiters whenever a release and the next acquire straddle that instant, so a run restarted by
// each such dip raised late or never. The share is what avg_over_time of a 0/1 series over the
// window gives in PromQL, independent of the sampling interval (a count of tolerated dips is not),
// and a load saturated for less than 80 % of every 5 s never raises it.
//
// Severity only escalates while the alert is active: dropping back to warning on a better
// window would flap the alert between levels for what is one incident.
import type { Sample, Severity } from "../../protocol/types.js";
import { alertActive, type AlertBook } from "../alert-book.js";
import { fmtMs } from "../format.js";
import { HistRing, MAX_HIST_PAIRS, MergedHist } from "../hist-ring.js";
import type { ConvoyThresholds } from "../thresholds.js";
import type { SampleTime, SemaphoreContext } from "../types.js";
import { feedRun, resetRun, TrailingWindow } from "../window.js";

export function convoyHolds(s: Sample, th: ConvoyThresholds): boolean {
  return s.inUse >= s.cap && s.waiters >= th.minWaiters && s.waitMs.p99 >= th.waitToHoldRatio * s.holdMs.p50;
}

/**
 * Feeds the run of samples that clear a convoy (`waiters = 0`), at `st[clearAt]`, one sample;
 * returns its coverage. All a quiet sample does to the rule, so its tracker calls it directly
 * (SemaphoreTracker.sample) where the rule itself has nothing else to do.
 */
export function feedConvoyClear(st: Float64Array, clearAt: number, s: Sample, at: SampleTime): number {
  return feedRun(st, clearAt, at.t, at.intervalMs, s.waiters === 0, at.maxGapMs);
}

export interface ConvoyTrend {
  readonly waitersFirst: number;
  readonly waitersLast: number;
  /** Releases per second over the first and the second half of the window's samples. */
  readonly releasedPerSecFirstHalf: number;
  readonly releasedPerSecSecondHalf: number;
  readonly critical: boolean;
}

// What the window keeps of each sample: the numbers the evidence needs, and where its two
// histograms' pairs start in the rings.
const WAITERS = 0;
const RELEASED = 1;
const ACQUIRED = 2;
const WAIT_MAX = 3;
const HOLD_MAX = 4;
const WAIT_AT = 5;
const HOLD_AT = 6;
/** 1 when the sample met the condition, else 0 (a dip kept in the window). */
const HOLDS = 7;
/** The sample time it covers when it met the condition, else 0: summed, the window's time in convoy. */
const HELD_MS = 8;
const FIELDS = 9;

function releasedPerSec(w: TrailingWindow, from: number, to: number): number {
  let released = 0;
  let ms = 0;
  for (let i = from; i < to; i++) {
    released += w.get(i, RELEASED);
    ms += w.cover(i);
  }
  return ms > 0 ? (released * 1000) / ms : 0;
}

/**
 * "Waiters grew over the window": the last sample's queue is longer than the first's (both are
 * gauges). "Released per second fell": the second half's rate is below the first half's; halves
 * rather than two single intervals, because one interval's count is too noisy to call a trend.
 * With an odd count the middle sample belongs to neither half.
 */
function convoyTrend(w: TrailingWindow): ConvoyTrend {
  const n = w.size;
  const half = Math.floor(n / 2);
  const first = releasedPerSec(w, 0, half);
  const second = releasedPerSec(w, n - half, n);
  // From its first sample in convoy: a dip's empty queue at the start is no growth.
  let firstHeld = 0;
  while (firstHeld < n - 1 && w.get(firstHeld, HOLDS) === 0) firstHeld++;
  const waitersFirst = n > 0 ? w.get(firstHeld, WAITERS) : 0;
  const waitersLast = n > 0 ? w.get(n - 1, WAITERS) : 0;
  return {
    waitersFirst,
    waitersLast,
    releasedPerSecFirstHalf: first,
    releasedPerSecSecondHalf: second,
    critical: n >= 2 && waitersLast > waitersFirst && second < first,
  };
}

interface Merged {
  readonly waitP99: number;
  readonly holdP50: number;
  readonly waitMax: number;
  readonly holdP99: number;
}

/** Scratch for merging a window's histograms: one at a time, never kept. */
const scratch = new MergedHist();

const round = (x: number): number => Math.round(x * 100) / 100;

export class ConvoyRule {
  /**
   * The trailing window of consecutive samples since the first that met the condition, dips
   * included, trimmed to windowMs; emptied when it holds no sample meeting the condition.
   */
  private readonly window = new TrailingWindow(FIELDS);
  private readonly waitHists = new HistRing();
  private readonly holdHists = new HistRing();
  /**
   * `st[clearAt]`: the run of samples that clear it (RUN_LENGTH numbers, see feedRun),
   * `st[fillingAt]`: 1 while the window or its rings hold anything (see `filling`), and
   * `st[criticalAt]`: 1 when it last raised or escalated its alert to critical, all in its
   * tracker's state.
   */
  constructor(
    private readonly st: Float64Array,
    private readonly clearAt: number,
    private readonly fillingAt: number,
    private readonly criticalAt: number,
  ) {}

  /**
   * Whether the window or its rings hold anything: false for most samples of most semaphores. In
   * the tracker's state, where the tracker reads it too (SemaphoreTracker.sample) without touching
   * this rule.
   */
  private get filling(): boolean {
    return this.st[this.fillingAt] !== 0;
  }

  private set filling(on: boolean) {
    this.st[this.fillingAt] = on ? 1 : 0;
  }

  onSample(sem: SemaphoreContext, s: Sample, at: SampleTime, book: AlertBook, th: ConvoyThresholds): void {
    const key = sem.target.key;
    // Whether its alert is active is the target's bit (the book keeps it), and whether that alert
    // is critical, st[criticalAt] (only this rule raises or escalates it): no sample looks the
    // alert up in the book, a cache miss each.
    const on = alertActive(sem.target, "convoy");
    if (on && this.st[this.criticalAt] !== 0) {
      // A critical convoy has nothing left to escalate to and nothing reads its window again: it
      // stays empty until the alert resolves, which in a wide incident saves most of this rule's cost.
      this.clearWindow();
      if (feedConvoyClear(this.st, this.clearAt, s, at) >= th.clearMs) {
        book.resolve("convoy", key, at.t);
        this.st[this.criticalAt] = 0;
      }
      return;
    }
    const holds = convoyHolds(s, th);
    if (holds || this.filling) this.add(s, at, th.windowMs, holds);
    const cleared = feedConvoyClear(this.st, this.clearAt, s, at);
    const ready = holds && this.full(th);

    if (!on) {
      if (ready) {
        const trend = convoyTrend(this.window);
        const severity: Severity = trend.critical ? "critical" : "warning";
        const m = this.merged();
        book.raise(sem.target, { rule: "convoy", severity, message: this.message(sem, s, severity, m), evidence: this.evidence(s, trend, th, m) }, at.t);
        this.st[this.criticalAt] = severity === "critical" ? 1 : 0;
      }
      return;
    }
    if (cleared >= th.clearMs) {
      book.resolve("convoy", key, at.t);
      this.clearWindow();
      return;
    }
    if (ready) {
      const trend = convoyTrend(this.window);
      if (trend.critical) {
        const m = this.merged();
        book.update("convoy", key, { severity: "critical", message: this.message(sem, s, "critical", m), evidence: this.evidence(s, trend, th, m) });
        this.st[this.criticalAt] = 1;
      }
    }
  }

  reset(): void {
    this.clearWindow();
    resetRun(this.st, this.clearAt);
    this.st[this.criticalAt] = 0;
  }

  /** Typed-array bytes its window holds. */
  bytes(): number {
    return this.window.bytes() + this.waitHists.bytes() + this.holdHists.bytes();
  }

  /** The window covers windowMs and the condition held for at least minHeldFraction of it. */
  private full(th: ConvoyThresholds): boolean {
    const w = this.window;
    return this.filling && w.covered >= th.windowMs && w.sum(HELD_MS) >= th.minHeldFraction * w.covered;
  }

  private add(s: Sample, at: SampleTime, windowMs: number, holds: boolean): void {
    const w = this.window;
    this.filling = true;
    w.push(at.t, at.intervalMs, at.maxGapMs);
    w.set(WAITERS, s.waiters);
    w.set(RELEASED, s.released);
    w.set(ACQUIRED, s.acquired);
    w.set(WAIT_MAX, s.waitMs.max);
    w.set(HOLD_MAX, s.holdMs.max);
    w.set(WAIT_AT, this.waitHists.append(s.waitMs.hist));
    w.set(HOLD_AT, this.holdHists.append(s.holdMs.hist));
    w.set(HOLDS, holds ? 1 : 0);
    w.set(HELD_MS, holds ? w.cover(w.size - 1) : 0);
    w.trim(windowMs);
    // Bounded in pairs as well as samples: full histograms in every sample would hold ~MAX_WINDOW_SAMPLES × 4 KiB.
    while (w.size > 1 && (this.waitHists.endOffset - w.get(0, WAIT_AT) > MAX_HIST_PAIRS || this.holdHists.endOffset - w.get(0, HOLD_AT) > MAX_HIST_PAIRS)) {
      w.dropFirst();
    }
    // Nothing in convoy left in it (a gap restarted it on a dip, or dips filled it): done until the next.
    if (w.sum(HOLDS) === 0) {
      this.clearWindow();
      return;
    }
    this.waitHists.dropBefore(w.get(0, WAIT_AT));
    this.holdHists.dropBefore(w.get(0, HOLD_AT));
  }

  private clearWindow(): void {
    // Most samples of most semaphores find the window already empty: touching three objects to
    // empty it again would be a third of what this rule costs a sample (`filling` says so without them).
    if (!this.filling) return;
    this.filling = false;
    this.window.clear();
    this.waitHists.clear();
    this.holdHists.clear();
  }

  private message(sem: SemaphoreContext, s: Sample, severity: Severity, { waitP99, holdP50 }: Merged): string {
    const w = this.window;
    const held = w.sum(HELD_MS);
    const span = held < w.covered ? `${fmtMs(held)} of the last ${fmtMs(w.covered)}` : fmtMs(w.covered);
    let text =
      `${sem.label}: convoy for ${span}: ${s.inUse}/${s.cap} in use, ${s.waiters} waiting, ` +
      `wait p99 ${fmtMs(waitP99)} vs hold p50 ${fmtMs(holdP50)}`;
    if (severity === "critical") text += "; the queue is growing while releases per second fall";
    return text;
  }

  /** Percentiles of the whole window, from its samples' histograms merged (as mergeSummaries does). */
  private merged(): Merged {
    const w = this.window;
    const n = w.size;
    let waitMax = 0;
    let holdMax = 0;
    for (let i = 0; i < n; i++) {
      if (w.get(i, WAIT_MAX) > waitMax) waitMax = w.get(i, WAIT_MAX);
      if (w.get(i, HOLD_MAX) > holdMax) holdMax = w.get(i, HOLD_MAX);
    }
    const wait = this.merge(this.waitHists, WAIT_AT);
    const waitP99 = wait.quantile(waitMax, 0.99);
    const hold = this.merge(this.holdHists, HOLD_AT);
    return { waitP99, waitMax, holdP50: hold.quantile(holdMax, 0.5), holdP99: hold.quantile(holdMax, 0.99) };
  }

  /** The window's histograms of one kind, merged (into the shared scratch: read it before the next merge). */
  private merge(ring: HistRing, field: number): MergedHist {
    const w = this.window;
    const dense = scratch.dense;
    dense.fill(0);
    for (let i = 0; i < w.size; i++) ring.addInto(dense, w.get(i, field), i + 1 < w.size ? w.get(i + 1, field) : ring.endOffset);
    return scratch.from(dense);
  }

  private evidence(s: Sample, trend: ConvoyTrend, th: ConvoyThresholds, m: Merged): Record<string, unknown> {
    const w = this.window;
    const n = w.size;
    let maxWaiters = 0;
    let released = 0;
    let acquired = 0;
    for (let i = 0; i < n; i++) {
      if (w.get(i, WAITERS) > maxWaiters) maxWaiters = w.get(i, WAITERS);
      released += w.get(i, RELEASED);
      acquired += w.get(i, ACQUIRED);
    }
    return {
      // heldMs: the window's sample time in convoy; the rest were dips under a full queue.
      window: { from: w.since, to: n > 0 ? w.t(n - 1) : w.since, coveredMs: w.covered, heldMs: w.sum(HELD_MS), samples: n },
      cap: s.cap,
      inUse: s.inUse,
      waiters: { first: trend.waitersFirst, last: trend.waitersLast, max: maxWaiters },
      acquired,
      released,
      releasedPerSec: { firstHalf: round(trend.releasedPerSecFirstHalf), secondHalf: round(trend.releasedPerSecSecondHalf) },
      // Percentiles of the whole window, merged from the samples' histograms.
      waitMs: { p99: m.waitP99, max: m.waitMax },
      holdMs: { p50: m.holdP50, p99: m.holdP99 },
      waitToHoldRatio: th.waitToHoldRatio,
    };
  }
}
