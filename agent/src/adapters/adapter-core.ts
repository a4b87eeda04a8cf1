// What every adapter shares: the Tracked entry the reporter samples, the holders and waiters it
// saw through the wrapped methods (for wait/hold times, holder ages and leak stacks), and the
// counters. Gauges (cap, inUse, waiters) come from the target itself through `gauges`, so they
// are the target's own truth; what the adapter only sees through its wrappers is listed in
// `blind` when the target does not route every call through them.
import { DenseHist } from "../../../shared/histogram.js";
import type { Sample, SampleLimit, SemaphoreInfo, WireQueueMode } from "../../../shared/protocol/types.js";
import { DEFAULT_FLIGHT_CAPACITY, flightRecorderOption, FlightRecorder, OP_ABORT, OP_DOUBLE_RELEASE, OP_EXPIRE, OP_GRANT, OP_REJECT, OP_RELEASE, OP_REQUEST, OP_TIMEOUT } from "../flight-recorder.js";
import { emptiedOrDropped, type SemaphoreCounters, summaryOf, takeIntervalCounts, zeroCounters } from "../counters.js";
import { checkDuration, checkName, checkPositiveInt } from "../options.js";
import { captureStack, formatStack, type StackCapture } from "../permit.js";
import { emitEvent, isNameTaken, register, type Tracked, unregister } from "../registry.js";
import type { AdaptivePermitsOption } from "../adaptive/adaptive-options.js";
import type { ShareCoordinator } from "../share/share-options.js";
import { SemscopeAdapterError } from "./adapter-error.js";
import { AdjustableCap, checkCapOptions, startingCap, type CapTarget, type CheckedCapOptions } from "../adjustable-cap.js";
import { Call, CallList, type Hold, type Wait } from "./call-list.js";
import { realClearTimeout, realSetTimeout } from "./real-timers.js";

/** Options every adapter takes (docs/agent-api.md, "Instrumenting what a service already has"). */
export interface InstrumentOptions {
  name: string;
  /** Report a holder older than this as a suspected leak, with the line that acquired it. */
  leakThresholdMs?: number;
  /** Fleet-wide budget for this name (docs/protocol.md, rule over_budget). */
  budget?: number;
  /**
   * The cap, for targets that cannot tell their own (async-mutex Semaphore); or, for targets whose
   * cap semscope can change (p-limit, p-queue), `{ adaptive: { min, max, initial? } }`: a cap
   * moved by measured latency, as a Semaphore's (docs/adaptive-limit.md).
   */
  permits?: number | AdaptivePermitsOption;
  /** p-limit, p-queue: the cap is this replica's share of `budget` among the live replicas (docs/shared-budget.md). */
  share?: "replicas";
  /** With share: where the replicas meet ({ redis }). */
  coordinator?: ShareCoordinator;
  /** The flight recorder, as for a Semaphore: true (default, 1,024 operations), a capacity, or false. */
  flightRecorder?: boolean | number;
}

/** Sample and SemaphoreInfo fields an adapter cannot know for its target. */
export type BlindField = keyof Sample | "queue";

/** What describe() returns for an adapter: the wire's SemaphoreInfo plus the fields it is blind to. */
export interface AdapterInfo extends SemaphoreInfo {
  /** Not on the wire (the protocol has no field for it); for local readers and the docs. */
  blind: readonly BlindField[];
}

export interface AdapterHolder {
  holderId: string;
  /** Permits held (async-mutex weights; 1 elsewhere). */
  weight: number;
  heldMs: number;
  stack?: string;
}

export interface AdapterSnapshot {
  name: string;
  kind: string;
  cap: number;
  inUse: number;
  available: number;
  waiters: number;
  oldestWaitMs: number;
  /** Connections being opened for waiters, counted in neither inUse nor waiters (tarn's pending creates); absent where the pool does not tell. */
  opening?: number;
  /** Holders acquired through the adapter since instrument(), oldest first. */
  holders: AdapterHolder[];
}

