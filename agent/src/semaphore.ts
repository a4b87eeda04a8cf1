// The instrumented counting semaphore (docs/agent-api.md): the public API, argument checks,
// and reading the state. The hot path lives in semaphore-core.ts.
import type { QueueMode, Sample, SampleLimit, SemaphoreInfo } from "../../shared/protocol/types.js";
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
  type AdaptiveSemaphoreOptions,
  type AdaptiveSharedSemaphoreOptions,
  type SemaphoreOptions,
  type SharedSemaphoreOptions,
} from "./options.js";
import type { AdaptiveCap } from "./adaptive/adaptive-cap.js";
import { AdjustableCap } from "./adjustable-cap.js";
import { checkAdaptive, type CheckedAdaptive } from "./adaptive/adaptive-options.js";
import { flightRecorderOption, type FlightRecorder, OP_ABORT, OP_REJECT, OP_TIMEOUT } from "./flight-recorder.js";
import { forgetNode, noteAcquire, ownPromise } from "./order-tracker.js";
import { captureStack, formatStack, type Permit, type StackCapture } from "./permit.js";
import { emitEvent, isNameTaken, register, type Tracked, unregister } from "./registry.js";
import { emptiedOrDropped, sameCounts, summaryOf, takeIntervalCounts, zeroCounters, type SemaphoreCounters } from "./counters.js";
import { DenseHist } from "../../shared/histogram.js";
import { RATE_WINDOW_GRANTS, SemaphoreCore } from "./semaphore-core.js";
import { createQueue, Waiter } from "./wait-queue.js";
import type { ReplicaShare } from "./share/replica-share.js";
import { checkShareOptions, type ShareConfig } from "./share/share-options.js";

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

type Skip = (...args: never[]) => unknown;

export class Semaphore extends SemaphoreCore implements Tracked {
  readonly name: string;
  readonly id: string;
  readonly queueMode: QueueMode;
  readonly maxWaiters: number;
  readonly acquireTimeoutMs: number | undefined;
  readonly detectOrderInversions: boolean;
  readonly budget: number | undefined;

  private readonly stacks: boolean;
  private waiterSeq = 0;
  /** With share: "replicas": what keeps the cap at this replica's share of the budget. */
  private readonly replicaShare: ReplicaShare | undefined;
  /** With permits: { adaptive }: what moves the cap with measured latency. */
  private readonly adaptive: AdaptiveCap | undefined;
  /** What moves the cap (either of the two above), and fills their blocks in a sample. */
  private readonly capDriver: AdjustableCap | undefined;
  /** The totals, cap and permits in use at the previous sample (made by the first one: a semaphore nobody samples never needs it). */
  private lastSampled: (SemaphoreCounters & { cap: number; used: number }) | undefined;

  constructor(options: SemaphoreOptions | SharedSemaphoreOptions | AdaptiveSemaphoreOptions | AdaptiveSharedSemaphoreOptions) {
    const o = normalize(options);
    super(o.permits, createQueue(o.queue, o.adaptiveTargetMs), o.leaseTimeoutMs, o.leakThresholdMs, o.flightCapacity);
    this.name = o.name;
    this.id = o.name;
    this.queueMode = o.queue;
    this.maxWaiters = o.maxWaiters;
    this.acquireTimeoutMs = o.acquireTimeoutMs;
    this.detectOrderInversions = o.detectOrderInversions;
    this.budget = o.budget;
    this.stacks = o.leakThresholdMs !== undefined;
    register(this);
    if (o.adaptive !== undefined || o.share !== undefined) {
      // The same wiring as an adapter's (adjustable-cap.ts): under a replica budget the share is the ceiling the limit moves beneath.
      const driver = new AdjustableCap({ adaptive: o.adaptive, share: o.share }, o.budget, o.permits, {
        cap: () => this.cap,
        setCap: (n) => {
          // applyCap, not resize: a replica waiting for its turn of a rotating budget holds a share of 0.
          if (!this.closed) this.applyCap(n);
        },
      });
      this.capDriver = driver;
      this.adaptive = driver.adaptive;
      this.replicaShare = driver.share;
      if (driver.adaptive !== undefined) this.latencyWindow = driver.adaptive;
    }
  }

