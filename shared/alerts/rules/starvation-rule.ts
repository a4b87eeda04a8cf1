// Rule `starvation`: a waiter has waited `oldestWaitMs ≥ max(5000, 10 × holdMs.p99)`: far longer
// than the work itself takes, so it is being passed over (LIFO or barging), not merely queued.
// Raised on the first sample that shows it; resolved after the condition is false for 5 s.
//
// A pool opening connections (`opening > 0`: tarn's pending creates) has callers waiting for
// connections that do not exist yet, not for permits others hold, so hold times say nothing of
// how long they should wait and nobody is passed over. Nor is anyone when permits are free while
// callers wait (`inUse < cap`, cause `permits_free`): between two attempts of a failing create
// tarn has nothing pending, other pools do not report `opening` at all, and a weighted acquire
// may want more permits than are free. There the rule asks `oldestWaitMs ≥ openingWaitMs` (10 s)
// instead, far beyond a healthy connect: a pool whose creates hang or keep failing while callers
// wait. One rule with several causes rather than a rule of its own: either way callers starve,
// and it keeps the wire's closed list of rules.
import type { Sample } from "../../protocol/types.js";
import { alertActive, type AlertBook } from "../alert-book.js";
import { fmtMs } from "../format.js";
import type { StarvationThresholds } from "../thresholds.js";
import type { SampleTime, SemaphoreContext } from "../types.js";
import { feedRun, resetRun } from "../window.js";

/**
 * Why the oldest waiter waits: passed over for permits others hold, behind connections being
 * opened, or with permits free (not for permits others hold).
 */
export type StarvationCause = "passed_over" | "opening" | "permits_free";

export function starvationCause(s: Sample): StarvationCause {
  if (s.opening !== undefined && s.opening > 0) return "opening";
  return s.inUse < s.cap ? "permits_free" : "passed_over";
}

export function starvationThresholdMs(s: Sample, th: StarvationThresholds): number {
  if (starvationCause(s) !== "passed_over") return th.openingWaitMs;
  return Math.max(th.minWaitMs, th.holdP99Multiple * s.holdMs.p99);
}

/** The rule's condition. With no waiter nobody starves, whatever a user lowers the thresholds to. */
export function starving(s: Sample, th: StarvationThresholds): boolean {
  return s.waiters > 0 && s.oldestWaitMs >= starvationThresholdMs(s, th);
}

/**
 * Feeds the run of samples that clear starvation (nobody starving), at `st[clearAt]`, one sample;
 * returns its coverage. All a sample with nobody starving does to the rule while no alert is
 * active, so its tracker calls it directly then (SemaphoreTracker.sample).
 */
export function feedStarvationClear(st: Float64Array, clearAt: number, starves: boolean, at: SampleTime): number {
  return feedRun(st, clearAt, at.t, at.intervalMs, !starves, at.maxGapMs);
}

export class StarvationRule {
  /** `st[clearAt]`: the run of samples that clear it (RUN_LENGTH numbers, see feedRun), in its tracker's state. */
  constructor(
    private readonly st: Float64Array,
    private readonly clearAt: number,
  ) {}

  onSample(sem: SemaphoreContext, s: Sample, at: SampleTime, book: AlertBook, th: StarvationThresholds): void {
    const threshold = starvationThresholdMs(s, th);
    const starves = starving(s, th);
    const cleared = feedStarvationClear(this.st, this.clearAt, starves, at);
    const active = alertActive(sem.target, "starvation");
    if (!active && starves) {
      const queue = sem.info.queue;
      const cause = starvationCause(s);
      const opening = s.opening ?? 0;
      let message: string;
      if (cause === "opening") {
        message =
          `${sem.label}: a waiter has waited ${fmtMs(s.oldestWaitMs)} while the pool opens ${opening} connection${opening === 1 ? "" : "s"} ` +
          `(threshold ${fmtMs(threshold)}); connections are not opening: creates hang or keep failing`;
      } else if (cause === "permits_free") {
        message =
          `${sem.label}: a waiter has waited ${fmtMs(s.oldestWaitMs)} while ${s.cap - s.inUse} of ${s.cap} permits are free (threshold ${fmtMs(threshold)}); ` +
          "it waits for no holder: a pool's connections failing to open (between attempts), or an acquire of more permits than are free";
      } else {
        message = `${sem.label}: a waiter has waited ${fmtMs(s.oldestWaitMs)} (threshold ${fmtMs(threshold)}, hold p99 ${fmtMs(s.holdMs.p99)})`;
        if (queue === "lifo") message += "; the queue is LIFO, which passes old waiters over";
      }
      book.raise(
        sem.target,
        {
          rule: "starvation",
          severity: "warning",
          message,
          evidence: { cause, oldestWaitMs: s.oldestWaitMs, thresholdMs: threshold, holdP99Ms: s.holdMs.p99, waiters: s.waiters, inUse: s.inUse, opening, cap: s.cap, queue },
        },
        at.t,
      );
    } else if (active && cleared >= th.clearMs) {
      book.resolve("starvation", sem.target.key, at.t);
    }
  }

  reset(): void {
    resetRun(this.st, this.clearAt);
  }
}
