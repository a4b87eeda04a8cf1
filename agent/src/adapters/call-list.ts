// One acquire call as the adapter follows it: a wait until the target answers, then, once granted,
// a hold until released. One object for both, linked into one list at a time (the waits, then the
// holds), so a call costs one allocation and constant-time list moves instead of Set operations.
import type { StackCapture } from "../permit.js";

/** One acquire call the adapter saw that has not been answered yet. */
export interface Wait {
  readonly at: number;
  readonly stack: StackCapture | undefined;
  done: boolean;
}

/** One holder the adapter saw granted and not yet released. */
export interface Hold {
  readonly seq: number;
  readonly weight: number;
  readonly grantedAt: number;
  readonly stack: StackCapture | undefined;
  leakReported: boolean;
  released: boolean;
  /** What the adapter keeps with this holder (pg: the checkout's release, to put back on untrack). */
  ext: unknown;
}

export class Call implements Wait, Hold {
  done = false;
  seq = 0;
  weight = 1;
  grantedAt = 0;
  leakReported = false;
  released = false;
  ext: unknown = undefined;
  /** Weight of this call in the wait and hold histograms: 0 when its times were not taken (sampling). */
  timedAs: number;
  prev: Call | null = null;
  next: Call | null = null;
  list: CallList | null = null;

  constructor(
    public at: number,
    readonly stack: StackCapture | undefined,
    timedAs: number,
  ) {
    this.timedAs = timedAs;
  }
}

/** Calls in the order they were added (waits in arrival order, holds in grant order). */
export class CallList {
  head: Call | null = null;
  private tail: Call | null = null;

  push(c: Call): void {
    c.list = this;
    c.prev = this.tail;
    c.next = null;
    if (this.tail === null) this.head = c;
    else this.tail.next = c;
    this.tail = c;
  }

  /** Unlinks `c`; false when it was not in this list. */
  remove(c: Call): boolean {
    if (c.list !== this) return false;
    if (c.prev === null) this.head = c.next;
    else c.prev.next = c.next;
    if (c.next === null) this.tail = c.prev;
    else c.next.prev = c.prev;
    c.prev = c.next = null;
    c.list = null;
    return true;
  }

  clear(): void {
    for (let c = this.head; c !== null; ) {
      const next = c.next;
      c.prev = c.next = null;
      c.list = null;
      c = next;
    }
    this.head = this.tail = null;
  }

  *[Symbol.iterator](): IterableIterator<Call> {
    for (let c = this.head; c !== null; ) {
      const next = c.next;
      yield c;
      c = next;
    }
  }
}
