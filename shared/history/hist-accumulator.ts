// A dense histogram being merged: the open minute's exact roll-up, a range summary, a fleet bucket.
// Quantiles follow DenseHist (../histogram.ts) exactly, nearest rank on the bucket counts, read as
// the bucket's geometric middle and never above the exact max, so a merged p99 here equals the one
// an agent would report for the same durations.

import { BUCKETS as LAYOUT_BUCKETS, bucketMidMs, type Summary, type SparseHist } from "../histogram.js";
import { addPacked, addSparseInto } from "./packed-hist.js";

// A local copy: some loaders compile an imported binding to a getter, and this is read in hot loops.
const BUCKETS: number = LAYOUT_BUCKETS;

/**
 * Index of the bucket holding the q-quantile by nearest rank, or -1 if there is no mass
 * (then the value is 0). `BUCKETS` if rounding left the rank out of reach (then the value is max).
 * The dense counts are `counts[at .. at + BUCKETS)` (`at`: counts kept inside a larger array, the
 * open minute's).
 */
export function quantileBucket(counts: ArrayLike<number>, total: number, q: number, at = 0): number {
  if (total <= 0) return -1;
  const rank = Math.max(1, Math.ceil(q * total));
  // Decoded sketches spread mass in fractions whose float sum can fall a hair short of the total;
  // the slack is far below one count, so integer counts rank exactly as DenseHist ranks them.
  const reach = rank - total * 1e-12;
  let seen = 0;
  for (let b = 0; b < BUCKETS; b++) {
    seen += counts[at + b];
    if (seen >= reach) return b;
  }
  return BUCKETS;
}

/** The value DenseHist reports for a quantile found in bucket b, given the exact max. */
export function bucketValueMs(b: number, max: number): number {
  if (b < 0) return 0;
  if (b >= BUCKETS) return max;
  const mid = bucketMidMs(b);
  if (b === 0) return Math.min(mid, max);
  return max > 0 ? Math.min(mid, max) : mid;
}

/**
 * HistAccumulator.addSummary for a histogram kept in a Float64Array (the open minute's): mass,
 * count and max at `at`, the dense counts from `countsAt`. The same rules: malformed pairs
 * skipped, a non-finite count or max ignored. Change one, change both.
 */
export function addSummaryAt(v: Float64Array, at: number, countsAt: number, s: Summary): void {
  v[at] += addSparseInto(v, s.hist, countsAt);
  if (Number.isFinite(s.count)) v[at + 1] += s.count;
  if (s.max > v[at + 2] && Number.isFinite(s.max)) v[at + 2] = s.max;
}

export class HistAccumulator {
  /** Bytes of typed storage one accumulator holds. */
  static readonly BYTES = BUCKETS * Float64Array.BYTES_PER_ELEMENT;

  readonly counts = new Float64Array(BUCKETS);
  /** Histogram mass: what quantiles rank against. */
  total = 0;
  /** Sum of the summaries' `count`: what the agents counted (equal to `total` unless an agent samples). */
  count = 0;
  max = 0;

  /** See addSummaryAt, its twin for array storage. */
  addSummary(s: Summary): void {
    this.total += addSparseInto(this.counts, s.hist);
    if (Number.isFinite(s.count)) this.count += s.count;
    if (s.max > this.max && Number.isFinite(s.max)) this.max = s.max;
  }

  /** Adds a packed slot, weighted by the count of the row it belongs to. */
  addPacked(slot: Uint8Array, off: number, size: number, count: number, max: number): void {
    this.total += addPacked(this.counts, slot, off, size, count);
    this.count += count;
    if (max > this.max) this.max = max;
  }

  addAccumulator(other: HistAccumulator): void {
    this.addCounts(other.counts, other.total, other.count, other.max);
  }

  /** Adds dense counts held elsewhere (the open minute's, from `src[at]`), with their mass, count and max. */
  addCounts(src: ArrayLike<number>, total: number, count: number, max: number, at = 0): void {
    const dst = this.counts;
    for (let b = 0; b < BUCKETS; b++) dst[b] += src[at + b];
    this.total += total;
    this.count += count;
    if (max > this.max) this.max = max;
  }

  reset(): void {
    this.counts.fill(0);
    this.total = 0;
    this.count = 0;
    this.max = 0;
  }

  quantileBucket(q: number): number {
    return quantileBucket(this.counts, this.total, q);
  }

  quantile(q: number): number {
    return bucketValueMs(this.quantileBucket(q), this.max);
  }

  toSummary(): Summary {
    const hist: SparseHist = [];
    for (let b = 0; b < BUCKETS; b++) {
      const c = this.counts[b];
      if (c > 0) hist.push([b, Math.round(c)]);
    }
    return {
      count: this.count,
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
      max: this.max,
      hist,
    };
  }
}
