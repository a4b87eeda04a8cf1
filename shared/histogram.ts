// The one duration histogram layout every agent and hub uses (docs/protocol.md, "samples"):
// bucket b (0 ≤ b < 256) holds durations d in microseconds with 2^(b/8) ≤ d < 2^((b+1)/8);
// under 1 µs goes in bucket 0, 2^32 µs and over in bucket 255. About 9 % relative error,
// and mergeable across intervals and replicas, which is what makes a fleet p99 a real p99.

export const BUCKETS = 256;
export const SUB_BUCKETS_PER_OCTAVE = 8;

/** A sparse histogram as it travels on the wire: [bucket, count] pairs, buckets ascending. */
export type SparseHist = [bucket: number, count: number][];

export interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  hist: SparseHist;
}

/** A Summary without its histogram: its count, percentiles and max. */
export type SummaryFigures = Omit<Summary, "hist">;

/** Bucket index of a duration given in milliseconds. */
export function bucketOfMs(ms: number): number {
  const us = ms * 1000;
  // `!(us >= 1)` also catches NaN: a clock that went backwards lands in bucket 0, not nowhere.
  if (!(us >= 1)) return 0;
  if (us >= 4294967296) return BUCKETS - 1;
  const b = Math.floor(SUB_BUCKETS_PER_OCTAVE * Math.log2(us));
  return b > BUCKETS - 1 ? BUCKETS - 1 : b;
}

/** Lower bound, in milliseconds, of bucket b. */
export function bucketLowerMs(b: number): number {
  return b <= 0 ? 0 : Math.pow(2, b / SUB_BUCKETS_PER_OCTAVE) / 1000;
}

/** Upper bound (exclusive), in milliseconds, of bucket b. */
export function bucketUpperMs(b: number): number {
  return Math.pow(2, (b + 1) / SUB_BUCKETS_PER_OCTAVE) / 1000;
}

/** A representative value for bucket b: the geometric middle, which halves the worst relative error. */
export function bucketMidMs(b: number): number {
  if (b <= 0) return bucketUpperMs(0) / 2;
  return Math.pow(2, (b + 0.5) / SUB_BUCKETS_PER_OCTAVE) / 1000;
}

/**
 * A dense histogram with its exact max, kept where values are recorded (agent) or merged (hub).
 * `counts` is a plain typed array so that recording is an index and an increment.
 */
export class DenseHist {
  readonly counts = new Float64Array(BUCKETS);
  count = 0;
  max = 0;

  /** Record one duration in ms with a weight (a sampled record stands for `weight` records). */
  record(ms: number, weight = 1): void {
    this.counts[bucketOfMs(ms)] += weight;
    this.count += weight;
    if (ms > this.max) this.max = ms;
  }

  /** Record `n` durations known to be under 1 µs (an immediate grant waits 0). */
  recordZero(n = 1): void {
    this.counts[0] += n;
    this.count += n;
  }

  addSparse(hist: SparseHist, max: number): void {
    for (const [b, c] of hist) {
      this.counts[b] += c;
      this.count += c;
    }
    if (max > this.max) this.max = max;
  }

  addDense(other: DenseHist): void {
    const src = other.counts;
    const dst = this.counts;
    for (let b = 0; b < BUCKETS; b++) dst[b] += src[b];
    this.count += other.count;
    if (other.max > this.max) this.max = other.max;
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.max = 0;
  }

  /** The q-quantile (0..1), never above the exact max. 0 when empty. */
  quantile(q: number): number {
    return quantileOfDense(this.counts, this.count, this.max, q);
  }

  toSparse(): SparseHist {
    const out: SparseHist = [];
    const c = this.counts;
    for (let b = 0; b < BUCKETS; b++) {
      // Counts may be fractional only if a caller weighted them so; the wire wants integers.
      if (c[b] > 0) out.push([b, Math.round(c[b])]);
    }
    return out;
  }

  summary(): Summary {
    return {
      count: Math.round(this.count),
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
      max: this.max,
      hist: this.toSparse(),
    };
  }
}

function quantileOfDense(counts: ArrayLike<number>, total: number, max: number, q: number): number {
  if (total <= 0) return 0;
  // Nearest-rank on the bucket counts: the smallest bucket whose cumulative count reaches q·total.
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let b = 0; b < BUCKETS; b++) {
    seen += counts[b];
    if (seen >= rank) {
      const v = bucketMidMs(b);
      return b === 0 ? Math.min(v, max) : Math.min(v, max > 0 ? max : v);
    }
  }
  return max;
}

