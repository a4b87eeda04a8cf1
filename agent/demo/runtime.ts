// What every demo scenario shares: timers that all stop together, a load generator with
// Poisson arrivals, and latency draws with a realistic (log-normal) spread.
//
// Timing has two kinds of numbers. A cycle (how often a fault recurs, when it first happens,
// how long a lease lasts) is divided by `speed`, so a test can run the whole show quickly. A
// shape (how long a burst lasts, how slow the downstream is) stays as it is, because the hub's
// rules measure it against fixed windows ("for ≥ 5 s", "over 10 s").

export interface ScenarioContext {
  /** Cycles run this many times faster than real time (1 = the demo as a user sees it). */
  readonly speed: number;
  /** The service's own log (stderr of the demo process). */
  log(line: string): void;
  readonly timers: Timers;
  /** The process's link to the hub, for a scenario that plays a network failure. */
  readonly hub: HubLink;
}

export interface HubLink {
  /** Close the agent (flushing what it can); its semaphores keep working, unreported. */
  disconnect(): Promise<void>;
  /** connect() again: the same agentId, so the hub resumes the same agent. */
  reconnect(): void;
}

export interface Scenario {
  /** Stop generating load and cancel every timer; permits still held stay held. */
  stop(): void;
}

export type ScenarioStart = (ctx: ScenarioContext) => Scenario;

/** Every timeout a scenario sets goes through here, so stop() leaves nothing behind. */
export class Timers {
  private readonly live = new Set<ReturnType<typeof setTimeout>>();
  private stopped = false;

  get isStopped(): boolean {
    return this.stopped;
  }

  after(ms: number, fn: () => void): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.live.delete(t);
      if (!this.stopped) fn();
    }, Math.max(0, ms));
    this.live.add(t);
  }

  /** Resolves after ms; never resolves once stopped (the process is on its way out). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /** fn at `firstMs`, then every `periodMs` give or take `jitter` (a fraction of the period). */
  every(firstMs: number, periodMs: number, jitter: number, fn: () => void): void {
    const next = (): void => {
      fn();
      this.after(periodMs * (1 + jitter * (2 * Math.random() - 1)), next);
    };
    this.after(firstMs, next);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.live) clearTimeout(t);
    this.live.clear();
  }
}

/** Requests arriving at `rate()` per second (Poisson), each handled by `handle`, which must not throw. */
export function arrivals(timers: Timers, rate: () => number, handle: () => Promise<void>): void {
  const next = (): void => {
    const r = Math.max(0.01, rate());
    // Exponential inter-arrival gaps; capped so a low rate still looks alive.
    const gap = Math.min(-Math.log(1 - Math.random()) * (1000 / r), 10_000);
    timers.after(gap, () => {
      void handle();
      next();
    });
  };
  next();
}

/** A standard normal draw (Box–Muller). */
function gaussian(): number {
  const u = 1 - Math.random();
  const v = Math.random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * A latency in ms with median `p50` and a log-normal tail (`sigma` 0.3 ≈ p99 at 2× the median),
 * clamped to [min, max]: what a real query or RPC looks like.
 */
export function latency(p50: number, sigma = 0.35, min = 1, max = p50 * 6): number {
  return Math.min(max, Math.max(min, p50 * Math.exp(sigma * gaussian())));
}

/** A slow daily-traffic-like swell: 1 ± depth over `periodMs`. */
export function swell(periodMs: number, depth: number, phase = 0): number {
  return 1 + depth * Math.sin((2 * Math.PI * performance.now()) / periodMs + phase);
}

/** An error a fake downstream throws. */
export class DownstreamError extends Error {
  constructor(service: string, what: string) {
    super(`${service}: ${what}`);
    this.name = "DownstreamError";
  }
}

/** Fault injection on a schedule: `due()` is true once after each tick of `every`. */
export class FaultSchedule {
  private pending = 0;

  constructor(timers: Timers, firstMs: number, periodMs: number, jitter = 0.2, count = 1) {
    timers.every(firstMs, periodMs, jitter, () => {
      this.pending = count;
    });
  }

  due(): boolean {
    if (this.pending === 0) return false;
    this.pending--;
    return true;
  }
}

/** A value that ignores rejections it is told to: used where a scenario expects timeouts. */
export function quietly(p: Promise<unknown>): void {
  p.catch(() => undefined);
}
