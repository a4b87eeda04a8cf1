// The semaphore's engine room: counts, the hand-off to waiters, cancellation, and the leak and
// lease watch. Synchronous, constant-time, allocating only the permit (and, for a waiter, its
// promise). Clock reads are the dearest thing here (~55 ns): at ordinary rates every grant and
// release reads the clock, so holder ages and hold times are exact; past ~10k grants/s only one
// grant and one release in eight do, the others reuse the last reading (then at most a few
// microseconds old) and the timed holds are weighted by eight. Leak and lease watches always read
// it, since they act on holder ages.
//
// The flight recorder (flight-recorder.ts) is fed from here with those same readings: it adds
// typed-array writes per operation and no clock read on the grant/release path; only paths that
// had no reading of their own and cost microseconds anyway (a waiter's timer or abort, a
// rejection that builds an Error, a double release) read the clock for it.
import { DenseHist } from "../../shared/histogram.js";
import { type SemaphoreCounters, zeroCounters } from "./counters.js";
import { abortReason, SemaphoreTimeoutError } from "./errors.js";
import { FlightRecorder, OP_ABORT, OP_DOUBLE_RELEASE, OP_EXPIRE, OP_GRANT, OP_REJECT, OP_RELEASE, OP_REQUEST, OP_TIMEOUT } from "./flight-recorder.js";
import { captureStack, EXPIRED, formatStack, HELD, HolderList, Permit, type PermitOwner, RELEASED, type StackCapture } from "./permit.js";
import { emitEvent } from "./registry.js";
import { CANCELLED, GRANTED, WAITING, type Waiter, type WaitQueue } from "./wait-queue.js";

/** Grants per rate check: a counter decrement per grant instead of a clock comparison. */
export const RATE_WINDOW_GRANTS = 1024;
/** 1024 grants faster than this (≥ ~10k/s) switch hold timing to sampling. */
const HIGH_RATE_WINDOW_MS = 100;
/** Under high rate, one hold in (mask + 1) is timed and weighted by (mask + 1). */
const HIGH_RATE_SAMPLE_MASK = 7;
/** setTimeout's ceiling: a longer delay is not refused but fires after 1 ms (TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2_147_483_647;

// One executor for every waiter's promise: a closure per acquire() would be one more object (and
// its context) per queued waiter. The executor runs synchronously inside `new Promise`.
let captured: Waiter["settle"] | undefined;
function captureSettle(resolve: Waiter["settle"]): void {
  captured = resolve;
}

/** Where timed holds go for an adaptive cap (adaptive/adaptive-cap.ts). */
export interface LatencyWindow {
  sample(holdMs: number, inFlight: number, now: number): void;
}

export abstract class SemaphoreCore implements PermitOwner {
  abstract readonly name: string;
  abstract readonly id: string;
  readonly leaseTimeoutMs: number | undefined;
  readonly leakThresholdMs: number | undefined;

  protected cap: number;
  protected avail: number;
  protected used = 0;
  protected closed = false;
  protected readonly holders = new HolderList();
  /** Queued waiters per abort signal, to cancel all of a signal's waiters before dispatching (made on first use). */
  protected signalWaiters: Map<AbortSignal, number> | undefined;
  protected readonly watching: boolean;
  protected watchTimer: ReturnType<typeof setTimeout> | undefined;

  protected readonly total: SemaphoreCounters = zeroCounters();
  /**
   * Made on the first value and dropped after an interval that recorded none (sample()): 2 KiB
   * each, which an idle semaphore (one per tenant, by the thousand) should not carry.
   */
  protected waitHist: DenseHist | null = null;
  protected holdHist: DenseHist | null = null;
  /** Grants that waited 0: a counter here, folded into waitHist when sampled. */
  protected immediateGrants = 0;
  private grants = 0;
  protected sampleMask = 0;
  protected rateCountdown = RATE_WINDOW_GRANTS;
  protected rateWindowStart = -Infinity;
  /** The last clock reading, reused by unsampled grants at high rate. */
  private lastNow = 0;
  /** The ring of recent operations, made by the first one (ring()); null until then and when off. */
  protected flight: FlightRecorder | null = null;
  /** An adaptive cap's latency window, fed the hold times release already measures. */
  protected latencyWindow: LatencyWindow | null = null;
  /** Its capacity; 0: the recorder is off. */
  private readonly flightCapacity: number;