/** What instrument() returns. */
export interface InstrumentHandle extends Tracked {
  readonly name: string;
  readonly kind: string;
  readonly blind: readonly BlindField[];
  describe(): AdapterInfo;
  snapshot(): AdapterSnapshot;
  counters(): Readonly<SemaphoreCounters>;
  /** Its last operations (undefined with `flightRecorder: false`); the reporter sends it when the hub asks. */
  readonly flightRecorder: FlightRecorder | undefined;
  /** Removes the wrappers (the target's own functions are back, by identity) and stops reporting. */
  untrack(): void;
  /** p-limit, p-queue with permits: { adaptive }: the limit's bounds and last change, with its reason. */
  readonly adaptiveLimit?: Readonly<SampleLimit>;
  readonly tracking: boolean;
}

export interface Gauges {
  cap: number;
  inUse: number;
  waiters: number;
  /** See AdapterSnapshot.opening. */
  opening?: number;
}

export type { Hold, Wait } from "./call-list.js";

export type Failure = "timeout" | "rejection" | "abort" | "error";

const MAX_TIMER_MS = 2_147_483_647;
/** Acquire calls per rate check: a counter decrement per call instead of a clock comparison. */
const RATE_WINDOW_CALLS = 1024;
/** 1024 calls faster than this (≥ ~10k/s) switch the wait and hold times to sampling. */
const HIGH_RATE_WINDOW_MS = 100;
/** Under high rate, one call in (mask + 1) is timed and weighted by (mask + 1), as the Semaphore does. */
const HIGH_RATE_SAMPLE_MASK = 7;

export interface CoreConfig {
  kind: string;
  queue: WireQueueMode;
  blind: readonly BlindField[];
  gauges: () => Gauges;
  /** Undo every wrapper; called once by untrack(). */
  restore: () => void;
  maxWaiters?: number | null;
  acquireTimeoutMs?: number | null;
  /** A per-holder time limit the target enforces itself (p-queue's task timeout). */
  leaseTimeoutMs?: () => number | null;
}

export interface CheckedOptions {
  name: string;
  leakThresholdMs: number | undefined;
  budget: number | undefined;
  permits: number | undefined;
  /** Flight recorder capacity; 0 is off; absent is the default. */
  flightCapacity?: number;
  /** An adaptive limit or a replica share moving the target's cap (../adjustable-cap.ts). */
  cap?: CheckedCapOptions;
}

/** `adjustable`: the adapter can change its target's cap (p-limit, p-queue), so it takes `permits: { adaptive }` and `share`. */
export function checkInstrumentOptions(pkg: string, options: unknown, adjustable = false): CheckedOptions {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`instrument(${pkg}): options object required ({ name })`);
  }
  const o = options as Partial<InstrumentOptions>;
  const name = checkName(o.name);
  const budget = o.budget === undefined ? undefined : checkPositiveInt("budget", o.budget);
  const cap = checkCapOptions(pkg, name, o, budget, adjustable);
  const checked: CheckedOptions = {
    name,
    leakThresholdMs: checkDuration("leakThresholdMs", o.leakThresholdMs),
    budget,
    permits: o.permits === undefined || cap.adaptive !== undefined ? undefined : checkPositiveInt(`instrument(${pkg}) "${name}": permits`, o.permits),
    flightCapacity: flightRecorderOption(o.flightRecorder),
    ...(cap.adaptive !== undefined || cap.share !== undefined ? { cap } : {}),
  };
  if (isNameTaken(name)) {
    throw new RangeError(`instrument(${pkg}): a semaphore named "${name}" already exists in this process (names must be unique; untrack the old one first)`);
  }
  return checked;
}

/** Marks a target as instrumented, so a second instrument() on it is refused instead of double-wrapping. */
const INSTRUMENTED = new WeakSet<object>();

