// A semaphore's latest sample held as numbers, rebuilt as a Sample only when someone reads it.
//
// Why: the hub keeps every semaphore's latest sample for one interval (the engine, for status,
// /api/state and the fleet views). Keeping the parsed wire object (with its histograms'
// arrays of pairs) that long has it copied by two young-generation GCs and promoted, for every
// semaphore every second, which makes each scavenge long. Copying its numbers into storage
// reused from sample to sample lets the wire object die young. Readers (/api/state, /ui, metrics,
// the global view) are rare next to writes and get a fresh Sample, equal to the one written
// (Float64 holds every wire number exactly). The hot readers (each /ui delta and snapshot, the
// fleet merges) read numbers or a Sample without histograms instead, and nothing built is kept:
// a Sample kept from one read to the next sample outlived young GCs just as the wire object did.
import { emptySummary, type SummaryFigures, type SummaryMerge } from "../histogram.js";
import { quietSample } from "./sample-activity.js";
import { SAMPLE_NUMBERS } from "./sample-layout.js";
import { HOLD_AT, mergeSummaryNumbers, PAIRS_AT, readSampleNumbers, readSummaryNumbers, WAIT_AT, writeSampleNumbers } from "./sample-numbers.js";
import type { Sample, SampleGlobal, SampleLimit, SampleLimitChange, SampleShare, SparseHist, Summary } from "./types.js";

/** A Sample whose summaries are figures without histograms (what dashboards are sent); a Sample is one too. */
export type SampleFigures = Omit<Sample, "waitMs" | "holdMs"> & { waitMs: SummaryFigures; holdMs: SummaryFigures };

/** Histogram pairs each Summary has room for at first (wire histograms hold a handful). */
const INITIAL_PAIRS = 8;
/** Changes of an adaptive limit kept per semaphore (the detail chart's markers, the diagnosis's reason). */
export const LIMIT_CHANGES_KEPT = 64;
const CAP = SAMPLE_NUMBERS.indexOf("cap");
const IN_USE = SAMPLE_NUMBERS.indexOf("inUse");
const WAITERS = SAMPLE_NUMBERS.indexOf("waiters");

const NO_CHANGES: readonly SampleLimit[] = Object.freeze([]);

function withoutEarlier(l: SampleLimit): SampleLimitChange {
  const { earlier: _, ...change } = l;
  return change;
}

