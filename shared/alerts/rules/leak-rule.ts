// Rule `leak` (critical): raised by a `leak_suspected` or `invariant_violation` event, or by a
// sample breaking `available + inUse === cap` (docs/protocol.md, "The leak check"). Resolved when every
// suspected holder has had `leak_resolved` and the check holds: a sample later than the last
// break passed it.
import type { AgentEvent, Sample } from "../../protocol/types.js";
import type { AlertBook } from "../alert-book.js";
import { firstFrame, fmtMs, plural } from "../format.js";
import type { SemaphoreContext } from "../types.js";

/** Holders followed for resolution; more than this only count (a leak that size is obvious). */
export const MAX_TRACKED_HOLDERS = 1024;
/** Holders (with stacks, up to 16 KiB each) copied into evidence. */
export const MAX_HOLDERS_IN_EVIDENCE = 10;
/** A leak_suspected without holderId is followed under this name; a bare leak_resolved clears it. */
export const UNKNOWN_HOLDER = "(unknown)";

interface Holder {
  readonly holderId: string;
  readonly heldMs: number | undefined;
  readonly t: number;
  readonly stack: string | undefined;
}

interface CheckBreak {
  readonly t: number;
  readonly cap: number;
  readonly inUse: number;
  readonly available: number;
}

/** Equality with a tolerance scaled to the cap: weighted permits may be fractional. */
export function leakCheckHolds(s: Pick<Sample, "cap" | "inUse" | "available">): boolean {
  return Math.abs(s.available + s.inUse - s.cap) <= 1e-9 * Math.max(1, Math.abs(s.cap));
}

export class LeakRule {
  private holders = new Map<string, Holder>();
  /** Suspected holders beyond MAX_TRACKED_HOLDERS: each unknown leak_resolved pays one back. */
  private untracked = 0;
  /** Latest time the check was seen broken (sample or invariant_violation), null once cleared. */
  private brokenAt: number | null = null;
  private lastBrokenSampleT = -Infinity;
  private lastBreak: CheckBreak | null = null;
  private violations = 0;
  private lastViolation: Record<string, unknown> | undefined;

  /** `st[lastGoodAt]`: the latest sample time the check held (-Infinity: never), in its tracker's state (written on every sample). */
  constructor(
    private readonly st: Float64Array,
    private readonly lastGoodAt: number,
  ) {}

  private get lastGoodT(): number {
    return this.st[this.lastGoodAt];
  }

  private set lastGoodT(t: number) {
    this.st[this.lastGoodAt] = t;
  }

  onSample(sem: SemaphoreContext, s: Sample, t: number, book: AlertBook): void {
    if (leakCheckHolds(s)) {
      this.lastGoodT = t;
      this.tryResolve(sem, book, t);
      return;
    }
    this.lastBrokenSampleT = t;
    this.brokenAt = Math.max(this.brokenAt ?? -Infinity, t);
    const prev = this.lastBreak;
    this.lastBreak = { t, cap: s.cap, inUse: s.inUse, available: s.available };
    // A leak that stays broken at the same numbers is one fact, not one update per interval.
    const changed = prev === null || prev.cap !== s.cap || prev.inUse !== s.inUse || prev.available !== s.available;
    this.raiseOrUpdate(sem, book, t, changed);
  }

  onEvent(sem: SemaphoreContext, ev: AgentEvent, intervalMs: number, book: AlertBook): void {
    switch (ev.type) {
      case "leak_suspected":
        this.suspect(sem, ev, book);
        return;
      case "leak_resolved":
        this.release(sem, ev, book);
        return;
      case "invariant_violation":
        this.violation(sem, ev, intervalMs, book);
        return;
      default:
        return;
    }
  }

  /** Forget everything (the semaphore is gone or replaced); the caller resolves the alert. */
  reset(): void {
    this.holders = new Map();
    this.untracked = 0;
    this.brokenAt = null;
    this.lastBreak = null;
    this.violations = 0;
    this.lastViolation = undefined;
  }

  private suspect(sem: SemaphoreContext, ev: AgentEvent, book: AlertBook): void {
    const id = ev.holderId ?? UNKNOWN_HOLDER;
    const known = this.holders.has(id);
    if (!known && this.holders.size >= MAX_TRACKED_HOLDERS) this.untracked++;
    else this.holders.set(id, { holderId: id, heldMs: ev.heldMs, t: ev.t, stack: ev.stack });
    this.raiseOrUpdate(sem, book, ev.t, !known);
  }

