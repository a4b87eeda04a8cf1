// The instrumented counting semaphore (../shared/AGENT-API.md). The hot path is synchronous,
// constant-time and allocates only the permit: counters are fields, histograms are typed arrays,
// holders are an intrusive list. One clock read per grant keeps holder ages exact (leaks, leases);
// hold durations are timed on every release at ordinary rates and on one release in eight past
// ~10k grants/s, where a second clock read would cost more than the whole semaphore.
import { DenseHist } from "../../shared/histogram.js";
import type { QueueMode, Sample, SemaphoreInfo } from "../../shared/protocol/types.js";
import { abortReason, SemaphoreClosedError, SemaphoreRejectedError, SemaphoreTimeoutError } from "./errors.js";
import {
  type AcquireOptions,
  checkDuration,
  checkMaxWaiters,
  checkName,
  checkPositiveInt,
  checkPriority,
  checkQueue,
  DEFAULT_ADAPTIVE_TARGET_MS,
  type SemaphoreOptions,
} from "./options.js";
import { forgetNode, noteAcquire, ownPromise } from "./order-tracker.js";
import { captureStack, EXPIRED, formatStack, HELD, HolderList, Permit, RELEASED, type StackCapture } from "./permit.js";
import { emitEvent, isNameTaken, register, type Tracked, unregister } from "./registry.js";
import { CANCELLED, createQueue, GRANTED, WAITING, Waiter, type WaitQueue } from "./wait-queue.js";