export function claimTarget(pkg: string, target: object): void {
  if (INSTRUMENTED.has(target)) {
    throw new SemscopeAdapterError(pkg, "this target is already instrumented; untrack() the first handle before instrumenting it again");
  }
  INSTRUMENTED.add(target);
}

export function releaseTarget(target: object): void {
  INSTRUMENTED.delete(target);
}

export class AdapterCore implements InstrumentHandle {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly blind: readonly BlindField[];
  readonly leakThresholdMs: number | undefined;
  readonly budget: number | undefined;
  /** Capture acquisition stacks: only when someone will read them (leak reports). */
  readonly stacks: boolean;
  /** The last operations, sent to the hub when it raises an alert here (as for a Semaphore). */
  readonly flightRecorder: FlightRecorder | undefined;

  private readonly cfg: CoreConfig;
  private active = true;
  private readonly waits = new CallList();
  private readonly holds = new CallList();
  private seq = 0;
  /**
   * Clock reads (~55 ns each) are the dearest part of a call: at ordinary rates every call reads
   * it at request, grant and release; past ~10k calls/s only one call in eight does (the others
   * reuse the last reading, then microseconds old), unless a leak watch needs exact ages.
   */
  private readonly exact: boolean;
  private calls = 0;
  private sampleMask = 0;
  private rateCountdown = RATE_WINDOW_CALLS;
  private rateWindowStart = -Infinity;
  private lastNow = 0;
  private readonly total: SemaphoreCounters = zeroCounters();
  private readonly last: SemaphoreCounters = zeroCounters();
  // Made on the first time recorded and dropped after an interval without one (as the Semaphore
  // does): an idle pool holds no 2 KiB bucket arrays.
  private waitHist: DenseHist | null = null;
  private holdHist: DenseHist | null = null;
  private watchTimer: ReturnType<typeof setTimeout> | undefined;
  /** Holders granted through the wrappers and not yet released (an adaptive limit's in-flight). */
  private holding = 0;
  /** What moves the target's cap, once adjustCap() was called with options asking for it. */
  private readonly capOptions: CheckedCapOptions | undefined;
  private capDriver: AdjustableCap | undefined;

  constructor(options: CheckedOptions, cfg: CoreConfig) {
    this.id = options.name;
    this.name = options.name;
    this.kind = cfg.kind;
    this.blind = cfg.blind;
    this.leakThresholdMs = options.leakThresholdMs;
    this.budget = options.budget;
    this.stacks = options.leakThresholdMs !== undefined;
    this.exact = this.stacks;
    this.cfg = cfg;
    this.capOptions = options.cap;
    const capacity = options.flightCapacity ?? DEFAULT_FLIGHT_CAPACITY;
    this.flightRecorder = capacity > 0 ? new FlightRecorder(capacity) : undefined;
    this.flightRecorder?.setHolders(() => [...this.holds].map((h) => ({ holder: h.seq, weight: h.weight, since: h.grantedAt, stack: h.stack })));
    register(this);
  }

  get tracking(): boolean {
    return this.active;
  }

  /**
   * For an adapter whose target's cap can be changed: with `permits: { adaptive }` or `share`, the
   * cap is set now (1 under a share, else the adaptive `initial`) and moved from here on.
   */
  adjustCap(target: CapTarget): void {
    const o = this.capOptions;
    if (o !== undefined && this.capDriver === undefined) this.capDriver = new AdjustableCap(o, this.budget, startingCap(o, target.cap()), target);
  }

  /** With permits: { adaptive }: the bounds and the last change of the limit, with its reason; else undefined. */
  get adaptiveLimit(): Readonly<SampleLimit> | undefined {
    return this.capDriver?.adaptive?.lastChange;
  }

  // ---- what the wrappers call ----

