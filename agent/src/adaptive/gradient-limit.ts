// A concurrency limit that follows measured latency: a gradient against the no-load latency, in
// the manner of Envoy's adaptive concurrency and Netflix concurrency-limits' Vegas limit. The
// baseline is the lowest window mean seen since it was last re-measured at low concurrency (a
// moving average of recent latency would drift up with the queue it should detect). From the
// in-flight count and the ratio baseline / latency, the limit estimates how many of those permits
// the downstream was serving rather than queueing, and aims at that plus a small queue allowance.
// Smoothed, at most halved per update, clamped to [min, max]. Pure: no clock, no timers; the
// caller feeds one window's figures per update and schedules re-measurement (adaptive-cap.ts).

export interface GradientConfig {
  min: number;
  max: number;
  initial: number;
  /** The limit does not fall while latency stays within this multiple of the baseline (default 1.5). */
  tolerance?: number;
  /** How far each update moves the limit toward its target, in (0, 1] (default 0.5). */
  smoothing?: number;
  /** Requests allowed to queue at the downstream beyond what it serves at once (default √limit, at least 2). */
  queueAllowance?: (limit: number) => number;
}

/** What one update decided, with the figures that decided it. */
export interface LimitUpdate {
  /** The limit before and after, as integers (what the semaphore's cap becomes). */
  from: number;
  to: number;
  shortMs: number;
  /** The baseline (no-load latency) the window was judged against. */
  longMs: number;
  inFlight: number;
  /** One line saying why: "latency rose from 12 ms to 30 ms at in-flight 8". */
  reason: string;
}

const defaultAllowance = (limit: number): number => Math.max(2, Math.sqrt(limit));

export class GradientLimit {
  readonly min: number;
  readonly max: number;
  readonly tolerance: number;
  private readonly smoothing: number;
  private readonly allowance: (limit: number) => number;
  /** The estimate, fractional: small steps accumulate until they move the integer limit. */
  private estimate: number;
  private baseline = NaN;

  constructor(cfg: GradientConfig) {
    this.min = cfg.min;
    this.max = cfg.max;
    this.tolerance = cfg.tolerance ?? 1.5;
    this.smoothing = cfg.smoothing ?? 0.5;
    this.allowance = cfg.queueAllowance ?? defaultAllowance;
    this.estimate = clamp(cfg.initial, cfg.min, cfg.max);
  }

  /** The current limit, an integer in [min, max]. */
  get limit(): number {
    return clamp(Math.round(this.estimate), this.min, this.max);
  }

  /** The no-load latency the limit is judged against (NaN before the first usable window). */
  get baselineMs(): number {
    return this.baseline;
  }

  /** A latency measured at low concurrency replaces the baseline, higher or lower (a downstream that slowed for good). */
  rebase(ms: number): void {
    if (ms > 0 && Number.isFinite(ms)) this.baseline = ms;
  }

  /**
   * One window's figures: its mean hold time (`shortMs`) and the most permits in flight during it.
   * Returns the decision (even when the integer limit did not move).
   */
  update(shortMs: number, inFlight: number): LimitUpdate {
    const from = this.limit;
    if (!(shortMs > 0) || !Number.isFinite(shortMs)) return this.result(from, shortMs, inFlight, "no usable latency: limit kept");
    if (!(this.baseline <= shortMs)) this.baseline = shortMs;
    const base = this.baseline;
    // A caller using under half the limit says nothing about what the downstream could take.
    if (inFlight < from / 2) return this.result(from, shortMs, inFlight, `in-flight ${inFlight} is under half the limit ${from}: limit kept`);
    const queued = shortMs > base * this.tolerance;
    // Of `inFlight` permits, about inFlight × base / short were being served; the rest queued.
    let target = (Math.min(inFlight, this.estimate) * base) / shortMs + this.allowance(this.estimate);
    target = queued ? Math.max(target, this.estimate / 2) : Math.max(target, this.estimate);
    this.estimate = clamp(this.estimate + (target - this.estimate) * this.smoothing, this.min, this.max);
    const to = this.limit;
    let reason: string;
    if (to < from) reason = `latency rose from ${ms(base)} to ${ms(shortMs)} at in-flight ${inFlight}`;
    else if (to > from) reason = queued
        ? `latency ${ms(shortMs)} (baseline ${ms(base)}) leaves room for a queue at in-flight ${inFlight}: probing up`
        : `latency flat at ${ms(shortMs)} (baseline ${ms(base)}) at in-flight ${inFlight}: probing up`;
    else reason = `latency ${ms(shortMs)} against baseline ${ms(base)} at in-flight ${inFlight}: limit kept`;
    return this.result(from, shortMs, inFlight, reason);
  }

  private result(from: number, shortMs: number, inFlight: number, reason: string): LimitUpdate {
    return { from, to: this.limit, shortMs, longMs: this.baseline, inFlight, reason };
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

export function ms(v: number): string {
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`;
}