/** Grants per rate check: a counter decrement per grant instead of a clock comparison. */
const RATE_WINDOW_GRANTS = 1024;
/** 1024 grants faster than this (≥ ~10k/s) switch hold timing to sampling. */
const HIGH_RATE_WINDOW_MS = 100;
/** Under high rate, one hold in (mask + 1) is timed and weighted by (mask + 1). */
const HIGH_RATE_SAMPLE_MASK = 7;
/** setTimeout's ceiling: a longer delay is not refused but fires after 1 ms (TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2_147_483_647;

export interface HolderSnapshot {
  holderId: string;
  weight: number;
  heldMs: number;
  stack?: string;
}

export interface SemaphoreSnapshot {
  name: string;
  cap: number;
  inUse: number;
  available: number;
  waiters: number;
  oldestWaitMs: number;
  holders: HolderSnapshot[];
}

export interface SemaphoreCounters {
  acquired: number;
  released: number;
  timeouts: number;
  rejections: number;
  aborts: number;
  doubleReleases: number;
  leaseExpiries: number;
}

type Skip = (...args: never[]) => unknown;

export class Semaphore implements Tracked {
  readonly name: string;
  readonly id: string;
  readonly queueMode: QueueMode;
  readonly maxWaiters: number;
  readonly acquireTimeoutMs: number | undefined;
  readonly leaseTimeoutMs: number | undefined;
  readonly leakThresholdMs: number | undefined;
  readonly detectOrderInversions: boolean;
  readonly budget: number | undefined;

  private cap: number;
  private avail: number;
  private used = 0;
  private closed = false;
  private readonly queue: WaitQueue;
  private readonly holders = new HolderList();
  /** Queued waiters per abort signal, to cancel all of a signal's waiters before dispatching. */
  private readonly signalWaiters = new Map<AbortSignal, number>();
  private readonly stacks: boolean;
  private readonly watching: boolean;
  private watchTimer: ReturnType<typeof setTimeout> | undefined;

  private grants = 0;
  private waiterSeq = 0;
  private readonly total: SemaphoreCounters = { acquired: 0, released: 0, timeouts: 0, rejections: 0, aborts: 0, doubleReleases: 0, leaseExpiries: 0 };
  private readonly lastSampled: SemaphoreCounters = { ...this.total };
  private readonly waitHist = new DenseHist();
  private readonly holdHist = new DenseHist();
  private sampleMask = 0;
  private rateCountdown = RATE_WINDOW_GRANTS;
  private rateWindowStart = -Infinity;

  constructor(options: SemaphoreOptions) {
    if (options === null || typeof options !== "object") throw new TypeError("Semaphore: options object required ({ name, permits })");
    this.name = checkName(options.name);
    this.id = this.name;
    this.cap = checkPositiveInt(`Semaphore "${this.name}": permits`, options.permits);
    this.avail = this.cap;
    this.queueMode = checkQueue(options.queue);
    this.maxWaiters = checkMaxWaiters(options.maxWaiters);
    this.acquireTimeoutMs = checkDuration("acquireTimeoutMs", options.acquireTimeoutMs);
    this.leaseTimeoutMs = checkDuration("leaseTimeoutMs", options.leaseTimeoutMs);
    this.leakThresholdMs = checkDuration("leakThresholdMs", options.leakThresholdMs);
    const target = checkDuration("adaptiveTargetMs", options.adaptiveTargetMs) ?? DEFAULT_ADAPTIVE_TARGET_MS;
    if (options.detectOrderInversions !== undefined && typeof options.detectOrderInversions !== "boolean") {
      throw new TypeError(`detectOrderInversions must be a boolean, got ${typeof options.detectOrderInversions}`);
    }
    this.detectOrderInversions = options.detectOrderInversions === true;
    this.budget = options.budget === undefined ? undefined : checkPositiveInt("budget", options.budget);
    this.stacks = this.leakThresholdMs !== undefined;
    this.watching = this.leakThresholdMs !== undefined || this.leaseTimeoutMs !== undefined;
    this.queue = createQueue(this.queueMode, target);
    if (isNameTaken(this.id)) {
      throw new RangeError(`Semaphore: a semaphore named "${this.name}" already exists in this process (names must be unique; close the old one first)`);
    }
    register(this);
  }

  get permits(): number {
    return this.cap;
  }
  get available(): number {
    return this.avail;
  }
  get inUse(): number {
    return this.used;
  }
  get waiting(): number {
    return this.queue.size;
  }
  get isClosed(): boolean {
    return this.closed;
  }

  acquire(options?: AcquireOptions): Promise<Permit> {
    return this.acquireFrom(options, this.acquire);
  }

  /** Runs fn holding a permit, and releases it on every exit path. */
  async use<T>(fn: () => T | PromiseLike<T>, options?: AcquireOptions): Promise<T> {
    const permit = await this.acquireFrom(options, this.use);
    try {
      return await fn();
    } finally {
      permit.release();
    }
  }

  /** A permit now, or undefined; never waits and never overtakes a queued waiter. */
  tryAcquire(weight = 1): Permit | undefined {
    checkPositiveInt(`Semaphore "${this.name}": weight`, weight);
    if (weight > this.cap) throw new RangeError(this.tooHeavy(weight));
    if (this.closed) throw new SemaphoreClosedError(this.name);
    const stack = this.stacks || this.detectOrderInversions ? captureStack(this.tryAcquire) : undefined;
    const order = this.detectOrderInversions ? noteAcquire(this, stack as StackCapture, true) : undefined;
    if (this.queue.size === 0 && this.avail >= weight) {
      const permit = this.grant(weight, performance.now(), stack);
      this.waitHist.recordZero();
      if (order !== undefined) order.permit = permit;
      return permit;
    }
    // A refused tryAcquire is load shed, which is what the rejections count is for.
    this.total.rejections++;
    if (order !== undefined) order.dead = true;
    return undefined;
  }

  private acquireFrom(options: AcquireOptions | undefined, skip: Skip): Promise<Permit> {
    let weight = 1;
    let timeoutMs = this.acquireTimeoutMs;
    let signal: AbortSignal | undefined;
    let priority = 0;
    if (options !== undefined) {
      try {
        if (options === null || typeof options !== "object") throw new TypeError("acquire: options must be an object");
        if (options.weight !== undefined) weight = checkPositiveInt(`Semaphore "${this.name}": weight`, options.weight);
        if (options.timeoutMs !== undefined) timeoutMs = checkDuration("timeoutMs", options.timeoutMs);
        if (options.priority !== undefined) priority = checkPriority(options.priority);
        if (options.signal !== undefined) {
          if (!(options.signal instanceof AbortSignal)) throw new TypeError("acquire: signal must be an AbortSignal");
          signal = options.signal;
        }
      } catch (err) {
        return Promise.reject(err);
      }
      if (weight > this.cap) return Promise.reject(new RangeError(this.tooHeavy(weight)));
    }
    if (this.closed) return Promise.reject(new SemaphoreClosedError(this.name));
    if (signal !== undefined && signal.aborted) {
      this.total.aborts++;
      return Promise.reject(abortReason(signal));
    }
    const stack = this.stacks || this.detectOrderInversions ? captureStack(skip) : undefined;
    const order = this.detectOrderInversions ? noteAcquire(this, stack as StackCapture) : undefined;

    if (this.queue.size === 0 && this.avail >= weight) {
      const permit = this.grant(weight, performance.now(), stack);
      this.waitHist.recordZero();
      if (order !== undefined) {
        order.permit = permit;
        ownPromise(order);
      }
      return Promise.resolve(permit);
    }
    if (this.queue.size >= this.maxWaiters) {
      this.total.rejections++;
      if (order !== undefined) order.dead = true;
      return Promise.reject(new SemaphoreRejectedError(this.name, this.maxWaiters));
    }
    if (timeoutMs === 0) {
      this.total.timeouts++;
      if (order !== undefined) order.dead = true;
      return Promise.reject(new SemaphoreTimeoutError(this.name, 0));
    }
    const w = new Waiter(weight, priority, this.waiterSeq++, performance.now(), stack, order);
    if (order !== undefined) ownPromise(order);
    const promise = new Promise<Permit>((resolve, reject) => {
      w.resolve = resolve as (value: never) => void;
      w.reject = reject;
    });
    this.queue.push(w);
    if (timeoutMs !== undefined) this.armTimeout(w, timeoutMs, timeoutMs);
    if (signal !== undefined) {
      const s = signal;
      w.signal = s;
      w.onAbort = () => this.cancel(w, abortReason(s), "abort");
      s.addEventListener("abort", w.onAbort, { once: true });
      this.signalWaiters.set(s, (this.signalWaiters.get(s) ?? 0) + 1);
    }
    return promise;
  }

  /** A timeout past setTimeout's ceiling is waited out in steps, so it never fires early. */
  private armTimeout(w: Waiter, timeoutMs: number, remainingMs: number): void {
    w.timer =
      remainingMs <= MAX_TIMER_MS
        ? setTimeout(() => this.cancel(w, new SemaphoreTimeoutError(this.name, timeoutMs), "timeout"), remainingMs)
        : setTimeout(() => this.armTimeout(w, timeoutMs, remainingMs - MAX_TIMER_MS), MAX_TIMER_MS);
    // A waiter's timer must not keep the host alive on its own; its promise does that if awaited.
    w.timer.unref?.();
  }

  private tooHeavy(weight: number): string {
    return `Semaphore "${this.name}": weight ${weight} exceeds the ${this.cap} permits and could never be granted`;
  }

  private grant(weight: number, now: number, stack: StackCapture | undefined): Permit {
    this.avail -= weight;
    this.used += weight;
    this.total.acquired++;
    const seq = ++this.grants;
    const mask = this.sampleMask;
    const permit = new Permit(this, weight, seq, now, (seq & mask) === 0 ? mask + 1 : 0, stack);
    this.holders.push(permit);
    if (--this.rateCountdown === 0) this.adaptRate(now);
    if (this.watching && this.watchTimer === undefined) this.armWatch(now, permit);
    return permit;
  }

  private adaptRate(now: number): void {
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
      now = performance.now();
      this.holdHist.record(now - p._grantedAt, p._sampleWeight);
    }
    if (p._leakReported) this.leakResolved(p, "released");
    if (this.queue.size !== 0) this.dispatch(now === now ? now : performance.now());
  }

  /** Admit waiters while the next one by the discipline fits; never skip a heavy head. */
  private dispatch(now: number): void {
    const q = this.queue;
    while (q.size !== 0) {
      const w = q.peek(now);
      if (w === undefined) return;
      // A waiter whose signal has aborted but whose listener has not run yet (a release made by an
      // earlier listener of the same signal) is refused here, never granted.
      if (w.signal !== undefined && w.signal.aborted) {
        this.drop(w, abortReason(w.signal), "abort");
        continue;
      }
      if (w.weight > this.avail) return;
      q.take(w);
      this.detach(w, GRANTED);
      const permit = this.grant(w.weight, now, w.stack);
      if (w.order !== undefined) w.order.permit = permit;
      this.waitHist.record(now - w.enqueuedAt);
      w.resolve(permit as never);
    }
  }

  /** A waiter leaves the queue's world: its timer and abort listener go with it. */
  private detach(w: Waiter, state: typeof GRANTED | typeof CANCELLED): void {
    w.state = state;
    if (w.timer !== undefined) clearTimeout(w.timer);
    if (w.onAbort !== undefined) {
      const s = w.signal as AbortSignal;
      s.removeEventListener("abort", w.onAbort);
      const n = (this.signalWaiters.get(s) as number) - 1;
      if (n === 0) this.signalWaiters.delete(s);
      else this.signalWaiters.set(s, n);
    }
    if (state === CANCELLED && w.order !== undefined) w.order.dead = true;
  }

  private cancel(w: Waiter, reason: unknown, why: "timeout" | "abort"): void {
    if (w.state !== WAITING) return;
    this.drop(w, reason, why);
    // Other waiters on the same aborted signal are still queued; their listeners run next, in this
    // same event dispatch, and the last one dispatches: until then they would still count as
    // waiters (adaptive mode would judge the queue's age by them).
    if (why === "abort" && this.signalWaiters.has(w.signal as AbortSignal)) return;
    // A cancelled head may have been what kept lighter waiters from free permits.
    if (this.queue.size !== 0 && this.avail > 0) this.dispatch(performance.now());
  }

  /** A waiting waiter leaves the queue rejected. */
  private drop(w: Waiter, reason: unknown, why: "timeout" | "abort"): void {
    this.detach(w, CANCELLED);
    this.queue.cancelled();
    if (why === "timeout") this.total.timeouts++;
    else this.total.aborts++;
    w.reject(reason);
  }

  private doubleRelease(p: Permit): void {
    this.total.doubleReleases++;
    const stack = formatStack(captureStack(Permit.prototype.release));
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
    const now = performance.now();
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

  /** @internal Order tracker callback. */
  _reportInversion(holding: string, stack: string): void {
    emitEvent({ t: Date.now(), id: this.id, type: "order_inversion", stack, detail: { holding, acquiring: this.name } });
  }

  // ---- reading it ----

  snapshot(): SemaphoreSnapshot {
    const now = performance.now();
    const holders: HolderSnapshot[] = [];
    for (let p = this.holders.head; p !== null; p = p._next) {
      const stack = formatStack(p._stack);
      holders.push({ holderId: p.holderId, weight: p.weight, heldMs: now - p._grantedAt, ...(stack !== undefined ? { stack } : {}) });
    }
    return {
      name: this.name,
      cap: this.cap,
      inUse: this.used,
      available: this.avail,
      waiters: this.queue.size,
      oldestWaitMs: this.oldestWaitMs(now),
      holders,
    };
  }

  /** Cumulative counts since creation (Prometheus counters). */
  counters(): Readonly<SemaphoreCounters> {
    return { ...this.total };
  }

  private oldestWaitMs(now: number): number {
    if (this.queue.size === 0) return 0;
    const at = this.queue.oldestEnqueuedAt();
    return at === at ? Math.max(0, now - at) : 0;
  }

  describe(): SemaphoreInfo {
    return {
      id: this.id,
      name: this.name,
      kind: "semaphore",
      cap: this.cap,
      queue: this.queueMode,
      maxWaiters: this.maxWaiters === Infinity ? null : this.maxWaiters,
      acquireTimeoutMs: this.acquireTimeoutMs ?? null,
      leaseTimeoutMs: this.leaseTimeoutMs ?? null,
      leakThresholdMs: this.leakThresholdMs ?? null,
      scope: "process",
      ...(this.budget !== undefined ? { budget: this.budget } : {}),
    };
  }

  sample(nowEpochMs: number): Sample {
    const now = performance.now();
    const t = this.total;
    const l = this.lastSampled;
    const head = this.holders.head;
    const s: Sample = {
      id: this.id,
      cap: this.cap,
      inUse: this.used,
      available: this.avail,
      waiters: this.queue.size,
      oldestWaitMs: this.oldestWaitMs(now),
      acquired: t.acquired - l.acquired,
      released: t.released - l.released,
      timeouts: t.timeouts - l.timeouts,
      rejections: t.rejections - l.rejections,
      aborts: t.aborts - l.aborts,
      doubleReleases: t.doubleReleases - l.doubleReleases,
      leaseExpiries: t.leaseExpiries - l.leaseExpiries,
      waitMs: this.waitHist.summary(),
      holdMs: this.holdHist.summary(),
      longestHoldMs: head === null ? 0 : Math.max(0, now - head._grantedAt),
    };
    Object.assign(l, t);
    this.waitHist.reset();
    this.holdHist.reset();
    // A quiet interval goes back to timing every hold exactly.
    if (s.acquired < RATE_WINDOW_GRANTS) {
      this.sampleMask = 0;
      this.rateCountdown = RATE_WINDOW_GRANTS;
      this.rateWindowStart = -Infinity;
    }
    if (s.available + s.inUse !== s.cap) {
      emitEvent({ t: nowEpochMs, id: this.id, type: "invariant_violation", detail: { cap: s.cap, inUse: s.inUse, available: s.available } });
    }
    return s;
  }

  // ---- changing it ----

  /** Change N at run time. Lowering it below what is held leaves `available` negative until holders return. */
  resize(permits: number): void {
    checkPositiveInt(`Semaphore "${this.name}": permits`, permits);
    if (this.closed) throw new SemaphoreClosedError(this.name);
    this.avail += permits - this.cap;
    this.cap = permits;
    if (this.queue.size === 0) return;
    for (const w of this.queue.drain()) {
      // A waiter heavier than the new cap could never be granted: refuse it rather than strand it.
      if (w.weight > permits) {
        this.detach(w, CANCELLED);
        this.total.rejections++;
        w.reject(new RangeError(this.tooHeavy(w.weight)));
      } else this.queue.push(w);
    }
    if (this.avail > 0) this.dispatch(performance.now());
  }

  /** Waiters and later acquires reject with SemaphoreClosedError; held permits may still be released. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const w of this.queue.drain()) {
      this.detach(w, CANCELLED);
      w.reject(new SemaphoreClosedError(this.name));
    }
    if (this.watchTimer !== undefined) clearTimeout(this.watchTimer);
    this.watchTimer = undefined;
    unregister(this);
    forgetNode(this);
    return Promise.resolve();
  }
}

