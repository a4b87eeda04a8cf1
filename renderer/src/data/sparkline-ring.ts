// The overview's sparklines: the last 60 points of (t, inUse, waiters) per semaphore in
// fixed-size typed-array rings, seeded from the snapshot and appended from each delta. 500
// semaphores cost 500 × 3 × 60 × 8 B = 720 KB and no allocation per update.
import type { Sparkline } from "../../../shared/ui-protocol/types.js";

export class SparkRing {
  readonly t: Float64Array;
  readonly inUse: Float64Array;
  readonly waiters: Float64Array;
  /** Index of the oldest point. */
  head = 0;
  length = 0;
  /** Bumped per change, so the painter redraws only what changed. */
  version = 0;

  constructor(readonly capacity: number) {
    this.t = new Float64Array(capacity);
    this.inUse = new Float64Array(capacity);
    this.waiters = new Float64Array(capacity);
  }

  get lastT(): number | null {
    return this.length === 0 ? null : this.t[(this.head + this.length - 1) % this.capacity];
  }

  push(t: number, inUse: number, waiters: number): boolean {
    const last = this.lastT;
    if (last !== null && t <= last) return false;
    const i = (this.head + this.length) % this.capacity;
    this.t[i] = t;
    this.inUse[i] = inUse;
    this.waiters[i] = waiters;
    if (this.length < this.capacity) this.length++;
    else this.head = (this.head + 1) % this.capacity;
    this.version++;
    return true;
  }

  reset(s: Sparkline | undefined): void {
    this.head = 0;
    this.length = 0;
    if (s !== undefined) {
      const n = Math.min(s.t.length, s.inUse.length, s.waiters.length);
      for (let i = Math.max(0, n - this.capacity); i < n; i++) this.push(s.t[i], s.inUse[i], s.waiters[i]);
    }
    this.version++;
  }

  /** The i-th point from the oldest (0 ≤ i < length). */
  at(i: number): number {
    return (this.head + i) % this.capacity;
  }
}
