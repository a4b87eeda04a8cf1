// "For ≥ 5 s" (docs/protocol.md): consecutive samples whose intervals cover at least 5 s of sample
// time; a gap of more than 2 × intervalMs between samples restarts the window.
//
// A sample at `t` covers (t − intervalMs, t]. What a run of samples covers is the union of those
// intervals: each sample adds its own interval less any overlap with the one before (agent timer
// jitter), so a missing-but-tolerated sample (gap ≤ 2 × interval) restarts nothing yet adds only
// its successor's own interval: a hole is never counted as time the condition held.

import type { SlotPool } from "../history/slot-pool.js";

/** Sample time one more sample adds to a run whose last sample was at `prevT`. */
export function addedCoverage(t: number, intervalMs: number, prevT: number): number {
  const step = t - prevT;
  if (!(step > 0)) return 0;
  return step < intervalMs ? step : intervalMs;
}

// A run of consecutive samples for which a condition holds, and how much sample time it covers:
// RUN_LENGTH numbers at `at` in a Float64Array that the caller shares with the rest of its state
// (a semaphore's rules keep theirs in one array, see SemaphoreTracker). A run fed on every sample
// of 10,000 semaphores is cold each time it is fed, and as an object its three doubles would be three
// boxes more behind the object itself: four dependent loads where an array slot is one.
const RUN_COUNT = 0;
const RUN_COVERED = 1;
const RUN_LAST_T = 2;
/** Numbers a run takes (all 0: an empty run). */
export const RUN_LENGTH = 3;

/** Feeds the run at `st[at]` one sample; returns its coverage afterwards (0 when `holds` is false). */
export function feedRun(st: Float64Array, at: number, t: number, intervalMs: number, holds: boolean, maxGapMs: number): number {
  if (!holds) {
    resetRun(st, at);
    return 0;
  }
  if (st[at + RUN_COUNT] === 0 || t - st[at + RUN_LAST_T] > maxGapMs) {
    st[at + RUN_COUNT] = 1;
    st[at + RUN_COVERED] = intervalMs;
  } else {
    st[at + RUN_COUNT]++;
    st[at + RUN_COVERED] += addedCoverage(t, intervalMs, st[at + RUN_LAST_T]);
  }
  st[at + RUN_LAST_T] = t;
  return st[at + RUN_COVERED];
}