  /** The flight recorder's ring (undefined when turned off with `flightRecorder: false`). */
  get flightRecorder(): FlightRecorder | undefined {
    return this.ring() ?? undefined;
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
    if (weight > this.heaviest) throw new RangeError(this.tooHeavy(weight));
    if (this.closed) throw new SemaphoreClosedError(this.name);
    const stack = this.stacks || this.detectOrderInversions ? captureStack(this.tryAcquire) : undefined;
    const order = this.detectOrderInversions ? noteAcquire(this, stack as StackCapture, true) : undefined;
    if (this.queue.size === 0 && this.avail >= weight) {
      const permit = this.grantImmediate(weight, stack);
      if (order !== undefined) order.permit = permit;
      return permit;
    }
    // A refused tryAcquire is load shed, which is what the rejections count is for.
    this.total.rejections++;
    this.noteRefused(OP_REJECT, weight, false);
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
      if (weight > this.heaviest) return Promise.reject(new RangeError(this.tooHeavy(weight)));
    }
    if (this.closed) return Promise.reject(new SemaphoreClosedError(this.name));
    if (signal !== undefined && signal.aborted) {
      this.total.aborts++;
      this.noteRefused(OP_ABORT, weight, true);
      return Promise.reject(abortReason(signal));
    }
    const stack = this.stacks || this.detectOrderInversions ? captureStack(skip) : undefined;
    const order = this.detectOrderInversions ? noteAcquire(this, stack as StackCapture) : undefined;

    if (this.queue.size === 0 && this.avail >= weight) {
      const permit = this.grantImmediate(weight, stack);
      if (order !== undefined) {
        order.permit = permit;
        ownPromise(order);
      }
      return Promise.resolve(permit);
    }
    if (this.queue.size >= this.maxWaiters) {
      this.total.rejections++;
      this.noteRefused(OP_REJECT, weight, true);
      if (order !== undefined) order.dead = true;
      return Promise.reject(new SemaphoreRejectedError(this.name, this.maxWaiters));
    }
    if (timeoutMs === 0) {
      this.total.timeouts++;
      this.noteRefused(OP_TIMEOUT, weight, true);
      if (order !== undefined) order.dead = true;
      return Promise.reject(new SemaphoreTimeoutError(this.name, 0));
    }
    const w = new Waiter(weight, performance.now(), priority, this.waiterSeq++);
    if (stack !== undefined || order !== undefined) {
      const x = w.extras();
      x.stack = stack;
      x.order = order;
    }
    if (order !== undefined) ownPromise(order);
    return this.enqueue(w, timeoutMs, signal);
  }

  /** The heaviest weight that could ever be granted: a replica waiting for its turn at 0 permits (share.ts) will get 1. */
  private get heaviest(): number {
    return Math.max(1, this.cap);
  }

  private tooHeavy(weight: number): string {
    return `Semaphore "${this.name}": weight ${weight} exceeds the ${this.cap} permits and could never be granted`;
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
      ...(this.replicaShare !== undefined ? { share: "replicas" as const } : {}),
    };
  }

  /** With permits: { adaptive }: the bounds and the last change of the limit, with its reason; else undefined. */
  get adaptiveLimit(): Readonly<SampleLimit> | undefined {
    return this.adaptive?.lastChange;
  }

  sample(nowEpochMs: number): Sample {
    const now = performance.now();
    const head = this.holders.head;
    if (this.immediateGrants > 0) (this.waitHist ??= new DenseHist()).recordZero(this.immediateGrants);
    this.immediateGrants = 0;
    const s: Sample = {
      id: this.id,
      cap: this.cap,
      inUse: this.used,
      available: this.avail,
      waiters: this.queue.size,
      oldestWaitMs: this.oldestWaitMs(now),
      ...takeIntervalCounts(this.total, (this.lastSampled ??= { ...zeroCounters(), cap: 0, used: 0 })),
      waitMs: summaryOf(this.waitHist),
      holdMs: summaryOf(this.holdHist),
      longestHoldMs: head === null ? 0 : Math.max(0, now - head._grantedAt),
    };
    this.capDriver?.fill(s);
    // A histogram that saw nothing this interval is let go; the next value makes a new one.
    this.waitHist = emptiedOrDropped(this.waitHist);
    this.holdHist = emptiedOrDropped(this.holdHist);
    // A quiet interval goes back to timing every hold exactly.
    if (s.acquired < RATE_WINDOW_GRANTS) {
      this.sampleMask = 0;
      this.rateCountdown = RATE_WINDOW_GRANTS;
      this.rateWindowStart = -Infinity;
    }
    this.lastSampled.cap = this.cap;
    this.lastSampled.used = this.used;
    if (s.available + s.inUse !== s.cap) {
      emitEvent({ t: nowEpochMs, id: this.id, type: "invariant_violation", detail: { cap: s.cap, inUse: s.inUse, available: s.available } });
    }
    return s;
  }

  /** Nothing to report since the previous sample(): see Tracked.unchangedSinceSample. */
  unchangedSinceSample(): boolean {
    const last = this.lastSampled;
    // A shared budget's share and an adaptive limit are sent every interval: the hub's fill-in for a skipped sample has neither.
    if (last === undefined || this.replicaShare !== undefined || this.adaptive !== undefined || this.queue.size !== 0 || last.cap !== this.cap || last.used !== this.used) return false;
    if (!sameCounts(this.total, last)) return false;
    // What a sample of a quiet interval would have done: back to timing every hold exactly.
    this.sampleMask = 0;
    this.rateCountdown = RATE_WINDOW_GRANTS;
    this.rateWindowStart = -Infinity;
    return true;
  }

  // ---- changing it ----

  /** Change N at run time. Lowering it below what is held leaves `available` negative until holders return. */
  resize(permits: number): void {
    checkPositiveInt(`Semaphore "${this.name}": permits`, permits);
    if (this.closed) throw new SemaphoreClosedError(this.name);
    this.applyCap(permits);
  }

  /** resize() without the check: a replica budget's share may be 0 while the replica waits for its turn. */
  private applyCap(permits: number): void {
    this.avail += permits - this.cap;
    this.cap = permits;
    if (this.queue.size === 0) return;
    for (const w of this.queue.drain()) {
      // A waiter heavier than the new cap could never be granted: refuse it rather than strand it.
      if (w.weight > this.heaviest) {
        this.total.rejections++;
        this.noteRefused(OP_REJECT, w.weight, true);
        this.refuse(w, new RangeError(this.tooHeavy(w.weight)));
      } else this.queue.push(w);
    }
    if (this.avail > 0) this.dispatch(this.touchClock());
  }

  /** Waiters and later acquires reject with SemaphoreClosedError; held permits may still be released. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const w of this.queue.drain()) {
      this.refuse(w, new SemaphoreClosedError(this.name));
    }
    this.stopWatch();
    void this.replicaShare?.stop();
    this.flight?.release();
    unregister(this);
    forgetNode(this);
    return Promise.resolve();
  }
}


interface Normalized {
  name: string;
  permits: number;
  queue: QueueMode;
  maxWaiters: number;
  acquireTimeoutMs: number | undefined;
  leaseTimeoutMs: number | undefined;
  leakThresholdMs: number | undefined;
  adaptiveTargetMs: number;
  detectOrderInversions: boolean;
  budget: number | undefined;
  share: ShareConfig | undefined;
  adaptive: CheckedAdaptive | undefined;
  /** 0: off. */
  flightCapacity: number;
}

