// Rule `double_release`: a sample with `doubleReleases > 0` or a `double_release` event. Every
// extra release raises the effective cap for good, so one is worth an alert. Resolved by the
// first sample 60 s (sample time) or more after the last one.
//
// The agent reports one double release twice: as the sample counter (how many) and as an event
// (with the stack). Evidence keeps both tallies; the message counts the larger.
import type { AgentEvent, Sample } from "../../protocol/types.js";
import type { AlertBook } from "../alert-book.js";
import { firstFrame } from "../format.js";
import type { DoubleReleaseThresholds } from "../thresholds.js";
import type { SemaphoreContext } from "../types.js";

export class DoubleReleaseRule {
  private lastT = -Infinity;
  private counted = 0;
  private events = 0;
  private holderId: string | undefined;
  private stack: string | undefined;

  onSample(sem: SemaphoreContext, s: Sample, t: number, book: AlertBook, th: DoubleReleaseThresholds): void {
    if (s.doubleReleases > 0) {
      this.lastT = Math.max(this.lastT, t);
      this.counted += s.doubleReleases;
      this.raiseOrUpdate(sem, book, t, s.cap);
      return;
    }
    if (book.get("double_release", sem.target.key) !== undefined && t - this.lastT >= th.quietMs) {
      book.resolve("double_release", sem.target.key, t, { resolution: "quiet", quietForMs: t - this.lastT });
      this.reset();
    }
  }

  onEvent(sem: SemaphoreContext, ev: AgentEvent, cap: number, book: AlertBook): void {
    this.lastT = Math.max(this.lastT, ev.t);
    this.events++;
    if (ev.holderId !== undefined) this.holderId = ev.holderId;
    if (ev.stack !== undefined) this.stack = ev.stack;
    this.raiseOrUpdate(sem, book, ev.t, cap);
  }

  reset(): void {
    this.lastT = -Infinity;
    this.counted = 0;
    this.events = 0;
    this.holderId = undefined;
    this.stack = undefined;
  }

  private raiseOrUpdate(sem: SemaphoreContext, book: AlertBook, at: number, cap: number): void {
    const n = Math.max(this.counted, this.events);
    let message = `${sem.label}: a permit was released twice${n > 1 ? ` (${n} times)` : ""}; it now admits more than its cap of ${cap}`;
    const frame = firstFrame(this.stack);
    if (frame !== undefined) message += `; released again at ${frame}`;
    const evidence: Record<string, unknown> = {
      doubleReleases: this.counted,
      events: this.events,
      lastAt: this.lastT,
      cap,
      ...(this.holderId !== undefined ? { holderId: this.holderId } : {}),
      ...(this.stack !== undefined ? { stack: this.stack } : {}),
    };
    if (book.get("double_release", sem.target.key) === undefined) {
      book.raise(sem.target, { rule: "double_release", severity: "warning", message, evidence }, at);
    } else {
      book.update("double_release", sem.target.key, { message, evidence });
    }
  }
}

