// The flight recorder: per semaphore, a ring of its last operations, kept so that when the hub
// raises an alert it can ask what happened in the seconds before (docs/protocol.md, "Flight
// recorder"). On by default, so it must cost next to nothing: four numbers per operation in one
// Float64Array (no object per operation), a power-of-two size so the slot is a mask, and no clock
// read of its own: the semaphore passes the readings it already took.
//
// It costs nothing until used: the array is made on the first operation, small, and doubles each
// time it fills, up to its capacity. A process with thousands of semaphores (one per tenant) would
// otherwise pay 32 KiB for each: rings of the default capacity grow past RING_FLOOR_OPS only while
// every such ring together stays within RING_BUDGET_OPS; past it they keep wrapping at the size
// they reached. A capacity asked for by number is the owner's choice and is not held back.
import type { FlightHolder, FlightOp, FlightOpKind, FlightRecord } from "../../shared/protocol/types.js";
import { formatStack, type StackCapture } from "./permit.js";

export const OP_REQUEST = 1;
export const OP_GRANT = 2;
export const OP_RELEASE = 3;
export const OP_TIMEOUT = 4;
export const OP_REJECT = 5;
export const OP_ABORT = 6;
export const OP_DOUBLE_RELEASE = 7;
export const OP_EXPIRE = 8;

const KIND_NAMES: readonly (FlightOpKind | undefined)[] = [undefined, "request", "grant", "release", "timeout", "reject", "abort", "double_release", "expire"];
const KIND_CODES: Readonly<Record<FlightOpKind, number>> = {
  request: OP_REQUEST,
  grant: OP_GRANT,
  release: OP_RELEASE,
  timeout: OP_TIMEOUT,
  reject: OP_REJECT,
  abort: OP_ABORT,
  double_release: OP_DOUBLE_RELEASE,
  expire: OP_EXPIRE,
};

export const DEFAULT_FLIGHT_CAPACITY = 1024;
/** 2^16 operations: ~1.9 MiB for one semaphore, beyond what one answer can carry anyway. */
export const MAX_FLIGHT_CAPACITY = 65536;
/** The first array a ring makes: 16 operations, 512 bytes. */
export const RING_FIRST_OPS = 16;
/** Every ring may grow this far (2 KiB) whatever the others hold. */
export const RING_FLOOR_OPS = 64;
/**
 * Operations all default-capacity rings of the process may hold beyond their floor: 8 MiB, so 256
 * busy semaphores keep their full 1,024 operations, and 10,000 cost at most 8 MiB + 10,000 × 2 KiB.
 */
export const RING_BUDGET_OPS = 262_144;

/** What default-capacity rings hold beyond their floor, process-wide (RING_BUDGET_OPS bounds it). */
const budget = { used: 0 };

/** Operations held beyond their floor by default-capacity rings, process-wide (for tests and benchmarks). */
export function ringBudgetUsed(): number {
  return budget.used;
}

const EMPTY = new Float64Array(0);

/** A holder as the owner of the ring knows it: `since` is performance.now() at the grant. */
export interface RingHolder {
  holder: number;
  weight: number;
  since: number;
  stack: StackCapture | undefined;
}

/** One recorded operation, read back (times are performance.now() milliseconds). */
export interface RingOp {
  op: FlightOpKind;
  at: number;
  holder: number;
  weight: number;
  /** grant: when acquire() was called; release/expire: when granted; timeout/abort: when queued; else = at. */
  since: number;
  stack: StackCapture | undefined;
}

/** What an adapter passes to FlightRecorder.record(); every field optional. */
export interface FlightOpInit {
  /** The holder's number (a grant sequence); 0 or absent for none. */
  holder?: number;
  /** Permits, a whole number ≥ 1 (default 1; rounded). */
  weight?: number;
  /** performance.now() of the operation; read now when absent. */
  at?: number;
  /** performance.now() the operation started from (see RingOp.since); `at` when absent. */
  since?: number;
  /** A stack trace (Error().stack) to keep with the operation. */
  stack?: string;
}

/** Rounds a capacity request to the power of two the ring uses; throws on nonsense. */
export function flightCapacity(v: unknown): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new RangeError(`flightRecorder: capacity must be an integer ≥ 1, got ${typeof v === "number" ? v : typeof v}`);
  }
  if (v > MAX_FLIGHT_CAPACITY) throw new RangeError(`flightRecorder: capacity must be at most ${MAX_FLIGHT_CAPACITY}, got ${v}`);
  let c = 1;
  while (c < v) c <<= 1;
  return c;
}

