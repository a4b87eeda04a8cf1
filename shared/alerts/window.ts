// "For ≥ 5 s" (PROTOCOL.md): consecutive samples whose intervals cover at least 5 s of sample
// time; a gap of more than 2 × intervalMs between samples restarts the window.
//
// A sample at `t` covers (t − intervalMs, t]. What a run of samples covers is the union of those
// intervals: each sample adds its own interval less any overlap with the one before (agent timer
// jitter), so a missing-but-tolerated sample (gap ≤ 2 × interval) restarts nothing yet adds only
// its successor's own interval: a hole is never counted as time the condition held.

/** Sample time one more sample adds to a run whose last sample was at `prevT`. */
export function addedCoverage(t: number, intervalMs: number, prevT: number): number {
  const step = t - prevT;
  if (!(step > 0)) return 0;
  return step < intervalMs ? step : intervalMs;
}

/** A run of consecutive samples for which a condition holds: how much sample time it covers. */
export class Run {
  private coveredMs = 0;
  private count = 0;
  private lastT = 0;
  private firstT = 0;

  /** Feed one sample; returns the run's coverage afterwards (0 when `holds` is false). */
  feed(t: number, intervalMs: number, holds: boolean, maxGapMs: number): number {
    if (!holds) {
      this.reset();
      return 0;
    }
    if (this.count === 0 || t - this.lastT > maxGapMs) {
      this.count = 1;
      this.coveredMs = intervalMs;
      this.firstT = t - intervalMs;
    } else {
      this.count++;
      this.coveredMs += addedCoverage(t, intervalMs, this.lastT);
    }
    this.lastT = t;
    return this.coveredMs;
  }

  reset(): void {
    this.count = 0;
    this.coveredMs = 0;
  }

  get covered(): number {
    return this.coveredMs;
  }

  /** Sample time at which the run began (start of its first sample's interval). */
  get since(): number {
    return this.firstT;
  }
}

/**
 * Entries a trailing window holds at most, whatever sample time says. Sample time is the agent's
 * word: one whose `t` barely advances (+0.001 ms a sample) covers almost nothing per sample, so a
 * window trimmed by time alone would grow without end. Trimmed by count too, it stays bounded; an
 * agent sampling faster than windowMs / MAX_WINDOW_SAMPLES (20 ms for a 10 s window) then sees
 * its window cover less than windowMs, which only ever keeps an alert from being raised.
 */
export const MAX_WINDOW_SAMPLES = 512;

const T = 0;
const COVER = 1;
const HEADER = 2;
const NONE = new Float64Array(0);

/**
 * The most recent consecutive samples covering at least `windowMs` (fewer while the run is
 * young), each kept as a few numbers in one Float64Array ring: `fields` per entry besides its `t`
 * and the sample time it adds to the union (its interval less overlap with the previous). Older
 * entries are dropped as soon as the newer ones alone still cover the window, and beyond
 * `maxSamples`. Numbers rather than the Sample objects: a window lives for seconds, long enough
 * for its objects to reach the old generation, where thousands of them dying each second are what
 * makes a busy hub pause for major collections.
 */
export class TrailingWindow {
  private buf: Float64Array;
  private capacity: number;
  private readonly stride: number;
  private head = 0;
  private len = 0;
  private coveredMs = 0;
  /** Each field summed over the entries held (see sum()). */
  private sums = NONE;

  constructor(
    readonly fields: number,
    readonly maxSamples = MAX_WINDOW_SAMPLES,
  ) {
    if (!Number.isInteger(maxSamples) || maxSamples < 1) throw new RangeError(`maxSamples must be an integer ≥ 1, got ${String(maxSamples)}`);
    this.stride = HEADER + fields;
    // Allocated by the first push (a convoy window is empty for most semaphores, always).
    this.capacity = 0;
    this.buf = NONE;
  }

  /**
   * Appends an entry at `t` (fields 0 until set()), restarting the window after a gap over
   * `maxGapMs`, and dropping the oldest if it is full. Call trim() once the fields are set.
   */
  push(t: number, intervalMs: number, maxGapMs: number): void {
    let coverMs: number;
    if (this.len === 0 || t - this.t(this.len - 1) > maxGapMs) {
      this.clear();
      coverMs = intervalMs;
    } else {
      coverMs = addedCoverage(t, intervalMs, this.t(this.len - 1));
    }
    if (this.len === this.maxSamples) this.dropFirst();
    if (this.len === this.capacity) this.grow();
    const o = this.offset(this.len);
    this.buf[o + T] = t;
    this.buf[o + COVER] = coverMs;
    this.buf.fill(0, o + HEADER, o + this.stride);
    this.len++;
    this.coveredMs += coverMs;
  }

  /** Sets field `f` of the newest entry. */
  set(f: number, v: number): void {
    const i = this.offset(this.len - 1) + HEADER + f;
    this.sums[f] += v - this.buf[i];
    this.buf[i] = v;
  }

  /**
   * Field f summed over the entries held, kept up to date as entries come and go: a rule that
   * needs a window's total on every sample reads it in O(1), not with a pass over the entries (a
   * 10 s window of an agent sampling every 100 ms holds 100). Exactly the sum a pass would give
   * for integer fields (counts) whose totals stay below 2^53.
   */
  sum(f: number): number {
    return this.len === 0 ? 0 : this.sums[f];
  }

  /** Drops the oldest entries the newer ones no longer need to cover `windowMs`. */
  trim(windowMs: number): void {
    // The entry that becomes first keeps its coverMs: in the union it still starts where its
    // predecessor ended, so the sum stays the true covered time.
    while (this.len > 1 && this.coveredMs - this.cover(0) >= windowMs) this.dropFirst();
  }

  dropFirst(): void {
    if (this.len === 0) return;
    this.coveredMs -= this.cover(0);
    const o = this.offset(0) + HEADER;
    for (let f = 0; f < this.fields; f++) this.sums[f] -= this.buf[o + f];
    this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    this.len--;
    if (this.len === 0) this.clear();
  }

  clear(): void {
    this.head = 0;
    this.len = 0;
    this.coveredMs = 0;
    this.sums.fill(0);
  }

  /** Entry i's sample time (0 the oldest). */
  t(i: number): number {
    return this.buf[this.offset(i) + T];
  }

  /** Sample time entry i adds to the union. */
  cover(i: number): number {
    return this.buf[this.offset(i) + COVER];
  }

  /** Field f of entry i. */
  get(i: number, f: number): number {
    return this.buf[this.offset(i) + HEADER + f];
  }

  get covered(): number {
    return this.coveredMs;
  }

  get size(): number {
    return this.len;
  }

  /** Start of the covered span: the first entry's time less what it covers. */
  get since(): number {
    return this.len === 0 ? 0 : this.t(0) - this.cover(0);
  }

  /** Typed-array bytes held. */
  bytes(): number {
    return this.buf.byteLength;
  }

  private offset(i: number): number {
    // i < capacity always: one subtraction, not a division, on every read.
    const p = this.head + i;
    return (p >= this.capacity ? p - this.capacity : p) * this.stride;
  }

  private grow(): void {
    const next = Math.min(Math.max(8, this.capacity * 2), this.maxSamples);
    const buf = new Float64Array(next * this.stride);
    for (let i = 0; i < this.len; i++) {
      const o = this.offset(i);
      buf.set(this.buf.subarray(o, o + this.stride), i * this.stride);
    }
    this.buf = buf;
    this.capacity = next;
    this.head = 0;
    if (this.sums.length === 0) this.sums = new Float64Array(this.fields);
  }
}
