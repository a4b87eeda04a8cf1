// Rule `timeouts`: `(timeouts + rejections) / (acquired + timeouts + rejections) ≥ 5 %` over the
// trailing 10 s of samples, with ≥ 20 attempts in it (fewer is too little traffic to judge).
// Resolved once that windowed condition has been false for 10 s of consecutive samples, so a
// burst resolves about 10 s after it has left the window, not the moment it does.
import type { Sample } from "../../protocol/types.js";
import { alertActive, type AlertBook } from "../alert-book.js";
import { fmtMs, fmtPct } from "../format.js";
import type { TimeoutsThresholds } from "../thresholds.js";
import type { SampleTime, SemaphoreContext } from "../types.js";
import type { SlotPool } from "../../history/slot-pool.js";
import { feedRun, resetRun, TrailingWindow } from "../window.js";

interface Counts {
  readonly acquired: number;
  readonly timeouts: number;
  readonly rejections: number;
}

export interface TimeoutsTotals extends Counts {
  readonly attempts: number;
  readonly failed: number;
  readonly ratio: number;
}

const ACQUIRED = 0;
const TIMEOUTS = 1;
const REJECTIONS = 2;

function timeoutsTotals(w: TrailingWindow): TimeoutsTotals {
  let acquired = 0;
  let timeouts = 0;
  let rejections = 0;
  for (let i = 0; i < w.size; i++) {
    acquired += w.get(i, ACQUIRED);
    timeouts += w.get(i, TIMEOUTS);
    rejections += w.get(i, REJECTIONS);
  }
  const failed = timeouts + rejections;
  const attempts = acquired + failed;
  return { acquired, timeouts, rejections, attempts, failed, ratio: attempts > 0 ? failed / attempts : 0 };
}

/** Numbers per entry of the rule's window. */
export const TIMEOUTS_FIELDS = 3;

export class TimeoutsRule {
  private readonly window: TrailingWindow;

  /**
   * `st[clearAt]`: the run of samples that clear it (RUN_LENGTH numbers, see feedRun), in its
   * tracker's state. `pool`: its window's first buffer (firstWindowLength(TIMEOUTS_FIELDS) numbers).
   */
  constructor(
    private readonly st: Float64Array,
    private readonly clearAt: number,
    pool?: SlotPool,
  ) {
    this.window = new TrailingWindow(TIMEOUTS_FIELDS, undefined, pool);
  }

  /** Reads what onSample() touches first, changing nothing (see SemaphoreTracker.warm). */
  warm(): number {
    return this.window.warm();
  }

  onSample(sem: SemaphoreContext, s: Sample, at: SampleTime, book: AlertBook, th: TimeoutsThresholds): void {
    const w = this.window;
    w.push(at.t, at.intervalMs, at.maxGapMs);
    w.set(ACQUIRED, s.acquired);
    w.set(TIMEOUTS, s.timeouts);
    w.set(REJECTIONS, s.rejections);
    w.trim(th.windowMs);
    // The window's running sums first, the totals object only to raise: an object per sample
    // for a rule that is quiet almost always would be most of what the hub allocates per sample.
    const acquired = w.sum(ACQUIRED);
    const failed = w.sum(TIMEOUTS) + w.sum(REJECTIONS);
    const attempts = acquired + failed;
    const failing = attempts >= th.minAttempts && attempts > 0 && failed / attempts >= th.ratio;
    const cleared = feedRun(this.st, this.clearAt, at.t, at.intervalMs, !failing, at.maxGapMs);
    // Not a lookup in the book: this runs for every sample of every semaphore.
    const active = alertActive(sem.target, "timeouts");
    if (!active && failing) {
      const tot = timeoutsTotals(w);
      book.raise(
        sem.target,
        {
          rule: "timeouts",
          severity: "warning",
          message:
            `${sem.label}: ${fmtPct(tot.ratio)} of acquire attempts timed out or were rejected over the last ` +
            `${fmtMs(this.window.covered)} (${tot.failed} of ${tot.attempts}: ${tot.timeouts} timeouts, ${tot.rejections} rejections)`,
          evidence: {
            window: { from: this.window.since, to: at.t, coveredMs: this.window.covered, samples: this.window.size },
            ...tot,
            thresholdRatio: th.ratio,
            minAttempts: th.minAttempts,
            acquireTimeoutMs: sem.info.acquireTimeoutMs,
            maxWaiters: sem.info.maxWaiters,
          },
        },
        at.t,
      );
    } else if (active && cleared >= th.clearMs) {
      book.resolve("timeouts", sem.target.key, at.t);
    }
  }

  reset(): void {
    this.window.clear();
    resetRun(this.st, this.clearAt);
  }

  /** reset(), and its window's buffer given back (the semaphore is gone). */
  release(): void {
    this.reset();
    this.window.release();
  }

  /** Typed-array bytes its window holds. */
  bytes(): number {
    return this.window.bytes();
  }
}
