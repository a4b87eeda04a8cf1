// Columnar chart data for one detail view: plain arrays aligned on `t` that uPlot reads as they
// are (setData takes references, nothing is copied per frame). History fills it in one go;
// live samples append one row each. A null row goes wherever two points are more than two
// intervals apart, so a chart breaks its line over missing data instead of drawing across it
// (the same rule as shared/history's toUplotData).
import type { UiWindow } from "../../../shared/ui-protocol/types.js";

export type Column = (number | null)[];

export type AppendResult = "appended" | "gap" | "stale";

export class SeriesBuffer<C extends string> {
  t: number[] = [];
  readonly data: Record<C, Column>;
  /** Bumped on every change: charts compare it to skip a setData that would change nothing. */
  version = 0;
  private lastT: number | null = null;
  private lastInterval: number;

  constructor(
    readonly columns: readonly C[],
    /** Spacing assumed when a row does not say (1 000 for the 1 s tier, 60 000 for 1 m). */
    private defaultIntervalMs = 1000,
  ) {
    this.data = {} as Record<C, Column>;
    for (const c of columns) this.data[c] = [];
    this.lastInterval = defaultIntervalMs;
  }

  get length(): number {
    return this.t.length;
  }

  /** The latest real (non-gap) point's time. */
  get latestT(): number | null {
    return this.lastT;
  }

  get intervalMs(): number {
    return this.lastInterval;
  }

  clear(defaultIntervalMs = this.defaultIntervalMs): void {
    this.defaultIntervalMs = defaultIntervalMs;
    this.t = [];
    for (const c of this.columns) this.data[c] = [];
    this.lastT = null;
    this.lastInterval = defaultIntervalMs;
    this.version++;
  }

  /** Replace everything with a history window (columns it lacks stay null). */
  load(win: UiWindow, defaultIntervalMs: number): void {
    this.clear(defaultIntervalMs);
    const rec = win as unknown as Record<string, number[] | undefined>;
    const iv = rec.intervalMs;
    const src = this.columns.map((c) => rec[c]);
    const n = win.t.length;
    const t: number[] = [];
    const cols: Column[] = this.columns.map(() => []);
    for (let i = 0; i < n; i++) {
      const interval = iv !== undefined && iv[i] > 0 ? iv[i] : defaultIntervalMs;
      if (i > 0 && win.t[i] - win.t[i - 1] > 2 * interval) {
        t.push((win.t[i - 1] + win.t[i]) / 2);
        for (const col of cols) col.push(null);
      }
      t.push(win.t[i]);
      for (let k = 0; k < cols.length; k++) {
        const s = src[k];
        cols[k].push(s === undefined ? null : s[i]);
      }
      this.lastInterval = interval;
    }
    this.t = t;
    this.columns.forEach((c, k) => (this.data[c] = cols[k]));
    this.lastT = n > 0 ? win.t[n - 1] : null;
    this.version++;
  }

  /** One live point. Older or equal `t` is ignored (a delta overlapping history). */
  append(t: number, row: Partial<Record<C, number>>, intervalMs = this.lastInterval): AppendResult {
    if (this.lastT !== null && t <= this.lastT) return "stale";
    let result: AppendResult = "appended";
    if (this.lastT !== null && t - this.lastT > 2 * Math.max(intervalMs, 1)) {
      this.t.push((this.lastT + t) / 2);
      for (const c of this.columns) this.data[c].push(null);
      result = "gap";
    }
    this.t.push(t);
    for (const c of this.columns) {
      const v = row[c];
      this.data[c].push(v === undefined ? null : v);
    }
    this.lastT = t;
    this.lastInterval = intervalMs;
    this.version++;
    return result;
  }

  /**
   * Newer rows of a history window (an incremental poll): rows older than the latest are
   * skipped, a row at the latest time replaces it (a 1 m tier's still-open minute changes until
   * it closes), later rows append. Returns how many rows were appended or replaced.
   */
  merge(win: UiWindow): number {
    const rec = win as unknown as Record<string, number[] | undefined>;
    const iv = rec.intervalMs;
    let changed = 0;
    for (let i = 0; i < win.t.length; i++) {
      const t = win.t[i];
      const row = {} as Partial<Record<C, number>>;
      for (const c of this.columns) {
        const v = rec[c]?.[i];
        if (v !== undefined) row[c] = v;
      }
      if (this.lastT !== null && t === this.lastT && this.t.length > 0) {
        const last = this.t.length - 1;
        for (const c of this.columns) this.data[c][last] = row[c] ?? null;
        changed++;
      } else if (this.lastT === null || t > this.lastT) {
        this.append(t, row, iv !== undefined && iv[i] > 0 ? iv[i] : this.defaultIntervalMs);
        changed++;
      }
    }
    if (changed > 0) this.version++;
    return changed;
  }

  /**
   * Drop points before `minT`, in batches (a splice per point would cost a copy per second):
   * only once more than `slack` rows are out of range.
   */
  trim(minT: number, slack = 64): void {
    let k = 0;
    while (k < this.t.length && this.t[k] < minT) k++;
    if (k <= slack) return;
    this.t.splice(0, k);
    for (const c of this.columns) this.data[c].splice(0, k);
    this.version++;
  }

  /** Index of the first row at or after `t` (binary search; rows are sorted). */
  indexAt(t: number): number {
    let lo = 0;
    let hi = this.t.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.t[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
