// The sparse histograms of a trailing window's samples, as (bucket, count) pairs in two typed-array
// rings rather than the samples' own arrays (see TrailingWindow for why). An entry of the window
// records where its pairs start (append's answer); the window's first entry says where the ring
// starts (dropBefore), and the next entry's start where an entry's pairs end.
import { BUCKETS as LAYOUT_BUCKETS, bucketMidMs, type SparseHist } from "../histogram.js";

// A module's own constant: an imported binding can compile to a getter call (CommonJS output).
const BUCKETS: number = LAYOUT_BUCKETS;

/**
 * Pairs one ring holds at most (before the window is trimmed to fit): 15 full 256-bucket
 * histograms, several times what a 5 s window of 1 s samples ever holds. Keeps a convoy window of
 * a hostile agent (every sample a full histogram, `t` barely advancing) to ~36 KiB a ring.
 */
export const MAX_HIST_PAIRS = 4096 - BUCKETS;

const NONE_B = new Uint8Array(0);
const NONE_C = new Float64Array(0);

export class HistRing {
  // Allocated by the first append: most semaphores never have a convoy window to hold, and at
  // 10,000 of them four typed arrays each (and their buffers) would be 80,000 objects more for
  // every major GC.
  private buckets = NONE_B;
  private counts = NONE_C;
  /** Absolute pair offsets (pair k sits at k % size): the ring holds pairs [start, end). */
  private start = 0;
  private end = 0;

  /** Appends a histogram's pairs; returns the offset of its first pair. */
  append(hist: SparseHist): number {
    const at = this.end;
    if (this.end - this.start + hist.length > this.counts.length) this.grow(this.end - this.start + hist.length);
    const size = this.counts.length;
    for (const [b, c] of hist) {
      const i = this.end % size;
      this.buckets[i] = b;
      this.counts[i] = c;
      this.end++;
    }
    return at;
  }

  /** Forgets the pairs before absolute offset `offset`. */
  dropBefore(offset: number): void {
    if (offset > this.start) this.start = Math.min(offset, this.end);
  }

  clear(): void {
    this.start = this.end = 0;
  }

  /** Pairs held. */
  get length(): number {
    return this.end - this.start;
  }

  /** Absolute offset one past the last pair. */
  get endOffset(): number {
    return this.end;
  }

  /** Adds the pairs [from, to) into `dense` (bucket-indexed), in order. */
  addInto(dense: Float64Array, from: number, to: number): void {
    const size = this.counts.length;
    for (let k = from; k < to; k++) {
      const i = k % size;
      dense[this.buckets[i]] += this.counts[i];
    }
  }

  bytes(): number {
    return this.buckets.byteLength + this.counts.byteLength;
  }

  private grow(need: number): void {
    let size = Math.max(64, this.counts.length);
    while (size < need) size *= 2;
    const buckets = new Uint8Array(size);
    const counts = new Float64Array(size);
    const old = this.counts.length;
    for (let k = this.start; k < this.end; k++) {
      buckets[k % size] = this.buckets[k % old];
      counts[k % size] = this.counts[k % old];
    }
    this.buckets = buckets;
    this.counts = counts;
  }
}

/**
 * A merged histogram's nonzero buckets, ascending, and their total: what mergeSparse(hists)
 * would return and quantileOfSparse would sum, built from a dense merge (the same sums in the
 * same order) into reused arrays.
 */
export class MergedHist {
  /** Bucket-indexed sums to merge into (zero it first), then from(dense). */
  readonly dense = new Float64Array(BUCKETS);
  readonly buckets = new Uint8Array(BUCKETS);
  readonly counts = new Float64Array(BUCKETS);
  length = 0;
  total = 0;

  /** Takes the nonzero buckets of `dense`. */
  from(dense: Float64Array): this {
    let n = 0;
    let total = 0;
    for (let b = 0; b < BUCKETS; b++) {
      const c = dense[b];
      if (c > 0) {
        this.buckets[n] = b;
        this.counts[n] = c;
        total += c;
        n++;
      }
    }
    this.length = n;
    this.total = total;
    return this;
  }

  /** quantileOfSparse(hist, max, q) of the merged histogram. */
  quantile(max: number, q: number): number {
    if (this.total <= 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let i = 0; i < this.length; i++) {
      seen += this.counts[i];
      if (seen >= rank) return Math.min(bucketMidMs(this.buckets[i]), max > 0 ? max : Infinity);
    }
    return max;
  }
}
