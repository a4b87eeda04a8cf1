// When each history held was last updated (epoch ms) and its push stamp, by the entry's index in
// one Float64Array rather than as fields of the entry.
//
// Why: V8 boxes a non-small-integer number held in an object's field, and each write allocates a
// new box that every young GC copies; a typed array's elements are written in place. Push stamps
// pass the small-integer range after ~30 hours at 10,000 samples a second, so they live here too.

/** Indices are handed out from 0 and reused once given back; the array doubles as it fills. */
export class RecencyTable {
  private values = new Float64Array(2 * 64);
  private readonly free: number[] = [];
  private used = 0;

  /** An index for a new entry, with its first update. */
  take(updatedAt: number, stamp: number): number {
    let i = this.free.pop();
    if (i === undefined) {
      i = this.used++;
      if (2 * this.used > this.values.length) {
        const grown = new Float64Array(2 * this.values.length);
        grown.set(this.values);
        this.values = grown;
      }
    }
    this.set(i, updatedAt, stamp);
    return i;
  }

  /** Gives an index back: its entry is gone, and a later take() may reuse it. */
  give(i: number): void {
    this.free.push(i);
  }

  set(i: number, updatedAt: number, stamp: number): void {
    const v = this.values;
    v[2 * i] = updatedAt;
    v[2 * i + 1] = stamp;
  }

  updatedAt(i: number): number {
    return this.values[2 * i];
  }

  stamp(i: number): number {
    return this.values[2 * i + 1];
  }
}
