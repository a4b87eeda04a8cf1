// A token bucket per connection, on the monotonic clock (not the injectable hub clock: a test
// that freezes hub time must not freeze the limiter too).
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

  /** Takes one token; false when the connection is over its rate. */
  take(): boolean {
    const t = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.perSecond) / 1000);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
