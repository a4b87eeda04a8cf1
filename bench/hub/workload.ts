// What a simulated agent reports: semaphores that do realistic things (a busy pool that now and
// then saturates, waits and holds with a handful of histogram buckets), one Sample each per interval.
import { DenseHist } from "../../shared/histogram.js";
import type { Hello, Sample, SemaphoreInfo } from "../../shared/protocol/index.js";
import { mulberry32 } from "../../scripts/support/prng.js";

/** A small deterministic PRNG (mulberry32), so every run and process reports alike. */
export const rng = mulberry32;

export function hello(agentId: string, n: number): Hello {
  return { agentId, service: `svc-${n % 50}`, instance: agentId, pid: 1000 + n, host: "bench", runtime: "node 20", agentVersion: "0.1.0", startedAt: Date.now() };
}

const NAMES = ["db", "cache", "http", "queue", "files", "search", "payments", "mail", "auth", "geo"];

export function infos(count: number): SemaphoreInfo[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `${NAMES[i % NAMES.length]}${i >= NAMES.length ? i : ""}`,
    name: `${NAMES[i % NAMES.length]}${i >= NAMES.length ? i : ""}`,
    kind: i % 3 === 0 ? "pg-pool" : "semaphore",
    cap: 10 + (i % 4) * 10,
    queue: "fifo",
    maxWaiters: null,
    acquireTimeoutMs: 2000,
    leaseTimeoutMs: null,
    leakThresholdMs: 30_000,
    scope: "process",
  }));
}

/** One semaphore's behaviour over time: load drifts, and a busy spell saturates it for a while. */
export class SemaphoreModel {
  private load: number;
  private readonly next: () => number;

  constructor(
    private readonly info: SemaphoreInfo,
    seed: number,
  ) {
    this.next = rng(seed);
    this.load = 0.2 + this.next() * 0.5;
  }

  sample(): Sample {
    const r = this.next;
    this.load = Math.min(1.3, Math.max(0.05, this.load + (r() - 0.5) * 0.1));
    const cap = this.info.cap;
    const inUse = Math.min(cap, Math.round(this.load * cap));
    const waiters = this.load > 1 ? Math.round((this.load - 1) * cap * 3) : 0;
    const acquired = Math.round(20 + r() * 200 * this.load);
    const hold = new DenseHist();
    const wait = new DenseHist();
    const holdMs = 2 + r() * 20;
    for (let k = 0; k < 6; k++) hold.record(holdMs * (0.5 + r()), acquired / 6);
    if (waiters > 0) for (let k = 0; k < 4; k++) wait.record(holdMs * waiters * r(), acquired / 4);
    else wait.recordZero(acquired);
    return {
      id: this.info.id,
      cap,
      inUse,
      available: cap - inUse,
      waiters,
      oldestWaitMs: waiters > 0 ? holdMs * waiters : 0,
      acquired,
      released: acquired,
      timeouts: waiters > 5 && r() < 0.2 ? 1 : 0,
      rejections: 0,
      aborts: 0,
      doubleReleases: 0,
      leaseExpiries: 0,
      waitMs: wait.summary(),
      holdMs: hold.summary(),
      longestHoldMs: holdMs * 3,
    };
  }
}
