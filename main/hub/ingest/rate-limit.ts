// What a connection's lane is charged against (agent-scheduler.ts): its own work budget, and one
// shared by every connection from its address. A budget is a TokenBucket charged after the work.
import { performance } from "node:perf_hooks";
import { TokenBucket } from "../socket/token-bucket.js";

/** What a lane is charged against: its own TokenBucket, or that and its address's (CombinedBudget). */
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
 * One work budget per remote address, shared by every connection from it: a per-connection
 * budget alone is multiplied by opening more connections. Kept while a connection from the
 * address is open.
 */
export class AddressBudgets {
  private readonly byAddress = new Map<string, { budget: TokenBucket; users: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  acquire(address: string): TokenBucket {
    let entry = this.byAddress.get(address);
    if (entry === undefined) this.byAddress.set(address, (entry = { budget: new TokenBucket(this.perSecond, this.burst), users: 0 }));
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