function readFigures(v: Float64Array, at: number): SummaryFigures {
  const out: SummaryFigures = { count: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  readSummaryNumbers(v, at, out);
  return out;
}

function readSummary(v: Float64Array, at: number, pairsAt: number): Summary {
  const out = emptySummary();
  const n = readSummaryNumbers(v, at, out);
  const hist: SparseHist = new Array<[number, number]>(n);
  for (let i = 0; i < n; i++) hist[i] = [v[pairsAt + 2 * i], v[pairsAt + 2 * i + 1]];
  out.hist = hist;
  return out;
}

export class LatestSample {
  /**
   * Every number, in one array, laid out as sample-numbers.ts says (the Sample's plain numbers,
   * then each Summary's numbers and its pair count at WAIT_AT, HOLD_AT), then room for `pairs` histogram pairs (bucket, count)
   * of the wait Summary and as many of the hold one. One object, a few adjacent cache lines: a
   * sample arrives for each of 10,000 semaphores between two of this one's, so whatever it is
   * spread over is cold again each time, and each object reached through another is one more
   * wait.
   */
  private values = new Float64Array(PAIRS_AT + 4 * INITIAL_PAIRS);
  /** Pairs each Summary has room for. */
  private pairs = INITIAL_PAIRS;
  /** Kept as is: only global semaphores send it, and it is small. */
  private global: SampleGlobal | undefined = undefined;
  /** Kept as is: only semaphores sharing a budget send it, and it is four fields. */
  private share: SampleShare | undefined = undefined;
  /** Kept as is: only adaptive caps send it; it holds the limit's last change and its reason. */
  private limit: SampleLimit | undefined = undefined;
  /** The limit's changes seen in samples, oldest first, at most LIMIT_CHANGES_KEPT; kept across clear(). */
  private changes: SampleLimit[] | undefined = undefined;
  /** Kept as is: only pools that open connections for waiters send it (knex/tarn). */
  private opening: number | undefined = undefined;
  private held = false;

  /**
   * `id`: the semaphore's, which every sample set here carries (a tracker holds one semaphore).
   * Kept once rather than taken from each sample: comparing each packet's copy with the kept
   * string read the kept one's characters on every sample.
   */
  constructor(private readonly id: string) {}

  /** Whether a sample has been set. */
  get present(): boolean {
    return this.held;
  }

  /**
   * Reads the first number set() writes and the first of its hold histogram's pairs (the far end
   * of what a usual sample writes), changing nothing (see SemaphoreTracker.warm).
   */
  warm(): number {
    const v = this.values;
    return v[0] + v[PAIRS_AT + 2 * this.pairs];
  }

  set(s: Sample): void {
    const most = Math.max(s.waitMs.hist.length, s.holdMs.hist.length);
    if (most > this.pairs) {
      this.pairs = Math.max(most, 2 * this.pairs);
      this.values = new Float64Array(PAIRS_AT + 4 * this.pairs);
    }
    writeSampleNumbers(this.values, 0, s, PAIRS_AT, PAIRS_AT + 2 * this.pairs);
    this.global = s.global;
    this.share = s.share;
    this.limit = s.limit;
    if (s.limit !== undefined) {
      const earlier = s.limit.earlier;
      if (earlier !== undefined) for (const c of earlier) this.noteChange(c);
      this.noteChange(s.limit);
    }
    this.opening = s.opening;
    this.held = true;
  }

  clear(): void {
    this.held = false;
    this.global = undefined;
    this.share = undefined;
    this.limit = undefined;
    this.opening = undefined;
  }

  // Hot readers (status, fleet members) read numbers without building the Sample.
  get cap(): number {
    return this.values[CAP];
  }
  get inUse(): number {
    return this.values[IN_USE];
  }
  get waiters(): number {
    return this.values[WAITERS];
  }
  /** The latest sample's share of a budget split across replicas, if it had one. */
  get shareBlock(): SampleShare | undefined {
    return this.held ? this.share : undefined;
  }

  /** The adaptive limit's changes, oldest first (empty for a fixed cap). */
  get limitChanges(): readonly SampleLimit[] {
    return this.changes ?? NO_CHANGES;
  }

  /**
   * A sample carries the last change (its `t` tells one from the next); the first ("initial
   * limit", no `from`) is not a change.
   */
  private noteChange(l: SampleLimit): void {
    if (l.from === undefined) return;
    const list = (this.changes ??= []);
    const prev = list[list.length - 1];
    if (prev !== undefined && prev.t >= l.t) return;
    if (list.length >= LIMIT_CHANGES_KEPT) list.shift();
    // Kept without `earlier`: each of those is an entry of its own.
    list.push(l.earlier === undefined ? l : withoutEarlier(l));
  }

  /**
   * Copies the numbers before the histograms' pairs (sample-numbers.ts: the plain numbers, then
   * each Summary's from WAIT_AT and HOLD_AT) to `into` from `at`, building nothing; false, copying
   * nothing, before the first sample.
   */
  copyNumbers(into: Float64Array, at: number): boolean {
    if (!this.held) return false;
    const v = this.values;
    for (let i = 0; i < PAIRS_AT; i++) into[at + i] = v[i];
    return true;
  }

  /**
   * Adds the latest sample's wait and hold summaries to `wait` and `hold` from the numbers,
   * building nothing (a fleet entry's merge); adds nothing before the first sample.
   */
  mergeInto(wait: SummaryMerge, hold: SummaryMerge): void {
    if (!this.held) return;
    const v = this.values;
    mergeSummaryNumbers(v, WAIT_AT, PAIRS_AT, wait);
    mergeSummaryNumbers(v, HOLD_AT, PAIRS_AT + 2 * this.pairs, hold);
  }

  /** The latest sample as a fresh Sample (fields in schema order), or null. */
  get(): Sample | null {
    const out = this.shape();
    if (out === null) return null;
    const v = this.values;
    out.waitMs = readSummary(v, WAIT_AT, PAIRS_AT);
    out.holdMs = readSummary(v, HOLD_AT, PAIRS_AT + 2 * this.pairs);
    return out;
  }

  /** get() without the summaries' histograms (fields in the same order), or null. */
  figures(): SampleFigures | null {
    const out: SampleFigures | null = this.shape();
    if (out === null) return null;
    const v = this.values;
    out.waitMs = readFigures(v, WAIT_AT);
    out.holdMs = readFigures(v, HOLD_AT);
    return out;
  }

  /** The Sample's shape with every number but the summaries', which the caller sets; null before the first sample. */
  private shape(): Sample | null {
    if (!this.held) return null;
    // The wire's shape (quietSample's keys), then the numbers as writeSampleNumbers laid them out.
    const out = quietSample(this.id, { cap: 0, inUse: 0, available: 0, longestHoldMs: 0 });
    readSampleNumbers(this.values, 0, out);
    if (this.global !== undefined) out.global = this.global;
    if (this.share !== undefined) out.share = this.share;
    if (this.limit !== undefined) out.limit = this.limit;
    if (this.opening !== undefined) out.opening = this.opening;
    return out;
  }
}
