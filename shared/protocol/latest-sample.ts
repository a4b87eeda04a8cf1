// A semaphore's latest sample held as numbers, rebuilt as a Sample only when someone reads it.
//
// Why: the hub keeps every semaphore's latest sample for one interval (the engine, for status,
// /api/state and the fleet views). Keeping the parsed wire object (with its histograms'
// arrays of pairs) that long has it copied by two young-generation GCs and promoted, for 10,000
// semaphores a second: the hub's scavenges then took 40–90 ms. Copying its numbers into storage
// reused from sample to sample lets the wire object die young. Readers (/api/state, /ui, metrics,
// the global view) are rare next to writes and get a fresh Sample, equal to the one written
// (Float64 holds every wire number exactly), built once per write and kept until the next.
import type { Sample, SampleGlobal, SparseHist, Summary } from "./types.js";

/** The plain-number fields of a Sample, in schema order (waitMs and holdMs go between the last two). */
const NUMBERS = [
  "cap",
  "inUse",
  "available",
  "waiters",
  "oldestWaitMs",
  "acquired",
  "released",
  "timeouts",
  "rejections",
  "aborts",
  "doubleReleases",
  "leaseExpiries",
  "longestHoldMs",
] as const;

/** One Summary's numbers and histogram pairs, in storage reused while it is big enough. */
class SummarySlot {
  count = 0;
  p50 = 0;
  p90 = 0;
  p99 = 0;
  max = 0;
  /** Bucket, count, bucket, count, ... (buckets are 0..255; counts safe integers: exact in Float64). */
  private pairs = new Float64Array(16);
  private length = 0;

  set(s: Summary): void {
    this.count = s.count;
    this.p50 = s.p50;
    this.p90 = s.p90;
    this.p99 = s.p99;
    this.max = s.max;
    const h = s.hist;
    const n = h.length;
    if (2 * n > this.pairs.length) this.pairs = new Float64Array(Math.max(2 * n, 2 * this.pairs.length));
    const p = this.pairs;
    for (let i = 0; i < n; i++) {
      const pair = h[i];
      p[2 * i] = pair[0];
      p[2 * i + 1] = pair[1];
    }
    this.length = n;
  }

  get(): Summary {
    const hist: SparseHist = new Array<[number, number]>(this.length);
    const p = this.pairs;
    for (let i = 0; i < this.length; i++) hist[i] = [p[2 * i], p[2 * i + 1]];
    return { count: this.count, p50: this.p50, p90: this.p90, p99: this.p99, max: this.max, hist };
  }
}

export class LatestSample {
  /** NUMBERS' values, in that order. */
  private readonly values = new Float64Array(NUMBERS.length);
  private readonly wait = new SummarySlot();
  private readonly hold = new SummarySlot();
  private id = "";
  /** Kept as is: only global semaphores send it, and it is small. */
  private global: SampleGlobal | undefined = undefined;
  private held = false;
  /** The Sample last built by get(), until the next set(). */
  private built: Sample | null = null;

  /** Whether a sample has been set. */
  get present(): boolean {
    return this.held;
  }

  set(s: Sample): void {
    const v = this.values;
    v[0] = s.cap;
    v[1] = s.inUse;
    v[2] = s.available;
    v[3] = s.waiters;
    v[4] = s.oldestWaitMs;
    v[5] = s.acquired;
    v[6] = s.released;
    v[7] = s.timeouts;
    v[8] = s.rejections;
    v[9] = s.aborts;
    v[10] = s.doubleReleases;
    v[11] = s.leaseExpiries;
    v[12] = s.longestHoldMs;
    this.wait.set(s.waitMs);
    this.hold.set(s.holdMs);
    // The same id every time for one semaphore: keep the first string, not each packet's copy.
    if (s.id !== this.id) this.id = s.id;
    this.global = s.global;
    this.held = true;
    this.built = null;
  }

  clear(): void {
    this.held = false;
    this.global = undefined;
    this.built = null;
  }

  // Hot readers (status, fleet members) read numbers without building the Sample.
  get cap(): number {
    return this.values[0];
  }
  get inUse(): number {
    return this.values[1];
  }
  get waiters(): number {
    return this.values[3];
  }

  /** The latest sample as a Sample (fields in schema order), or null; do not mutate it. */
  get(): Sample | null {
    if (!this.held) return null;
    if (this.built !== null) return this.built;
    const v = this.values;
    const out: Sample = {
      id: this.id,
      cap: v[0],
      inUse: v[1],
      available: v[2],
      waiters: v[3],
      oldestWaitMs: v[4],
      acquired: v[5],
      released: v[6],
      timeouts: v[7],
      rejections: v[8],
      aborts: v[9],
      doubleReleases: v[10],
      leaseExpiries: v[11],
      waitMs: this.wait.get(),
      holdMs: this.hold.get(),
      longestHoldMs: v[12],
    };
    if (this.global !== undefined) out.global = this.global;
    this.built = out;
    return out;
  }
}