/** Quantile of a sparse histogram (the hub's view), bounded by the known max. */
export function quantileOfSparse(hist: SparseHist, max: number, q: number): number {
  let total = 0;
  for (const [, c] of hist) total += c;
  if (total <= 0) return 0;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [b, c] of hist) {
    seen += c;
    if (seen >= rank) return Math.min(bucketMidMs(b), max > 0 ? max : Infinity);
  }
  return max;
}

/**
 * Summaries merged one at a time (counts add, histograms merge, percentiles from the merged
 * histogram), each added either as a Summary or as the numbers a keeper holds it as
 * (latest-sample.ts): a fleet merge reads every member's latest interval, and building a Summary
 * per member for it only to drop it was most of what a /ui delta left for the young GC to copy.
 */
export class SummaryMerge {
  private count = 0;
  private max = 0;
  private lo = BUCKETS;
  private hi = -1;
  /** Cleared over the span used by each take(): one merger serves merge after merge. */
  private readonly dense = new Float64Array(BUCKETS);

  addSummary(s: Summary): void {
    this.addTotals(s.count, s.max);
    this.addHist(s.hist);
  }

  /** A histogram alone (no count or max). */
  addHist(hist: SparseHist): void {
    for (const [b, c] of hist) this.addPair(b, c);
  }

  /** A summary held as numbers: its count and max, and its `n` pairs (bucket, count) from pairs[at]. */
  addNumbers(count: number, max: number, pairs: Float64Array, at: number, n: number): void {
    this.addTotals(count, max);
    for (let i = 0; i < n; i++) this.addPair(pairs[at + 2 * i], pairs[at + 2 * i + 1]);
  }

  /** The merged histogram alone, and ready for the next merge. */
  takeHist(): SparseHist {
    const dense = this.dense;
    const out: SparseHist = [];
    for (let b = Math.max(0, this.lo); b <= this.hi && b < BUCKETS; b++) if (dense[b] > 0) out.push([b, dense[b]]);
    this.clear();
    return out;
  }

  /** The merged summary (what emptySummary() gives when nothing was added), and ready for the next merge. */
  take(): Summary {
    const { count, p50, p90, p99, max } = this.figures();
    return { count, p50, p90, p99, max, hist: this.takeHist() };
  }

  /**
   * take() without the merged histogram, which is never built: a fleet view shows percentiles,
   * and the pairs of every group's merge were most of what it allocated.
   */
  takeFigures(): SummaryFigures {
    const out = this.figures();
    this.clear();
    return out;
  }

  /** The percentiles quantileOfSparse reads from the merged histogram, read from the dense counts. */
  private figures(): SummaryFigures {
    const dense = this.dense;
    const lo = Math.max(0, this.lo);
    const hi = Math.min(this.hi, BUCKETS - 1);
    // Summed in ascending bucket order over the buckets the histogram would hold, as quantileOfSparse sums it.
    let total = 0;
    for (let b = lo; b <= hi; b++) if (dense[b] > 0) total += dense[b];
    const max = this.max;
    const quantile = (q: number): number => {
      if (total <= 0) return 0;
      const rank = Math.max(1, Math.ceil(q * total));
      let seen = 0;
      for (let b = lo; b <= hi; b++) {
        if (!(dense[b] > 0)) continue;
        seen += dense[b];
        if (seen >= rank) return Math.min(bucketMidMs(b), max > 0 ? max : Infinity);
      }
      return max;
    };
    return { count: this.count, p50: quantile(0.5), p90: quantile(0.9), p99: quantile(0.99), max };
  }

  private clear(): void {
    if (this.hi >= this.lo) this.dense.fill(0, Math.max(0, this.lo), this.hi + 1);
    this.lo = BUCKETS;
    this.hi = -1;
    this.count = 0;
    this.max = 0;
  }

  private addTotals(count: number, max: number): void {
    this.count += count;
    if (max > this.max) this.max = max;
  }

  private addPair(b: number, c: number): void {
    this.dense[b] += c;
    if (b < this.lo) this.lo = b;
    if (b > this.hi) this.hi = b;
  }
}

// One for every call: a fleet merges one per group.
const merge = new SummaryMerge();

/** Merge sparse histograms (across intervals or replicas) into one sparse histogram. */
export function mergeSparse(hists: readonly SparseHist[]): SparseHist {
  for (const h of hists) merge.addHist(h);
  return merge.takeHist();
}

/** Merge whole summaries: counts add, the histogram merges, percentiles come from the merged histogram. */
export function mergeSummaries(summaries: readonly Summary[]): Summary {
  for (const s of summaries) merge.addSummary(s);
  return merge.take();
}

/** The summary of no values (what an empty DenseHist gives), a fresh object each time: callers refill it. */
export function emptySummary(): Summary {
  return { count: 0, p50: 0, p90: 0, p99: 0, max: 0, hist: [] };
}