/** The `flightRecorder` option as a ring capacity: absent or true is the default, false is 0 (off). */
export function flightRecorderOption(v: unknown): number {
  if (v === undefined || v === true) return DEFAULT_FLIGHT_CAPACITY;
  if (v === false) return 0;
  if (typeof v !== "number") throw new TypeError(`flightRecorder must be a boolean or a capacity (integer ≥ 1), got ${typeof v}`);
  return flightCapacity(v);
}

/**
 * A fixed ring of operations. `_push` is the semaphore's hot path; `record` is the same for an
 * adapter (any library wrapped to report like a Semaphore), which reads the clock itself.
 */
export class FlightRecorder {
  /** The most operations it keeps: what it grows to with use. */
  readonly capacity: number;
  /** Operations recorded since creation (or clear()); the next slot is total & (size − 1). */
  total = 0;
  /**
   * Four numbers per operation in one array (fewer loads on the hot path than one array per
   * field): at, since, holder, and weight × 16 + kind (exact while weight < 2^48). Empty until
   * the first operation.
   */
  private data: Float64Array = EMPTY;
  /** data.length / 4 − 1; −1 while empty, so the first push takes the slow path. */
  private mask = -1;
  /** Made on the first stack: a semaphore that captures none never pays for the slots. */
  private stacks: (StackCapture | undefined)[] | undefined;
  private holdersOf: (() => RingHolder[]) | undefined;
  /** Whether its growth past RING_FLOOR_OPS draws on the process-wide budget. */
  private readonly budgeted: boolean;
  /** What it holds of that budget now. */
  private charged = 0;

  constructor(capacity: number = DEFAULT_FLIGHT_CAPACITY) {
    this.capacity = flightCapacity(capacity);
    this.budgeted = this.capacity === DEFAULT_FLIGHT_CAPACITY;
  }

  /** Operations the ring can hold now (0 until the first one; grows to `capacity`). */
  get size(): number {
    return this.mask + 1;
  }

  /** Bytes its arrays take now. */
  get bytes(): number {
    return this.data.byteLength + (this.stacks === undefined ? 0 : this.stacks.length * 8);
  }

  /** @internal The semaphore's call: times are readings it already took. */
  _push(kind: number, at: number, holder: number, weight: number, since: number, stack: StackCapture | undefined): void {
    // Full (or empty): grow if it may, which changes the mask; otherwise wrap.
    if ((this.total & this.mask) === 0 && this.total > this.mask) this.grow();
    const i = this.total++ & this.mask;
    const d = this.data;
    const j = i << 2;
    d[j] = at;
    d[j + 1] = since;
    d[j + 2] = holder;
    d[j + 3] = weight * 16 + kind;
    const s = this.stacks;
    if (s !== undefined) s[i] = stack;
    else if (stack !== undefined) (this.stacks = new Array<StackCapture | undefined>(this.mask + 1))[i] = stack;
  }

  /** Doubles the ring (or makes its first array), keeping what it holds in order. */
  private grow(): void {
    const size = this.mask + 1;
    if (size >= this.capacity) return;
    const next = size === 0 ? Math.min(RING_FIRST_OPS, this.capacity) : size * 2;
    if (this.budgeted) {
      const charge = Math.max(0, next - RING_FLOOR_OPS) - this.charged;
      if (charge > 0 && budget.used + charge > RING_BUDGET_OPS) return;
      budget.used += charge;
      this.charged += charge;
    }
    const data = new Float64Array(next * 4);
    const stacks = this.stacks === undefined ? undefined : new Array<StackCapture | undefined>(next);
    const nextMask = next - 1;
    for (let k = Math.max(0, this.total - size); k < this.total; k++) {
      const from = (k & this.mask) << 2;
      const to = (k & nextMask) << 2;
      data[to] = this.data[from];
      data[to + 1] = this.data[from + 1];
      data[to + 2] = this.data[from + 2];
      data[to + 3] = this.data[from + 3];
      if (stacks !== undefined) stacks[k & nextMask] = this.stacks?.[k & this.mask];
    }
    this.data = data;
    this.stacks = stacks;
    this.mask = nextMask;
  }

