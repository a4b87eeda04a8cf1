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

/**
 * Work (items of agent payload) a connection may make the hub do: `perSecond` sustained, `burst`
 * at once. Charged after the work is done, so it can go below zero; the scheduler then holds the
 * connection's next message (and stops reading its socket) until it is back to zero. Never a
 * refusal: an honest agent replaying a backlog is slowed, not dropped.
 */
export class WorkBudget {
  private tokens: number;
  private last = performance.now();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  charge(units: number, now = performance.now()): void {
    this.refill(now);
    this.tokens -= units;
  }

  /** Milliseconds until the budget is back to zero; 0 when it is not below. */
  waitMs(now = performance.now()): number {
    this.refill(now);
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.perSecond;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
  }
}

/** What a lane is charged against: its own WorkBudget, or that and its address's (CombinedBudget). */
export interface Budget {
  charge(units: number, now?: number): void;
  waitMs(now?: number): number;
}

/** Several budgets at once: every charge goes to each, and the wait is the longest. */
export class CombinedBudget implements Budget {
  constructor(private readonly parts: readonly Budget[]) {}

  charge(units: number, now = performance.now()): void {
    for (const p of this.parts) p.charge(units, now);
  }

  waitMs(now = performance.now()): number {
    let wait = 0;
    for (const p of this.parts) wait = Math.max(wait, p.waitMs(now));
    return wait;
  }
}

/**
 * One WorkBudget per remote address, shared by every connection from it: a per-connection
 * budget alone is multiplied by opening more connections. Kept while a connection from the
 * address is open.
 */
export class AddressBudgets {
  private readonly byAddress = new Map<string, { budget: WorkBudget; users: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  acquire(address: string): WorkBudget {
    let entry = this.byAddress.get(address);
    if (entry === undefined) this.byAddress.set(address, (entry = { budget: new WorkBudget(this.perSecond, this.burst), users: 0 }));
    entry.users++;
    return entry.budget;
  }

  release(address: string): void {
    const entry = this.byAddress.get(address);
    if (entry !== undefined && --entry.users <= 0) this.byAddress.delete(address);
  }

  /** Addresses with a connection open. */
  get size(): number {
    return this.byAddress.size;
  }
}
