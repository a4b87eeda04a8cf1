// An adaptive cap's window: hold times are summed on release (one add and a compare on the hot
// path), and the gradient limit is consulted at most once per window, which closes after
// WINDOW_MS with WINDOW_MIN_SAMPLES holds, or after WINDOW_MAX_MS with any. A change is applied
// through the target (Semaphore.resize: a shrink never revokes a held permit) under a ceiling
// (a replica budget's share), and the last one is kept with its reason for the samples.
import type { SampleLimit } from "../../../shared/protocol/types.js";
import { GradientLimit } from "./gradient-limit.js";
import type { CheckedAdaptive } from "./adaptive-options.js";

const WINDOW_MS = 100;
const WINDOW_MIN_SAMPLES = 5;
const WINDOW_MAX_MS = 1000;

export interface CapTarget {
  setCap(cap: number): void;
}

export class AdaptiveCap {
  readonly limiter: GradientLimit;
  private sum = 0;
  private count = 0;
  private peak = 0;
  private start = NaN;
  private ceilingCap = Infinity;
  private last: SampleLimit;

  constructor(
    opts: CheckedAdaptive,
    private readonly target: CapTarget,
  ) {
    this.limiter = new GradientLimit(opts);
    this.last = { min: opts.min, max: opts.max, limit: this.limiter.limit, t: Date.now(), reason: "initial limit" };
  }

  /** The cap to apply now: the limit under the ceiling. */
  get cap(): number {
    return Math.max(1, Math.min(this.limiter.limit, this.ceilingCap));
  }

  /** The last change and its reason (what a sample carries). */
  get lastChange(): SampleLimit {
    return this.last;
  }

  /** A replica budget's share (Infinity without one). */
  get ceiling(): number {
    return this.ceilingCap;
  }

  /** A replica budget's share: the adaptive limit never takes the cap above it. */
  setCeiling(ceiling: number): void {
    this.ceilingCap = ceiling;
    this.target.setCap(this.cap);
  }

  /** One hold, timed on release; `inFlight` counts it. */
  sample(holdMs: number, inFlight: number, now: number): void {
    this.sum += holdMs;
    this.count++;
    if (inFlight > this.peak) this.peak = inFlight;
    if (this.start !== this.start) {
      this.start = now;
      return;
    }
    const age = now - this.start;
    if ((age >= WINDOW_MS && this.count >= WINDOW_MIN_SAMPLES) || age >= WINDOW_MAX_MS) this.close();
  }

  private close(): void {
    const before = this.cap;
    const u = this.limiter.update(this.sum / this.count, this.peak);
    this.sum = 0;
    this.count = 0;
    this.peak = 0;
    this.start = NaN;
    const after = this.cap;
    if (u.to !== u.from) {
      this.last = { min: this.limiter.min, max: this.limiter.max, limit: u.to, t: Date.now(), reason: u.reason, from: u.from, shortMs: u.shortMs, longMs: u.longMs, inFlight: u.inFlight };
    }
    if (after !== before) this.target.setCap(after);
  }
}
