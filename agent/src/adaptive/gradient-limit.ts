// A concurrency limit that follows measured latency, in the manner of Netflix concurrency-limits'
// Gradient2: a long-term RTT (slow average, the "no-load" latency) against a short-term one (the
// latest window); their ratio, with a tolerance, scales the limit down when latency rises, and a
// queue allowance lets it probe upward when latency stays flat. Smoothed, clamped to [min, max].
// Pure: no clock, no timers; the caller feeds one window's figures per update (adaptive-cap.ts).

export interface GradientConfig {
  min: number;
  max: number;
  initial: number;
  /** Short RTT may reach this multiple of the long RTT before the limit falls (default 1.5). */
  tolerance?: number;
  /** Weight of each update's proposal against the current limit (default 0.2). */
  smoothing?: number;
  /** Updates the long RTT averages over (default 600, about a minute of 100 ms windows): a latency held that long becomes the new baseline. */
  longWindow?: number;
  /** Permits added per update when latency is flat (default: 4, fewer below a limit of 16). */
  queueAllowance?: (limit: number) => number;
}

/** What one update decided, with the figures that decided it. */
export interface LimitUpdate {
  /** The limit before and after, as integers (what the semaphore's cap becomes). */
  from: number;
  to: number;
  shortMs: number;
  longMs: number;
  inFlight: number;
  /** One line saying why: "latency rose from 12 ms to 30 ms at in-flight 8". */
  reason: string;
}

const defaultAllowance = (limit: number): number => Math.min(4, Math.max(1, Math.sqrt(limit)));

export class GradientLimit {
  readonly min: number;
  readonly max: number;
  private readonly tolerance: number;
  private readonly smoothing: number;
  private readonly longFactor: number;
  private readonly allowance: (limit: number) => number;
  /** The estimate, fractional: small steps accumulate until they move the integer limit. */
  private estimate: number;
  private longRtt = NaN;

  constructor(cfg: GradientConfig) {
    this.min = cfg.min;
    this.max = cfg.max;
    this.tolerance = cfg.tolerance ?? 1.5;
    this.smoothing = cfg.smoothing ?? 0.2;
    this.longFactor = 2 / ((cfg.longWindow ?? 600) + 1);
    this.allowance = cfg.queueAllowance ?? defaultAllowance;
    this.estimate = clamp(cfg.initial, cfg.min, cfg.max);
  }

  /** The current limit, an integer in [min, max]. */
  get limit(): number {
    return clamp(Math.round(this.estimate), this.min, this.max);
  }

  /** The long-term RTT (NaN before the first update). */
  get baselineMs(): number {
    return this.longRtt;
  }

  /**
   * One window's figures: its mean hold time (`shortMs`) and the most permits in flight during it.
   * Returns the decision (even when the integer limit did not move).
   */
  update(shortMs: number, inFlight: number): LimitUpdate {
    const from = this.limit;
    if (!(shortMs > 0) || !Number.isFinite(shortMs)) return this.result(from, shortMs, inFlight, "no usable latency: limit kept");
    const baseline = this.longRtt === this.longRtt ? this.longRtt : shortMs;
    if (this.longRtt !== this.longRtt) this.longRtt = shortMs;
    else this.longRtt += (shortMs - this.longRtt) * this.longFactor;
    // Latency that fell well below the long average means the average is stale (a recovered
    // downstream): let it decay fast rather than hold the limit down for a whole long window.
    if (this.longRtt / shortMs > 2) this.longRtt *= 0.95;
    const longMs = this.longRtt;
    // A caller using under half the limit says nothing about what the downstream could take.
    if (inFlight < from / 2) return this.result(from, shortMs, inFlight, `in-flight ${inFlight} is under half the limit ${from}: limit kept`);
    const gradient = clamp((this.tolerance * longMs) / shortMs, 0.5, 1);
    const proposal = this.estimate * gradient + this.allowance(this.estimate);
    this.estimate = clamp(this.estimate * (1 - this.smoothing) + proposal * this.smoothing, this.min, this.max);
    const to = this.limit;
    let reason: string;
    if (gradient < 1) reason = `latency rose from ${ms(baseline)} to ${ms(shortMs)} at in-flight ${inFlight}`;
    else if (to > from) reason = `latency flat at ${ms(shortMs)} (baseline ${ms(longMs)}) at in-flight ${inFlight}: probing up`;
    else reason = `latency ${ms(shortMs)} within ${this.tolerance}× baseline ${ms(longMs)} at in-flight ${inFlight}`;
    return this.result(from, shortMs, inFlight, reason);
  }

  private result(from: number, shortMs: number, inFlight: number, reason: string): LimitUpdate {
    return { from, to: this.limit, shortMs, longMs: this.longRtt, inFlight, reason };
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

function ms(v: number): string {
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`;
}
