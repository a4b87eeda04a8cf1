// The queue in front of the permits. Cancelled waiters (timeout, abort) are left in place and
// skipped when they surface, so cancelling is O(1); dead entries are compacted away once they
// outnumber the live ones, so a long run of timeouts cannot grow the queue without bound.
import type { QueueMode } from "../../shared/protocol/types.js";
import type { Permit, StackCapture } from "./permit.js";
import type { OrderEntry } from "./order-tracker.js";

export const WAITING = 0;
export const GRANTED = 1;
export const CANCELLED = 2;

/** What only some waiters need: kept apart so that a plain waiter stays small (bytes per waiter). */
export interface WaiterExtras {
  timer: ReturnType<typeof setTimeout> | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  stack: StackCapture | undefined;
  order: OrderEntry | undefined;
}

export class Waiter {
  state: typeof WAITING | typeof GRANTED | typeof CANCELLED = WAITING;
  /**
   * Settles the acquire() promise; a rejection goes through it as a rejected promise, so no
   * second resolving function is kept alive per queued waiter.
   */
  settle!: (value: Permit | PromiseLike<Permit>) => void;
  x: WaiterExtras | undefined = undefined;
  constructor(
    readonly weight: number,
    /** performance.now() at the acquire() call: wait times and queue age are exact. */
    readonly enqueuedAt: number,
    readonly priority: number,
    /** Arrival order: FIFO among equal priorities. */
    readonly seq: number,
  ) {}

  extras(): WaiterExtras {
    return (this.x ??= { timer: undefined, signal: undefined, onAbort: undefined, stack: undefined, order: undefined });
  }
}

export interface WaitQueue {
  /** Live waiters. */
  readonly size: number;
  push(w: Waiter): void;
  /** The waiter the discipline admits next, or undefined; `now` lets adaptive mode judge age. */
  peek(now: number): Waiter | undefined;
  /** Remove the waiter `peek` just returned. */
  take(w: Waiter): void;
  /** A waiter was cancelled in place. */
  cancelled(): void;
  /** enqueuedAt of the oldest live waiter, or NaN when empty. */
  oldestEnqueuedAt(): number;
  /** Every live waiter, removed (close()). */
  drain(): Waiter[];
}

const COMPACT_MIN = 1024;

/** An array with a head index: FIFO takes from the front, LIFO from the back; adaptive chooses. */
class DequeQueue implements WaitQueue {
  private items: Waiter[] = [];
  private head = 0;
  private dead = 0;
  size = 0;

  constructor(
    private readonly mode: "fifo" | "lifo" | "adaptive",
    private readonly targetMs: number,
  ) {}

  push(w: Waiter): void {
    this.items.push(w);
    this.size++;
  }

  private front(): Waiter | undefined {
    const items = this.items;
    while (this.head < items.length && items[this.head].state !== WAITING) {
      this.head++;
      this.dead--;
    }
    return this.head < items.length ? items[this.head] : undefined;
  }

  private back(): Waiter | undefined {
    const items = this.items;
    while (items.length > this.head && items[items.length - 1].state !== WAITING) {
      items.pop();
      this.dead--;
    }
    return items.length > this.head ? items[items.length - 1] : undefined;
  }

  peek(now: number): Waiter | undefined {
    if (this.size === 0) return undefined;
    if (this.mode === "fifo") return this.front();
    if (this.mode === "lifo") return this.back();
    const oldest = this.front();
    // Under overload the oldest waiter's caller has likely given up: serve the freshest instead.
    return oldest !== undefined && now - oldest.enqueuedAt >= this.targetMs ? this.back() : oldest;
  }

  take(w: Waiter): void {
    const items = this.items;
    if (this.head < items.length && items[this.head] === w) {
      items[this.head] = undefined as unknown as Waiter;
      this.head++;
    } else {
      items.pop();
    }
    this.size--;
    this.compact();
  }

  cancelled(): void {
    this.size--;
    this.dead++;
    this.compact();
  }

  private compact(): void {
    const items = this.items;
    if (this.head === items.length) {
      items.length = 0;
      this.head = 0;
      this.dead = 0;
      return;
    }
    if (this.head >= COMPACT_MIN && this.head * 2 >= items.length) {
      items.copyWithin(0, this.head);
      items.length -= this.head;
      this.head = 0;
    }
    if (this.dead >= COMPACT_MIN && this.dead > this.size) {
      let j = 0;
      for (let i = this.head; i < items.length; i++) if (items[i].state === WAITING) items[j++] = items[i];
      items.length = j;
      this.head = 0;
      this.dead = 0;
    }
  }

  oldestEnqueuedAt(): number {
    const w = this.front();
    return w === undefined ? NaN : w.enqueuedAt;
  }

  drain(): Waiter[] {
    const out: Waiter[] = [];
    for (let i = this.head; i < this.items.length; i++) if (this.items[i].state === WAITING) out.push(this.items[i]);
    this.items = [];
    this.head = 0;
    this.dead = 0;
    this.size = 0;
    return out;
  }
}

/** Highest priority first, FIFO among equals: a binary heap on (priority desc, seq asc). */
class PriorityQueue implements WaitQueue {
  private heap: Waiter[] = [];
  private dead = 0;
  size = 0;

  private static before(a: Waiter, b: Waiter): boolean {
    return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);
  }

  push(w: Waiter): void {
    const h = this.heap;
    let i = h.length;
    h.push(w);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!PriorityQueue.before(w, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = w;
    this.size++;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop() as Waiter;
    if (h.length === 0) return;
    let i = 0;
    const n = h.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && PriorityQueue.before(h[r], h[l]) ? r : l;
      if (!PriorityQueue.before(h[c], last)) break;
      h[i] = h[c];
      i = c;
    }
    h[i] = last;
  }

  peek(): Waiter | undefined {
    const h = this.heap;
    while (h.length > 0 && h[0].state !== WAITING) {
      this.pop();
      this.dead--;
    }
    return h[0];
  }

  take(): void {
    this.pop();
    this.size--;
  }

  cancelled(): void {
    this.size--;
    this.dead++;
    if (this.dead >= COMPACT_MIN && this.dead > this.size) {
      const live = this.heap.filter((w) => w.state === WAITING);
      this.heap = [];
      this.dead = 0;
      this.size = 0;
      for (const w of live) this.push(w);
    }
  }

  oldestEnqueuedAt(): number {
    // Read once per sample, not per operation: a scan keeps the heap free of a second index.
    let oldest = NaN;
    for (const w of this.heap) if (w.state === WAITING && !(w.enqueuedAt >= oldest)) oldest = w.enqueuedAt;
    return oldest;
  }

  drain(): Waiter[] {
    const out = this.heap.filter((w) => w.state === WAITING).sort((a, b) => (PriorityQueue.before(a, b) ? -1 : 1));
    this.heap = [];
    this.dead = 0;
    this.size = 0;
    return out;
  }
}

export function createQueue(mode: QueueMode, adaptiveTargetMs: number): WaitQueue {
  return mode === "priority" ? new PriorityQueue() : new DequeQueue(mode, adaptiveTargetMs);
}