  /**
   * An acquire call begins; `skip` is the wrapper, so the stack starts at the caller's line.
   * `stack`: one taken earlier, where the caller's line was still on the stack (knex's transactions).
   */
  startWait(skip: (...args: never[]) => unknown, stack?: StackCapture): Wait {
    const mask = this.sampleMask;
    const timed = this.exact || (++this.calls & mask) === 0;
    const at = timed ? (this.lastNow = performance.now()) : this.lastNow;
    const c = new Call(at, this.stacks ? (stack ?? captureStack(skip)) : undefined, timed ? mask + 1 : 0);
    if (this.active) {
      this.waits.push(c);
      this.flightRecorder?._push(OP_REQUEST, at, 0, 1, at, undefined);
    }
    return c;
  }

  /** The target granted what `w` asked for: a holder starts (the same object, now a Hold). */
  granted(w: Wait, weight = 1): Hold {
    const c = w as Call;
    const now = c.timedAs !== 0 ? (this.lastNow = performance.now()) : this.lastNow;
    c.done = true;
    this.waits.remove(c);
    c.seq = ++this.seq;
    c.weight = weight;
    c.grantedAt = now;
    if (!this.active) return c;
    if (c.timedAs !== 0) (this.waitHist ??= new DenseHist()).record(now - c.at, c.timedAs);
    this.total.acquired++;
    this.holding++;
    this.holds.push(c);
    this.flightRecorder?._push(OP_GRANT, now, c.seq, weight, c.at, c.stack);
    if (--this.rateCountdown === 0) this.adaptRate();
    if (this.leakThresholdMs !== undefined && this.watchTimer === undefined) this.setWatch(this.leakThresholdMs);
    return c;
  }

  // A fresh reading: the call that ends the window may be an untimed one after an idle spell.
  private adaptRate(): void {
    const now = (this.lastNow = performance.now());
    this.sampleMask = !this.exact && now - this.rateWindowStart < HIGH_RATE_WINDOW_MS ? HIGH_RATE_SAMPLE_MASK : 0;
    this.rateWindowStart = now;
    this.rateCountdown = RATE_WINDOW_CALLS;
  }

  /** The target refused `w`. */
  failed(w: Wait, why: Failure): void {
    w.done = true;
    this.waits.remove(w as Call);
    if (!this.active) return;
    if (why === "timeout") this.total.timeouts++;
    else if (why === "rejection") this.total.rejections++;
    else if (why === "abort") this.total.aborts++;
    if (why !== "error") this.flightRecorder?._push(why === "timeout" ? OP_TIMEOUT : why === "rejection" ? OP_REJECT : OP_ABORT, performance.now(), 0, 1, w.at, undefined);
  }

  /** The holder returned what it held. False when it had already (a double release). */
  released(h: Hold, skip: (...args: never[]) => unknown): boolean {
    if (h.released) {
      this.doubleRelease(h, skip);
      return false;
    }
    h.released = true;
    const c = h as Call;
    if (!this.holds.remove(c) || !this.active) return true;
    this.total.released++;
    let now = this.lastNow;
    if (c.timedAs !== 0) {
      now = this.lastNow = performance.now();
      (this.holdHist ??= new DenseHist()).record(now - c.grantedAt, c.timedAs);
      // Only timed holds feed an adaptive limit (no extra clock read); this one counts as in flight.
      this.capDriver?.adaptive?.sample(now - c.grantedAt, this.holding, now);
    }
    this.holding--;
    this.flightRecorder?._push(OP_RELEASE, now, h.seq, h.weight, h.grantedAt, undefined);
    if (h.leakReported) this.leakResolved(h, "released");
    return true;
  }

  /** The target took the holder's permit back (its own time limit); the holder may still be running. */
  expired(h: Hold): void {
    if (h.released) return;
    h.released = true;
    if (!this.holds.remove(h as Call) || !this.active) return;
    this.total.leaseExpiries++;
    this.holding--;
    const now = performance.now();
    const heldMs = now - h.grantedAt;
    this.flightRecorder?._push(OP_EXPIRE, now, h.seq, h.weight, h.grantedAt, undefined);
    const stack = formatStack(h.stack);
    emitEvent({
      t: Date.now(),
      id: this.id,
      type: "lease_expired",
      holderId: this.holderId(h),
      heldMs,
      ...(stack !== undefined ? { stack } : {}),
      detail: { kind: this.kind, leaseTimeoutMs: this.cfg.leaseTimeoutMs?.() ?? 0 },
    });
    if (h.leakReported) this.leakResolved(h, "lease_expired");
  }

