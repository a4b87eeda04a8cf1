// A token bucket on the monotonic clock (not the injectable hub clock: a test that freezes hub
// time must not freeze a limiter too). One kind serves two uses: take() refuses a message when
// the bucket is empty (a connection's message rate); charge() counts work already done and may
// go below zero, and waitMs() says how long until it is back (a lane's work budget).
import { performance } from "node:perf_hooks";

export class TokenBucket {
  private tokens: number;
  private last = performance.now();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** Takes one token; false (taking none) when the bucket has less than one. */
  take(now = performance.now()): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Takes `units` whatever is left: the bucket can go below zero. */
  charge(units: number, now = performance.now()): void {
    this.refill(now);
    this.tokens -= units;
  }

  /** Milliseconds until the bucket is back to zero; 0 when it is not below. */
  waitMs(now = performance.now()): number {
    this.refill(now);
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.perSecond;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
  }
}
