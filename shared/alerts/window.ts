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

export interface WindowEntry<V> {
  readonly t: number;
  /** Sample time this entry adds to the union (its interval less overlap with the previous). */
  readonly coverMs: number;
  readonly value: V;
}

/**
 * The most recent consecutive samples covering at least `windowMs` (fewer while the run is
 * young). Memory is O(window / interval): older entries are dropped as soon as the newer ones
 * alone still cover the window.
 */
export class TrailingWindow<V> {
  private entries: WindowEntry<V>[] = [];
  private coveredMs = 0;

  push(t: number, intervalMs: number, value: V, maxGapMs: number, windowMs: number): void {
    const last = this.entries.length > 0 ? this.entries[this.entries.length - 1] : undefined;
    let coverMs: number;
    if (last === undefined || t - last.t > maxGapMs) {
      this.clear();
      coverMs = intervalMs;
    } else {
      coverMs = addedCoverage(t, intervalMs, last.t);
    }
    this.entries.push({ t, coverMs, value });
    this.coveredMs += coverMs;
    // The entry that becomes first keeps its coverMs: in the union it still starts where its
    // predecessor ended, so the sum stays the true covered time.
    while (this.entries.length > 1 && this.coveredMs - this.entries[0].coverMs >= windowMs) {
      this.coveredMs -= this.entries[0].coverMs;
      this.entries.shift();
    }
  }

  clear(): void {
    this.entries = [];
    this.coveredMs = 0;
  }

  get covered(): number {
    return this.coveredMs;
  }

  get size(): number {
    return this.entries.length;
  }

  /** Start of the covered span: the first entry's time less what it covers. */
  get since(): number {
    return this.entries.length === 0 ? 0 : this.entries[0].t - this.entries[0].coverMs;
  }

  items(): readonly WindowEntry<V>[] {
    return this.entries;
  }
}
