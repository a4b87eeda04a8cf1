// The flight recorder: per semaphore, a ring of its last operations, kept so that when the hub
// raises an alert it can ask what happened in the seconds before (docs/protocol.md, "Flight
// recorder"). On by default, so it must cost next to nothing: one preallocated Float64Array,
// four numbers per operation (no object per operation), a power-of-two capacity so the slot is
// a mask, and no clock read of its own: the semaphore passes the readings it already took.
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
  readonly capacity: number;
  private readonly mask: number;
  /**
   * Four numbers per operation in one array (fewer loads on the hot path than one array per
   * field): at, since, holder, and weight × 16 + kind (exact while weight < 2^48).
   */
  private readonly data: Float64Array;
  /** Made on the first stack: a semaphore that captures none never pays for the slots. */
  private stacks: (StackCapture | undefined)[] | undefined;
  /** Operations recorded since creation; the next slot is total & mask. */
  total = 0;
  private holdersOf: (() => RingHolder[]) | undefined;

  constructor(capacity: number = DEFAULT_FLIGHT_CAPACITY) {
    this.capacity = flightCapacity(capacity);
    this.mask = this.capacity - 1;
    this.data = new Float64Array(this.capacity * 4);
  }

  /** @internal The semaphore's call: times are readings it already took. */
  _push(kind: number, at: number, holder: number, weight: number, since: number, stack: StackCapture | undefined): void {
    const i = this.total++ & this.mask;
    const d = this.data;
    const j = i << 2;
    d[j] = at;
    d[j + 1] = since;
    d[j + 2] = holder;
    d[j + 3] = weight * 16 + kind;
    const s = this.stacks;
    if (s !== undefined) s[i] = stack;
    else if (stack !== undefined) (this.stacks = new Array<StackCapture | undefined>(this.capacity))[i] = stack;
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
    const n = Math.min(this.total, this.capacity);
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