  protected constructor(
    permits: number,
    protected readonly queue: WaitQueue,
    leaseTimeoutMs: number | undefined,
    leakThresholdMs: number | undefined,
    flightCapacity = 0,
  ) {
    this.flightCapacity = flightCapacity;
    this.cap = permits;
    this.avail = permits;
    this.leaseTimeoutMs = leaseTimeoutMs;
    this.leakThresholdMs = leakThresholdMs;
    this.watching = leaseTimeoutMs !== undefined || leakThresholdMs !== undefined;
  }

  /** A permit for a caller that did not wait (acquire with room, tryAcquire). */
  protected grantImmediate(weight: number, stack: StackCapture | undefined): Permit {
    this.immediateGrants++;
    const mask = this.sampleMask;
    const now = (this.grants + 1) & mask && !this.watching ? this.lastNow : (this.lastNow = performance.now());
    return this.grant(weight, now, now, stack);
  }

  private grant(weight: number, now: number, since: number, stack: StackCapture | undefined): Permit {
    this.avail -= weight;
    this.used += weight;
    this.total.acquired++;
    const seq = ++this.grants;
    const mask = this.sampleMask;
    const permit = new Permit(this, weight, seq, now, (seq & mask) === 0 ? mask + 1 : 0, stack);
    this.holders.push(permit);
    const f = this.flight ?? this.ring();
    if (f !== null) f._push(OP_GRANT, now, seq, weight, since, stack);
    if (--this.rateCountdown === 0) this.adaptRate();
    if (this.watching && this.watchTimer === undefined) this.armWatch(now, permit);
    return permit;
  }

  // A fresh reading: the grant that ends the window may be an unsampled one after an idle spell.
  private adaptRate(): void {
    const now = (this.lastNow = performance.now());
    this.sampleMask = now - this.rateWindowStart < HIGH_RATE_WINDOW_MS ? HIGH_RATE_SAMPLE_MASK : 0;
    this.rateWindowStart = now;
    this.rateCountdown = RATE_WINDOW_GRANTS;
  }

  /** @internal Called by Permit.release(). */
  _release(p: Permit): void {
    if (p._state !== HELD) {
      // A late release after lease expiry is expected, not a second release.
      if (p._state === RELEASED) this.doubleRelease(p);
      return;
    }
    p._state = RELEASED;
    this.holders.remove(p);
    this.avail += p.weight;
    this.used -= p.weight;
    this.total.released++;
    let now = NaN;
    if (p._sampleWeight !== 0) {
      now = this.lastNow = performance.now();
      (this.holdHist ??= new DenseHist()).record(now - p._grantedAt, p._sampleWeight);
    }
    const f = this.flight ?? this.ring();
    if (f !== null) f._push(OP_RELEASE, now === now ? now : this.lastNow, p._seq, p.weight, p._grantedAt, undefined);
    if (p._leakReported) this.leakResolved(p, "released");
    if (this.queue.size !== 0) this.dispatch(now === now ? now : (this.lastNow = performance.now()));
    // Last, so a cap it changes acts on a settled count; only timed holds feed it (no extra clock read).
    if (this.latencyWindow !== null && now === now) this.latencyWindow.sample(now - p._grantedAt, this.used + p.weight, now);
  }