  /** Gives its share of the process-wide budget back (the owner closed). What it holds stays readable. */
  release(): void {
    budget.used -= this.charged;
    this.charged = 0;
  }

  /** Records one operation (for adapters). Never throws into the host: a bad kind is ignored. */
  record(op: FlightOpKind, init: FlightOpInit = {}): void {
    const kind = KIND_CODES[op];
    if (kind === undefined) return;
    const at = typeof init.at === "number" && Number.isFinite(init.at) ? init.at : performance.now();
    const since = typeof init.since === "number" && Number.isFinite(init.since) ? init.since : at;
    const holder = typeof init.holder === "number" && Number.isFinite(init.holder) && init.holder > 0 ? Math.floor(init.holder) : 0;
    // Whole permits: the ring packs weight and kind into one number (weight × 16 + kind).
    const weight = typeof init.weight === "number" && Number.isFinite(init.weight) && init.weight >= 1 ? Math.round(init.weight) : 1;
    this._push(kind, at, holder, weight, since, typeof init.stack === "string" ? { stack: init.stack } : undefined);
  }

  /** Who holds permits now, listed in the ring's answer (the semaphore sets it; an adapter may). */
  setHolders(source: () => RingHolder[]): void {
    this.holdersOf = source;
  }

  /** Operations still in the ring, oldest first. */
  ops(): RingOp[] {
    const n = Math.min(this.total, this.mask + 1);
    const out: RingOp[] = [];
    for (let k = this.total - n; k < this.total; k++) {
      const i = k & this.mask;
      const j = i << 2;
      const kw = this.data[j + 3];
      out.push({
        op: KIND_NAMES[kw % 16] as FlightOpKind,
        at: this.data[j],
        holder: this.data[j + 2],
        weight: Math.floor(kw / 16),
        since: this.data[j + 1],
        stack: this.stacks?.[i],
      });
    }
    return out;
  }

  holders(): RingHolder[] {
    if (this.holdersOf === undefined) return [];
    try {
      return this.holdersOf();
    } catch {
      return [];
    }
  }

  clear(): void {
    this.total = 0;
    this.stacks = undefined;
  }

  /**
   * The ring as the wire's FlightRecord (times on the agent's epoch clock), the newest `maxOps`
   * operations, holders oldest first, stacks deduplicated into a table of at most `maxStacks`.
   */
  toRecord(id: string, alertId: string, nowEpochMs: number, limits: { maxOps: number; maxHolders: number; maxStacks: number }): FlightRecord {
    const offset = nowEpochMs - performance.now();
    const table: string[] = [];
    const byText = new Map<string, number>();
    const stackRef = (capture: StackCapture | undefined): number | undefined => {
      const text = formatStack(capture);
      if (text === undefined) return undefined;
      const known = byText.get(text);
      if (known !== undefined) return known;
      if (table.length >= limits.maxStacks) return undefined;
      byText.set(text, table.length);
      table.push(text);
      return table.length - 1;
    };
    const all = this.ops();
    const kept = all.length > limits.maxOps ? all.slice(all.length - limits.maxOps) : all;
    const now = performance.now();
    // Holders first: the permits that never came back are what a reader looks for.
    const holders: FlightHolder[] = [];
    for (const h of this.holders()) {
      if (holders.length >= limits.maxHolders) break;
      const stack = stackRef(h.stack);
      holders.push({ holder: h.holder, weight: h.weight, heldMs: Math.max(0, now - h.since), ...(stack !== undefined ? { stack } : {}) });
    }
    const ops: FlightOp[] = [];
    // Newest stacks win the table's slots: walk backwards, then restore order.
    for (let k = kept.length - 1; k >= 0; k--) {
      const o = kept[k];
      const op: FlightOp = { t: Math.max(0, o.at + offset), op: o.op, weight: o.weight };
      if (o.holder > 0) op.holder = o.holder;
      const span = Math.max(0, o.at - o.since);
      if (o.op === "grant" || o.op === "timeout" || o.op === "abort") op.waitMs = span;
      else if (o.op === "release" || o.op === "expire") op.holdMs = span;
      const stack = stackRef(o.stack);
      if (stack !== undefined) op.stack = stack;
      ops.push(op);
    }
    ops.reverse();
    return { id, alertId, t: nowEpochMs, capacity: this.capacity, total: this.total, ops, holders, stacks: table };
  }
}