  private release(sem: SemaphoreContext, ev: AgentEvent, book: AlertBook): void {
    const id = ev.holderId ?? UNKNOWN_HOLDER;
    if (!this.holders.delete(id)) {
      if (this.untracked === 0) return;
      this.untracked--;
    }
    if (this.tryResolve(sem, book, ev.t)) return;
    if (book.get("leak", sem.target.key) !== undefined) {
      book.update("leak", sem.target.key, { message: this.message(sem), evidence: this.evidence() });
    }
  }

  private violation(sem: SemaphoreContext, ev: AgentEvent, intervalMs: number, book: AlertBook): void {
    const active = book.get("leak", sem.target.key) !== undefined;
    const clearedSince = this.lastGoodT > ev.t;
    // The agent reports each broken sample too; if the hub already alerted on a broken sample
    // near this time and a later sample has passed, this late event is that same incident.
    if (!active && clearedSince && this.lastBrokenSampleT >= ev.t - intervalMs) return;
    this.violations++;
    this.lastViolation = ev.detail;
    if (!clearedSince) this.brokenAt = Math.max(this.brokenAt ?? -Infinity, ev.t);
    this.raiseOrUpdate(sem, book, ev.t, true);
    // A violation the hub never saw in a sample (batch dropped) that has since cleared still
    // leaves a record: raised at its own time, resolved when the later sample passed.
    if (clearedSince) this.tryResolve(sem, book, this.lastGoodT);
  }

  private raiseOrUpdate(sem: SemaphoreContext, book: AlertBook, at: number, changed: boolean): void {
    if (book.get("leak", sem.target.key) === undefined) {
      book.raise(sem.target, { rule: "leak", severity: "critical", message: this.message(sem), evidence: this.evidence() }, at);
    } else if (changed) {
      book.update("leak", sem.target.key, { message: this.message(sem), evidence: this.evidence() });
    }
  }

  /** Resolve if nothing is suspected any more; true when it did. */
  private tryResolve(sem: SemaphoreContext, book: AlertBook, at: number): boolean {
    if (book.get("leak", sem.target.key) === undefined) return false;
    if (this.holders.size > 0 || this.untracked > 0) return false;
    if (this.brokenAt !== null && !(this.lastGoodT > this.brokenAt)) return false;
    book.resolve("leak", sem.target.key, at);
    this.brokenAt = null;
    this.lastBreak = null;
    this.violations = 0;
    this.lastViolation = undefined;
    return true;
  }

  private longest(): Holder | undefined {
    let best: Holder | undefined;
    for (const h of this.holders.values()) if (best === undefined || (h.heldMs ?? 0) > (best.heldMs ?? 0)) best = h;
    return best;
  }

  private message(sem: SemaphoreContext): string {
    const n = this.holders.size + this.untracked;
    if (n > 0) {
      let shortest = Infinity;
      for (const h of this.holders.values()) if (h.heldMs !== undefined && h.heldMs < shortest) shortest = h.heldMs;
      const threshold = sem.info.leakThresholdMs ?? (Number.isFinite(shortest) ? shortest : null);
      const top = this.longest();
      let text = `${sem.label}: ${plural(n, "permit")} held`;
      if (threshold !== null) text += ` > ${fmtMs(threshold)}`;
      text += " and not released";
      if (top?.heldMs !== undefined && n > 1) text += ` (longest ${fmtMs(top.heldMs)})`;
      const frame = firstFrame(top?.stack);
      if (frame !== undefined) text += `, acquired at ${frame}`;
      if (this.brokenAt !== null) text += "; the leak check also failed";
      return text;
    }
    const b = this.lastBreak;
    if (b !== null) {
      return `${sem.label}: leak check failed: available ${b.available} + inUse ${b.inUse} ≠ cap ${b.cap}`;
    }
    return `${sem.label}: the agent reported a broken invariant (available + inUse ≠ cap)`;
  }

  private evidence(): Record<string, unknown> {
    const holders: Record<string, unknown>[] = [];
    for (const h of this.holders.values()) {
      if (holders.length >= MAX_HOLDERS_IN_EVIDENCE) break;
      holders.push({
        holderId: h.holderId,
        t: h.t,
        ...(h.heldMs !== undefined ? { heldMs: h.heldMs } : {}),
        ...(h.stack !== undefined ? { stack: h.stack } : {}),
      });
    }
    return {
      suspectedHolders: this.holders.size + this.untracked,
      holders,
      ...(this.lastBreak !== null ? { check: { ...this.lastBreak } } : {}),
      ...(this.violations > 0 ? { violations: this.violations, violation: this.lastViolation ?? {} } : {}),
    };
  }
}
