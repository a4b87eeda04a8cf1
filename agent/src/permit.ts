// A granted permit. The only allocation on the uncontended path; it doubles as the node of the
// semaphore's holder list, so tracking holders costs two pointer writes and no extra object.

/** Where the permit was acquired: captured structurally, formatted only if someone reads it. */
export interface StackCapture {
  stack?: string;
}

export const HELD = 0;
export const RELEASED = 1;
export const EXPIRED = 2;
export type PermitState = typeof HELD | typeof RELEASED | typeof EXPIRED;

/** The part of the semaphore a permit calls back into (kept narrow to avoid an import cycle). */
export interface PermitOwner {
  readonly name: string;
  _release(permit: Permit): void;
}

export class Permit {
  /** @internal */ _state: PermitState = HELD;
  /** @internal */ _prev: Permit | null = null;
  /** @internal */ _next: Permit | null = null;
  /** @internal Weight of the hold-time sample this permit carries (0: not timed). */
  _sampleWeight: number;
  /** @internal */ _leakReported = false;

  constructor(
    /** @internal */ readonly _owner: PermitOwner,
    /** How many permits this grant holds. */
    readonly weight: number,
    /** @internal Sequence number within the semaphore; the holder id on the wire. */
    readonly _seq: number,
    /** @internal performance.now() at the grant: holder ages (leaks, leases) are exact. */
    readonly _grantedAt: number,
    sampleWeight: number,
    /** @internal */ readonly _stack: StackCapture | undefined,
  ) {
    this._sampleWeight = sampleWeight;
  }

  /** Returns the permit. Once: a second call changes no count and is reported as a double release. */
  release(): void {
    this._owner._release(this);
  }

  get holderId(): string {
    return `${this._owner.name}#${this._seq}`;
  }

  /** True until released (or taken back by lease expiry). */
  get held(): boolean {
    return this._state === HELD;
  }

  [Symbol.dispose](): void {
    this.release();
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.release();
    return Promise.resolve();
  }
}

/** Holders in grant order. grantedAt is monotonic, so the head is always the oldest holder. */
export class HolderList {
  head: Permit | null = null;
  tail: Permit | null = null;
  size = 0;

  push(p: Permit): void {
    p._prev = this.tail;
    p._next = null;
    if (this.tail === null) this.head = p;
    else this.tail._next = p;
    this.tail = p;
    this.size++;
  }

  remove(p: Permit): void {
    const prev = p._prev;
    const next = p._next;
    if (prev === null) this.head = next;
    else prev._next = next;
    if (next === null) this.tail = prev;
    else next._prev = prev;
    p._prev = null;
    p._next = null;
    this.size--;
  }
}

export function formatStack(capture: StackCapture | undefined): string | undefined {
  if (capture === undefined) return undefined;
  const s = capture.stack;
  if (s === undefined) return undefined;
  // Drop the "Error" headline: what matters is the frames, starting at the caller.
  const nl = s.indexOf("\n");
  const frames = nl >= 0 && s.startsWith("Error") ? s.slice(nl + 1) : s;
  return frames.length > 16384 ? frames.slice(0, 16384) : frames;
}

export function captureStack(skip: (...args: never[]) => unknown): StackCapture {
  const o: StackCapture = {};
  Error.captureStackTrace(o, skip);
  return o;
}
