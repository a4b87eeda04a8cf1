// Rule `convoy`: for ≥ 5 s of consecutive samples, `inUse ≥ cap`, `waiters ≥ 1` and
// `waitMs.p99 ≥ 2 × holdMs.p50` (callers wait much longer than the work takes: they queue behind
// each other). Resolved after `waiters = 0` for 5 s. Warning; critical when, over the window,
// the queue grew while releases per second fell (throughput collapsing under a growing queue).
//
// Severity only escalates while the alert is active: dropping back to warning on a better
// window would flap the alert between levels for what is one incident.
import { mergeSummaries } from "../../histogram.js";
import type { Sample, Severity } from "../../protocol/types.js";
import type { AlertBook } from "../alert-book.js";
import { fmtMs } from "../format.js";
import type { ConvoyThresholds } from "../thresholds.js";
import type { SampleTime, SemaphoreContext } from "../types.js";
import { Run, TrailingWindow, type WindowEntry } from "../window.js";

export function convoyHolds(s: Sample, th: ConvoyThresholds): boolean {
  return s.inUse >= s.cap && s.waiters >= th.minWaiters && s.waitMs.p99 >= th.waitToHoldRatio * s.holdMs.p50;
}

export interface ConvoyTrend {
  readonly waitersFirst: number;
  readonly waitersLast: number;
  /** Releases per second over the first and the second half of the window's samples. */
  readonly releasedPerSecFirstHalf: number;
  readonly releasedPerSecSecondHalf: number;
  readonly critical: boolean;
}

function releasedPerSec(entries: readonly WindowEntry<Sample>[]): number {
  let released = 0;
  let ms = 0;
  for (const e of entries) {
    released += e.value.released;
    ms += e.coverMs;
  }
  return ms > 0 ? (released * 1000) / ms : 0;
}

/**
 * "Waiters grew over the window": the last sample's queue is longer than the first's (both are
 * gauges). "Released per second fell": the second half's rate is below the first half's; halves
 * rather than two single intervals, because one interval's count is too noisy to call a trend.
 * With an odd count the middle sample belongs to neither half.
 */
export function convoyTrend(entries: readonly WindowEntry<Sample>[]): ConvoyTrend {
  const n = entries.length;
  const half = Math.floor(n / 2);
  const first = releasedPerSec(entries.slice(0, half));
  const second = releasedPerSec(entries.slice(n - half));
  const waitersFirst = n > 0 ? entries[0].value.waiters : 0;
  const waitersLast = n > 0 ? entries[n - 1].value.waiters : 0;
  return {
    waitersFirst,
    waitersLast,
    releasedPerSecFirstHalf: first,
    releasedPerSecSecondHalf: second,
    critical: n >= 2 && waitersLast > waitersFirst && second < first,
  };
}

const round = (x: number): number => Math.round(x * 100) / 100;

export class ConvoyRule {
  /** The current run of samples meeting the condition, trimmed to the window. */
  private readonly window = new TrailingWindow<Sample>();
  private readonly clear = new Run();

  onSample(sem: SemaphoreContext, s: Sample, at: SampleTime, book: AlertBook, th: ConvoyThresholds): void {
    const key = sem.target.key;
    if (convoyHolds(s, th)) this.window.push(at.t, at.intervalMs, s, at.maxGapMs, th.windowMs);
    else this.window.clear();
    const cleared = this.clear.feed(at.t, at.intervalMs, s.waiters === 0, at.maxGapMs);

    const active = book.get("convoy", key);
    if (active === undefined) {
      if (this.window.covered >= th.windowMs) {
        const trend = convoyTrend(this.window.items());
        const severity: Severity = trend.critical ? "critical" : "warning";
        book.raise(sem.target, { rule: "convoy", severity, message: this.message(sem, s, severity), evidence: this.evidence(s, trend, th) }, at.t);
      }
      return;
    }
    if (cleared >= th.clearMs) {
      book.resolve("convoy", key, at.t);
      this.window.clear();
      return;
    }
    if (active.severity === "warning" && this.window.covered >= th.windowMs) {
      const trend = convoyTrend(this.window.items());
      if (trend.critical) {
        book.update("convoy", key, { severity: "critical", message: this.message(sem, s, "critical"), evidence: this.evidence(s, trend, th) });
      }
    }
  }

  reset(): void {
    this.window.clear();
    this.clear.reset();
  }

  private message(sem: SemaphoreContext, s: Sample, severity: Severity): string {
    const { waitP99, holdP50 } = this.merged();
    let text =
      `${sem.label}: convoy for ${fmtMs(this.window.covered)}: ${s.inUse}/${s.cap} in use, ${s.waiters} waiting, ` +
      `wait p99 ${fmtMs(waitP99)} vs hold p50 ${fmtMs(holdP50)}`;
    if (severity === "critical") text += "; the queue is growing while releases per second fall";
    return text;
  }

  private merged(): { waitP99: number; holdP50: number; waitMax: number; holdP99: number } {
    const items = this.window.items();
    const wait = mergeSummaries(items.map((e) => e.value.waitMs));
    const hold = mergeSummaries(items.map((e) => e.value.holdMs));
    return { waitP99: wait.p99, holdP50: hold.p50, waitMax: wait.max, holdP99: hold.p99 };
  }

  private evidence(s: Sample, trend: ConvoyTrend, th: ConvoyThresholds): Record<string, unknown> {
    const items = this.window.items();
    let maxWaiters = 0;
    let released = 0;
    let acquired = 0;
    for (const e of items) {
      if (e.value.waiters > maxWaiters) maxWaiters = e.value.waiters;
      released += e.value.released;
      acquired += e.value.acquired;
    }
    const m = this.merged();
    return {
      window: { from: this.window.since, to: items.length > 0 ? items[items.length - 1].t : this.window.since, coveredMs: this.window.covered, samples: items.length },
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
