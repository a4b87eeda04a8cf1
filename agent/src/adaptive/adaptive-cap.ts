// An adaptive cap's window: hold times are summed on release (one add and a compare on the hot
// path), and the gradient limit is consulted at most once per window, which closes after twice
// the baseline latency (at least WINDOW_MIN_MS) with WINDOW_MIN_SAMPLES holds, or after
// WINDOW_MAX_MS with any. After the first window, then every PROBE_EVERY_MS, or when the limit has
// sat at its minimum with latency high for AT_MIN_WINDOWS windows, the cap drops to PROBE_CAP
// (at most half the limit, at least min) for two windows (one to drain what was in flight, one
// to measure) and the baseline is re-measured there, as Envoy's adaptive concurrency does: the
// first window may have queued (an initial limit above what the downstream serves at once), and
// a downstream that slowed for good would otherwise keep the limit under what it can serve. A change is
// applied through the target (Semaphore.resize: a shrink never revokes a held permit) under a
// ceiling (a replica budget's share), and the last one is kept with its reason for the samples.
import type { SampleLimit } from "../../../shared/protocol/types.js";
import { GradientLimit, ms } from "./gradient-limit.js";
import type { CheckedAdaptive } from "./adaptive-options.js";

const WINDOW_MIN_MS = 100;
const WINDOW_MIN_SAMPLES = 5;
const WINDOW_MAX_MS = 1000;
export const PROBE_EVERY_MS = 30_000;
const AT_MIN_WINDOWS = 5;
const PROBE_CAP = 3;

export interface CapTarget {
  setCap(cap: number): void;
}

type Phase = "run" | "drain" | "measure";

export class AdaptiveCap {
  readonly limiter: GradientLimit;
  private sum = 0;
  private count = 0;
  private peak = 0;
  private start = NaN;
  private ceilingCap = Infinity;
  private last: SampleLimit;
  private phase: Phase = "run";
  /** While re-measuring: the cap the baseline is measured at. */
  private probeCap = 0;
  private nextProbe = NaN;
  private atMin = 0;

  constructor(
    opts: CheckedAdaptive,
    private readonly target: CapTarget,
  ) {
    this.limiter = new GradientLimit(opts);
    this.last = { min: opts.min, max: opts.max, limit: this.limiter.limit, t: Date.now(), reason: "initial limit" };
  }

  /** The cap to apply now: the limit (or, while re-measuring, the probe's cap) under the ceiling (0 while a replica waits for its turn). */
  get cap(): number {
    const limit = this.phase === "run" ? this.limiter.limit : this.probeCap;
    return Math.min(limit, this.ceilingCap);
  }

  /** True while the cap is lowered to re-measure the baseline. */
  get probing(): boolean {
    return this.phase !== "run";
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
    const base = this.limiter.baselineMs;
    const windowMs = base === base ? Math.min(WINDOW_MAX_MS, Math.max(WINDOW_MIN_MS, 2 * base)) : WINDOW_MIN_MS;
    if ((age >= windowMs && this.count >= WINDOW_MIN_SAMPLES) || age >= WINDOW_MAX_MS) this.close(now);
  }

  private close(now: number): void {
    const before = this.cap;
    const mean = this.sum / this.count;
    const peak = this.peak;
    this.sum = 0;
    this.count = 0;
    this.peak = 0;
    this.start = NaN;
    if (this.phase === "drain") {
      this.phase = "measure";
      return;
    }
    if (this.phase === "measure") this.remeasured(mean, peak, now);
    else this.decide(mean, peak, now);
    const after = this.cap;
    if (after !== before) this.target.setCap(after);
  }

  private decide(mean: number, peak: number, now: number): void {
    const l = this.limiter;
    const u = l.update(mean, peak);
    if (u.to !== u.from) this.record(u.to, u.from, u.reason, mean, peak);
    this.atMin = u.to === l.min && mean > l.baselineMs * l.tolerance ? this.atMin + 1 : 0;
    if (l.min < l.max && (!(now < this.nextProbe) || this.atMin >= AT_MIN_WINDOWS)) {
      this.phase = "drain";
      this.probeCap = Math.max(l.min, Math.min(PROBE_CAP, Math.floor(u.to / 2)));
      this.record(this.probeCap, u.to, `re-measuring the no-load latency at cap ${this.probeCap} (baseline ${ms(l.baselineMs)})`, mean, peak);
    }
  }

  private remeasured(mean: number, peak: number, now: number): void {
    const l = this.limiter;
    const old = l.baselineMs;
    l.rebase(mean);
    this.phase = "run";
    this.atMin = 0;
    this.nextProbe = now + PROBE_EVERY_MS;
    this.record(l.limit, this.probeCap, `no-load latency re-measured at in-flight ${peak}: ${ms(old)} → ${ms(l.baselineMs)}`, mean, peak);
  }

  private record(limit: number, from: number, reason: string, shortMs: number, inFlight: number): void {
    this.last = { min: this.limiter.min, max: this.limiter.max, limit, t: Date.now(), reason, from, shortMs, longMs: this.limiter.baselineMs, inFlight };
  }
}