  /** A second release the target refused or ignored; the target's own behaviour is left as it is. */
  doubleRelease(h: Hold | undefined, skip: (...args: never[]) => unknown): void {
    if (!this.active) return;
    this.total.doubleReleases++;
    const capture = captureStack(skip);
    this.flightRecorder?._push(OP_DOUBLE_RELEASE, performance.now(), h?.seq ?? 0, h?.weight ?? 1, h?.grantedAt ?? performance.now(), capture);
    const stack = formatStack(capture);
    emitEvent({
      t: Date.now(),
      id: this.id,
      type: "double_release",
      ...(h !== undefined ? { holderId: this.holderId(h) } : {}),
      ...(stack !== undefined ? { stack } : {}),
      detail: { kind: this.kind },
    });
  }

  holderId(h: Hold): string {
    return `${this.name}#${h.seq}`;
  }

  // ---- leaks: one unref'd timer, armed for the oldest unreported holder ----

  private setWatch(delayMs: number): void {
    this.watchTimer = realSetTimeout(() => this.scan(), Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(delayMs))));
    this.watchTimer.unref?.();
  }

  private scan(): void {
    this.watchTimer = undefined;
    const threshold = this.leakThresholdMs;
    if (!this.active || threshold === undefined) return;
    const now = performance.now();
    let next = Infinity;
    // Holds are in grant order (a Set keeps insertion order): stop at the first one not yet due.
    for (const h of this.holds) {
      if (h.leakReported) continue;
      const age = now - h.grantedAt;
      if (age < threshold) {
        next = h.grantedAt + threshold;
        break;
      }
      this.reportLeak(h, age);
    }
    if (next !== Infinity) this.setWatch(next - now);
  }

  private reportLeak(h: Hold, heldMs: number): void {
    h.leakReported = true;
    const stack = formatStack(h.stack);
    emitEvent({
      t: Date.now(),
      id: this.id,
      type: "leak_suspected",
      holderId: this.holderId(h),
      heldMs,
      ...(stack !== undefined ? { stack } : {}),
      detail: { kind: this.kind, thresholdMs: this.leakThresholdMs ?? 0 },
    });
  }

  private leakResolved(h: Hold, by: "released" | "lease_expired"): void {
    emitEvent({ t: Date.now(), id: this.id, type: "leak_resolved", holderId: this.holderId(h), heldMs: performance.now() - h.grantedAt, detail: { by } });
  }

  // ---- Tracked ----

  describe(): AdapterInfo {
    const { cap } = this.cfg.gauges();
    return {
      id: this.id,
      name: this.name,
      kind: this.kind,
      cap,
      queue: this.cfg.queue,
      maxWaiters: this.cfg.maxWaiters ?? null,
      acquireTimeoutMs: this.cfg.acquireTimeoutMs ?? null,
      leaseTimeoutMs: this.cfg.leaseTimeoutMs?.() ?? null,
      leakThresholdMs: this.leakThresholdMs ?? null,
      scope: "process",
      ...(this.budget !== undefined ? { budget: this.budget } : {}),
      ...(this.capDriver?.share !== undefined ? { share: "replicas" as const } : {}),
      blind: this.blind,
    };
  }

  /** Waits the target dropped without answering (p-queue's clear()): never granted, never failed. */
  forgetWaits(): void {
    this.waits.clear();
  }

  private oldestWaitMs(now: number, targetWaiters: number): number {
    // The target's own count wins: with nobody queued there, a wait of ours is a stale one.
    if (targetWaiters === 0) return 0;
    const w = this.waits.head;
    return w === null ? 0 : Math.max(0, now - w.at);
  }

  private longestHoldMs(now: number): number {
    const h = this.holds.head;
    return h === null ? 0 : Math.max(0, now - h.grantedAt);
  }

  snapshot(): AdapterSnapshot {
    const now = performance.now();
    const g = this.cfg.gauges();
    const holders: AdapterHolder[] = [];
    for (const h of this.holds) {
      const stack = formatStack(h.stack);
      holders.push({ holderId: this.holderId(h), weight: h.weight, heldMs: now - h.grantedAt, ...(stack !== undefined ? { stack } : {}) });
    }
    return {
      name: this.name,
      kind: this.kind,
      cap: g.cap,
      inUse: g.inUse,
      available: g.cap - g.inUse,
      waiters: g.waiters,
      oldestWaitMs: this.oldestWaitMs(now, g.waiters),
      ...(g.opening !== undefined ? { opening: g.opening } : {}),
      holders,
    };
  }

  counters(): Readonly<SemaphoreCounters> {
    return { ...this.total };
  }

  sample(): Sample {
    const now = performance.now();
    const g = this.cfg.gauges();
    const s: Sample = {
      id: this.id,
      cap: g.cap,
      inUse: g.inUse,
      // Derived, so the leak check holds by construction: the target's own numbers are inUse and cap.
      available: g.cap - g.inUse,
      waiters: g.waiters,
      oldestWaitMs: this.oldestWaitMs(now, g.waiters),
      ...takeIntervalCounts(this.total, this.last),
      waitMs: summaryOf(this.waitHist),
      holdMs: summaryOf(this.holdHist),
      longestHoldMs: this.longestHoldMs(now),
    };
    this.capDriver?.fill(s);
    // Sent only while connections are being opened: a sample carrying it counts as changed.
    if (g.opening !== undefined && g.opening > 0) s.opening = g.opening;
    this.waitHist = emptiedOrDropped(this.waitHist);
    this.holdHist = emptiedOrDropped(this.holdHist);
    return s;
  }

  /** Holders not yet released, oldest first (for an adapter's restore). */
  holdsNow(): Iterable<Hold> {
    return this.holds;
  }

  untrack(): void {
    if (!this.active) return;
    this.active = false;
    if (this.watchTimer !== undefined) realClearTimeout(this.watchTimer);
    this.watchTimer = undefined;
    unregister(this);
    this.capDriver?.stop();
    this.cfg.restore();
    this.waits.clear();
    this.holds.clear();
    this.holding = 0;
  }
}