  /** Queue a waiter; returns the promise acquire() hands back. */
  protected enqueue(w: Waiter, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<Permit> {
    const promise = new Promise<Permit>(captureSettle);
    w.settle = captured as Waiter["settle"];
    captured = undefined;
    this.queue.push(w);
    // acquire() read the clock for enqueuedAt: the freshest reading, for whatever reuses one next.
    this.lastNow = w.enqueuedAt;
    const f = this.flight ?? this.ring();
    if (f !== null) f._push(OP_REQUEST, w.enqueuedAt, 0, w.weight, w.enqueuedAt, undefined);
    if (timeoutMs !== undefined) this.armTimeout(w, timeoutMs, timeoutMs);
    if (signal !== undefined) {
      const x = w.extras();
      x.signal = signal;
      x.onAbort = () => this.cancel(w, abortReason(signal), "abort");
      signal.addEventListener("abort", x.onAbort, { once: true });
      const bySignal = (this.signalWaiters ??= new Map());
      bySignal.set(signal, (bySignal.get(signal) ?? 0) + 1);
    }
    // LIFO and priority may rank the newcomer first: it gets free permits now, not at the next release.
    if (this.avail > 0) this.dispatch(w.enqueuedAt);
    return promise;
  }

  /** A timeout past setTimeout's ceiling is waited out in steps, so it never fires early. */
  private armTimeout(w: Waiter, timeoutMs: number, remainingMs: number): void {
    const timer =
      remainingMs <= MAX_TIMER_MS
        ? setTimeout(() => this.cancel(w, new SemaphoreTimeoutError(this.name, timeoutMs), "timeout"), remainingMs)
        : setTimeout(() => this.armTimeout(w, timeoutMs, remainingMs - MAX_TIMER_MS), MAX_TIMER_MS);
    // A waiter's timer must not keep the host alive on its own; its promise does that if awaited.
    timer.unref?.();
    w.extras().timer = timer;
  }

  /** Admit waiters while the next one by the discipline fits; never skip a heavy head. */
  protected dispatch(now: number): void {
    const q = this.queue;
    while (q.size !== 0) {
      const w = q.peek(now);
      if (w === undefined) return;
      const x = w.x;
      // A waiter whose signal has aborted but whose listener has not run yet (a release made by an
      // earlier listener of the same signal) is refused here, never granted.
      if (x !== undefined && x.signal !== undefined && x.signal.aborted) {
        this.drop(w, abortReason(x.signal), "abort", now);
        continue;
      }
      if (w.weight > this.avail) return;
      q.take(w);
      this.detach(w, GRANTED);
      const permit = this.grant(w.weight, now, w.enqueuedAt, x?.stack);
      if (x !== undefined && x.order !== undefined) x.order.permit = permit;
      (this.waitHist ??= new DenseHist()).record(now - w.enqueuedAt);
      w.settle(permit);
    }
  }

  /** A waiter leaves the queue's world: its timer and abort listener go with it. */
  protected detach(w: Waiter, state: typeof GRANTED | typeof CANCELLED): void {
    w.state = state;
    const x = w.x;
    if (x === undefined) return;
    if (x.timer !== undefined) clearTimeout(x.timer);
    if (x.onAbort !== undefined) {
      const s = x.signal as AbortSignal;
      s.removeEventListener("abort", x.onAbort);
      const bySignal = this.signalWaiters as Map<AbortSignal, number>;
      const n = (bySignal.get(s) as number) - 1;
      if (n === 0) bySignal.delete(s);
      else bySignal.set(s, n);
    }
    if (state === CANCELLED && x.order !== undefined) x.order.dead = true;
  }

  /** Settle a waiter that leaves without a permit. */
  protected refuse(w: Waiter, reason: unknown): void {
    this.detach(w, CANCELLED);
    w.settle(Promise.reject(reason));
  }

  private cancel(w: Waiter, reason: unknown, why: "timeout" | "abort"): void {
    if (w.state !== WAITING) return;
    // A timer or an abort listener: no reading of this moment to reuse, and the ring needs one.
    this.drop(w, reason, why, this.flightCapacity > 0 ? (this.lastNow = performance.now()) : this.lastNow);
    // Other waiters on the same aborted signal are still queued; their listeners run next, in this
    // same event dispatch, and the last one dispatches: until then they would still count as
    // waiters (adaptive mode would judge the queue's age by them).
    if (why === "abort" && this.signalWaiters?.has(w.x?.signal as AbortSignal) === true) return;
    // A cancelled head may have been what kept lighter waiters from free permits.
    if (this.queue.size !== 0 && this.avail > 0) this.dispatch((this.lastNow = performance.now()));
  }

  /** A waiting waiter leaves the queue rejected. */
  private drop(w: Waiter, reason: unknown, why: "timeout" | "abort", now: number): void {
    this.queue.cancelled();
    if (why === "timeout") this.total.timeouts++;
    else this.total.aborts++;
    const f = this.flight ?? this.ring();
    if (f !== null) f._push(why === "timeout" ? OP_TIMEOUT : OP_ABORT, now, 0, w.weight, w.enqueuedAt, undefined);
    this.refuse(w, reason);
  }

  /** The flight recorder, made now if it is on and was never needed before; null when off. */
  protected ring(): FlightRecorder | null {
    if (this.flight !== null || this.flightCapacity === 0) return this.flight;
    const f = (this.flight = new FlightRecorder(this.flightCapacity));
    f.setHolders(() => {
      const out = [];
      for (let p = this.holders.head; p !== null; p = p._next) out.push({ holder: p._seq, weight: p.weight, since: p._grantedAt, stack: p._stack });
      return out;
    });
    return f;
  }

  /** A fresh reading, kept for reuse (resize's dispatch). */
  protected touchClock(): number {
    return (this.lastNow = performance.now());
  }

  /**
   * An acquire refused without queueing (rejected, timeoutMs 0, aborted before the call, a
   * refused tryAcquire). `fresh`: the caller is about to build an Error (~1-2 µs with its stack),
   * so a clock read is a few per cent of the refusal and keeps a burst of them at its true times
   * (the last reading can be seconds old when every permit is stuck). Otherwise (tryAcquire, the
   * cheap refusal) the last reading.
   */
  protected noteRefused(kind: typeof OP_REJECT | typeof OP_TIMEOUT | typeof OP_ABORT, weight: number, fresh: boolean): void {
    const f = this.flight ?? this.ring();
    if (f === null) return;
    const at = fresh ? (this.lastNow = performance.now()) : this.lastNow;
    f._push(kind, at, 0, weight, at, undefined);
  }

  private doubleRelease(p: Permit): void {
    this.total.doubleReleases++;
    const capture = captureStack(Permit.prototype.release);
    const f = this.flight ?? this.ring();
    if (f !== null) f._push(OP_DOUBLE_RELEASE, (this.lastNow = performance.now()), p._seq, p.weight, p._grantedAt, capture);
    const stack = formatStack(capture);
    emitEvent({
      t: Date.now(),
      id: this.id,
      type: "double_release",
      holderId: p.holderId,
      ...(stack !== undefined ? { stack } : {}),
      detail: { weight: p.weight },
    });
  }

  // ---- leaks and leases: one timer, armed for the oldest holder's next deadline ----

  private armWatch(now: number, youngest: Permit): void {
    const due = youngest._grantedAt + Math.min(this.leaseTimeoutMs ?? Infinity, this.leakThresholdMs ?? Infinity);
    this.setWatch(due - now);
  }

  private setWatch(delayMs: number): void {
    // Past setTimeout's ceiling the timer fires early; the scan then finds nothing due and re-arms.
    this.watchTimer = setTimeout(() => this.scanHolders(), Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(delayMs))));
    this.watchTimer.unref?.();
  }

  private scanHolders(): void {
    this.watchTimer = undefined;
    if (this.closed) return;
    const now = (this.lastNow = performance.now());
    const lease = this.leaseTimeoutMs ?? Infinity;
    const leak = this.leakThresholdMs ?? Infinity;
    let next = Infinity;
    let p = this.holders.head;
    while (p !== null) {
      const after: Permit | null = p._next;
      const age = now - p._grantedAt;
      if (age >= lease) {
        this.expire(p, now);
        p = after;
        continue;
      }
      if (!p._leakReported && age >= leak) this.reportLeak(p, age);
      const due = Math.min(p._grantedAt + lease, p._leakReported ? Infinity : p._grantedAt + leak);
      if (due < next) next = due;
      // Holders are in grant order: after one not yet due, every later one is younger still.
      if (!p._leakReported) break;
      p = after;
    }
    // An expiry above may have admitted waiters, whose grants armed a timer of their own: keep
    // exactly one, for the earliest deadline (those holders were granted at `now`).
    if (this.watchTimer !== undefined) {
      clearTimeout(this.watchTimer);
      this.watchTimer = undefined;
      next = Math.min(next, now + Math.min(lease, leak));
    }
    if (next !== Infinity) this.setWatch(next - now);
  }

  private reportLeak(p: Permit, heldMs: number): void {
    p._leakReported = true;
    const stack = formatStack(p._stack);
    emitEvent({
      t: Date.now(),
      id: this.id,
      type: "leak_suspected",
      holderId: p.holderId,
      heldMs,
      ...(stack !== undefined ? { stack } : {}),
      detail: { weight: p.weight, thresholdMs: this.leakThresholdMs ?? 0 },
    });
  }

  private leakResolved(p: Permit, by: "released" | "lease_expired"): void {
    emitEvent({
      t: Date.now(),
      id: this.id,
      type: "leak_resolved",
      holderId: p.holderId,
      heldMs: performance.now() - p._grantedAt,
      detail: { by },
    });
  }

  private expire(p: Permit, now: number): void {
    p._state = EXPIRED;
    this.holders.remove(p);
    this.avail += p.weight;
    this.used -= p.weight;
    this.total.leaseExpiries++;
    const f = this.flight ?? this.ring();
    if (f !== null) f._push(OP_EXPIRE, now, p._seq, p.weight, p._grantedAt, undefined);
    const stack = formatStack(p._stack);
    emitEvent({
      t: Date.now(),
      id: this.id,
      type: "lease_expired",
      holderId: p.holderId,
      heldMs: now - p._grantedAt,
      ...(stack !== undefined ? { stack } : {}),
      detail: { weight: p.weight, leaseTimeoutMs: this.leaseTimeoutMs ?? 0 },
    });
    if (p._leakReported) this.leakResolved(p, "lease_expired");
    if (this.queue.size !== 0) this.dispatch(now);
  }

  protected stopWatch(): void {
    if (this.watchTimer !== undefined) clearTimeout(this.watchTimer);
    this.watchTimer = undefined;
  }
}