export function resetRun(st: Float64Array, at: number): void {
  st[at + RUN_COUNT] = 0;
  st[at + RUN_COVERED] = 0;
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
/** Entries a window has room for at first. */
const FIRST_CAPACITY = 8;

/** The length of a window's first buffer (`fields` per entry): a SlotPool of that length can give it. */
export function firstWindowLength(fields: number): number {
  return FIRST_CAPACITY * (HEADER + fields) + 1 + fields;
}

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
  /**
   * Where, in `buf`, after the entries, the window's running totals begin: the sample time its
   * entries cover, then each field summed over them (see sum()). In the entries' array rather
   * than fields of their own: one array for a sample to touch, and no boxed doubles.
   */
  private sumsAt = 0;

  /** Whether `buf` is a slot of `pool`, to give back. */
  private pooled = false;

  /**
   * `pool`: where the first buffer comes from, a slot of firstWindowLength(fields) (a flood of
   * new semaphores would otherwise allocate an ArrayBuffer each on its first sample); given back
   * when the window grows past it or is released. Without, every buffer is the window's own.
   */
  constructor(
    readonly fields: number,
    readonly maxSamples = MAX_WINDOW_SAMPLES,
    private readonly pool?: SlotPool,
  ) {
    if (!Number.isInteger(maxSamples) || maxSamples < 1) throw new RangeError(`maxSamples must be an integer ≥ 1, got ${String(maxSamples)}`);
    if (pool !== undefined && pool.slotLength !== firstWindowLength(fields)) throw new RangeError(`a window of ${fields} fields takes slots of ${firstWindowLength(fields)}, not ${pool.slotLength}`);
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
    const lastT = this.len === 0 ? 0 : this.t(this.len - 1);
    if (this.len === 0 || t - lastT > maxGapMs) {
      this.clear();
      coverMs = intervalMs;
    } else {
      coverMs = addedCoverage(t, intervalMs, lastT);
    }
    if (this.len === this.maxSamples) this.dropFirst();
    if (this.len === this.capacity) this.grow();
    const buf = this.buf;
    const o = this.offset(this.len);
    buf[o + T] = t;
    buf[o + COVER] = coverMs;
    // A loop, not fill(): a window holds a few fields, and the builtin's call cost more than they do.
    for (let i = o + HEADER, end = o + this.stride; i < end; i++) buf[i] = 0;
    this.len++;
    buf[this.sumsAt] += coverMs;
  }

  /** Sets field `f` of the newest entry. */
  set(f: number, v: number): void {
    const buf = this.buf;
    const i = this.offset(this.len - 1) + HEADER + f;
    buf[this.sumsAt + 1 + f] += v - buf[i];
    buf[i] = v;
  }

  /**
   * Field f summed over the entries held, kept up to date as entries come and go: a rule that
   * needs a window's total on every sample reads it in O(1), not with a pass over the entries (a
   * 10 s window of an agent sampling every 100 ms holds 100). Exactly the sum a pass would give
   * for integer fields (counts) whose totals stay below 2^53.
   */
  sum(f: number): number {
    return this.len === 0 ? 0 : this.buf[this.sumsAt + 1 + f];
  }

  /** Drops the oldest entries the newer ones no longer need to cover `windowMs`. */
  trim(windowMs: number): void {
    // The entry that becomes first keeps its coverMs: in the union it still starts where its
    // predecessor ended, so the sum stays the true covered time.
    while (this.len > 1 && this.covered - this.cover(0) >= windowMs) this.dropFirst();
  }

  dropFirst(): void {
    if (this.len === 0) return;
    const buf = this.buf;
    buf[this.sumsAt] -= this.cover(0);
    const o = this.offset(0) + HEADER;
    for (let f = 0; f < this.fields; f++) buf[this.sumsAt + 1 + f] -= buf[o + f];
    this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    this.len--;
    if (this.len === 0) this.clear();
  }

  clear(): void {
    this.head = 0;
    this.len = 0;
    const buf = this.buf;
    for (let i = this.sumsAt, end = i + 1 + this.fields; i < end && i < buf.length; i++) buf[i] = 0;
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
    return this.len === 0 ? 0 : this.buf[this.sumsAt];
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

  /**
   * Reads what the next push() and trim() touch (the newest and oldest entries, the sums),
   * changing nothing, and returns a number made of it (see SemaphoreTracker.warm).
   */
  warm(): number {
    const len = this.len;
    if (len === 0) return 0;
    const buf = this.buf;
    return buf[this.offset(len - 1)] + buf[this.offset(0) + COVER] + buf[this.sumsAt];
  }

  private offset(i: number): number {
    // i < capacity always: one subtraction, not a division, on every read.
    const p = this.head + i;
    return (p >= this.capacity ? p - this.capacity : p) * this.stride;
  }

  /** Empties the window and gives its buffer back (its pool's slot): it allocates again on its next push. */
  release(): void {
    this.clear();
    if (this.pooled) this.pool!.give(this.buf);
    this.pooled = false;
    this.buf = NONE;
    this.capacity = 0;
    this.sumsAt = 0;
  }

  private grow(): void {
    const next = Math.min(Math.max(FIRST_CAPACITY, this.capacity * 2), this.maxSamples);
    const sumsAt = next * this.stride;
    const length = sumsAt + 1 + this.fields;
    const fromPool = this.pool !== undefined && this.capacity === 0 && length === this.pool.slotLength;
    const buf = fromPool ? this.pool!.take().fill(0) : new Float64Array(length);
    for (let i = 0; i < this.len; i++) {
      const o = this.offset(i);
      buf.set(this.buf.subarray(o, o + this.stride), i * this.stride);
    }
    if (this.buf.length > 0) buf.set(this.buf.subarray(this.sumsAt, this.sumsAt + 1 + this.fields), sumsAt);
    if (this.pooled) this.pool!.give(this.buf);
    this.pooled = fromPool;
    this.buf = buf;
    this.sumsAt = sumsAt;
    this.capacity = next;
    this.head = 0;
  }
}