/**
 * Puts `wrapper` on `target[key]` as an own property and returns how to undo it exactly: delete the
 * own property when there was none (the prototype's method shows through again), or put the
 * previous own value back.
 */
export function patchMethod(target: object, key: string, wrapper: unknown): () => void {
  const had = Object.prototype.hasOwnProperty.call(target, key);
  const before = had ? Object.getOwnPropertyDescriptor(target, key) : undefined;
  Object.defineProperty(target, key, { value: wrapper, writable: true, configurable: true, enumerable: before?.enumerable ?? false });
  return () => {
    const now = Object.getOwnPropertyDescriptor(target, key);
    // Someone replaced our wrapper after us: theirs stays, and it still calls ours, which by then passes through.
    if (now === undefined || now.value !== wrapper) return;
    if (before !== undefined) Object.defineProperty(target, key, before);
    else delete (target as Record<string, unknown>)[key];
  };
}

/** Copies a function's `length` and `name` onto its wrapper, so arity-sniffing callers see the original. */
export function sameShape<F extends (...args: never[]) => unknown>(wrapper: F, original: (...args: never[]) => unknown): F {
  Object.defineProperty(wrapper, "length", { value: original.length, configurable: true });
  Object.defineProperty(wrapper, "name", { value: original.name, configurable: true });
  return wrapper;
}