/** Every option checked before anything is built: a bad one throws a TypeError or RangeError naming it. */
function normalize(options: SemaphoreOptions | SharedSemaphoreOptions | AdaptiveSemaphoreOptions | AdaptiveSharedSemaphoreOptions): Normalized {
  if (options === null || typeof options !== "object") throw new TypeError("Semaphore: options object required ({ name, permits })");
  const name = checkName(options.name);
  const budget = options.budget === undefined ? undefined : checkPositiveInt("budget", options.budget);
  const { share: shareMode, coordinator } = options as Partial<SharedSemaphoreOptions>;
  const share = checkShareOptions(name, shareMode, coordinator, budget);
  const adaptive = checkAdaptive(name, options.permits);
  const o: Normalized = {
    name,
    // A shared budget starts small: a new replica's share is not known until the others have shrunk.
    permits:
      share !== undefined && (options.permits === undefined || adaptive !== undefined)
        ? 1
        : adaptive !== undefined
          ? adaptive.initial
          : checkPositiveInt(`Semaphore "${name}": permits`, options.permits),
    queue: checkQueue(options.queue),
    maxWaiters: checkMaxWaiters(options.maxWaiters),
    acquireTimeoutMs: checkDuration("acquireTimeoutMs", options.acquireTimeoutMs),
    leaseTimeoutMs: checkDuration("leaseTimeoutMs", options.leaseTimeoutMs),
    leakThresholdMs: checkDuration("leakThresholdMs", options.leakThresholdMs),
    adaptiveTargetMs: checkDuration("adaptiveTargetMs", options.adaptiveTargetMs) ?? DEFAULT_ADAPTIVE_TARGET_MS,
    detectOrderInversions: options.detectOrderInversions === true,
    budget,
    share,
    adaptive,
    flightCapacity: flightRecorderOption(options.flightRecorder),
  };
  if (options.detectOrderInversions !== undefined && typeof options.detectOrderInversions !== "boolean") {
    throw new TypeError(`detectOrderInversions must be a boolean, got ${typeof options.detectOrderInversions}`);
  }
  if (share !== undefined && budget !== undefined && o.permits > budget) {
    throw new RangeError(`Semaphore "${name}": permits (${o.permits}) must not exceed the shared budget (${budget})`);
  }
  if (isNameTaken(name)) {
    throw new RangeError(`Semaphore: a semaphore named "${name}" already exists in this process (names must be unique; close the old one first)`);
  }
  return o;
}
