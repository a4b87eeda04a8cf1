// p-limit's and p-queue's concurrency as a replica's share of a budget, through a real Redis: each
// replica's cap (the library's own concurrency) is its share among the live replicas, re-divided
// when one joins and when one dies; the sample and describe() say so. And a Semaphore with both an
// adaptive limit and a share: the share is the ceiling the limit moves beneath.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import pLimit from "p-limit";
import PQueue from "p-queue";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { instrument, Semaphore, type InstrumentHandle } from "../../../agent/src/index.js";
import { startRedis, type RedisServer } from "../../../scripts/support/redis.js";
import { sleep, until } from "../adapters/helpers.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/cap-replica.ts", import.meta.url));
const LEASE_MS = 600;
const HEARTBEAT_MS = 150;
/** A death is seen within a lease; the survivors grow a lease after that (docs/shared-budget.md). */
const SETTLE_MS = 2 * (LEASE_MS + HEARTBEAT_MS) + 2000;
/** A tsx child on a loaded 2-core machine can take seconds to start: not part of the share's settling. */
const START_MS = 30_000;
/**
 * The adaptive limit climbs a window (100 ms or more) at a time from 1 and, when load on the
 * machine stretches holds, falls back and climbs again: no bound of the share's, so its own wait.
 */
const CLIMB_MS = 20_000;

interface ReplicaChild {
  proc: ChildProcess;
  /** The last cap it printed. */
  cap(): number;
  kill(): Promise<void>;
}

/** Another replica of `service`/`name` in its own process (fixtures/cap-replica.ts). */
function startCapReplica(redisUrl: string, kind: "p-limit" | "p-queue" | "semaphore", service: string, name: string, budget: number): ReplicaChild {
  const proc = spawn(process.execPath, ["--import", "tsx", FIXTURE, redisUrl, kind, service, name, String(budget), String(LEASE_MS), String(HEARTBEAT_MS)], { stdio: ["ignore", "pipe", "inherit"] });
  let cap = -1;
  proc.stdout?.on("data", (chunk: Buffer) => {
    for (const m of chunk.toString().matchAll(/cap (\d+)/g)) cap = Number(m[1]);
  });
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  return {
    proc,
    cap: () => cap,
    kill: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
    },
  };
}

let redisServer: RedisServer;
let redis: Redis;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  redis.on("error", () => undefined);
}, 30_000);
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  redis.disconnect();
  await redisServer.stop();
});

const shared = (service: string) => ({ name: "db", budget: 10, share: "replicas" as const, coordinator: { redis, service, leaseMs: LEASE_MS, heartbeatMs: HEARTBEAT_MS } });

describe.each([
  { kind: "p-queue" as const, other: "p-limit" as const },
  { kind: "p-limit" as const, other: "p-queue" as const },
])("$kind with share: \"replicas\" on a real Redis", ({ kind, other }) => {
  it("runs at 1 until its share is known, takes the whole budget alone, half with a second replica, and all of it again when that one dies", async () => {
    const service = `share-${kind}-${Math.random().toString(36).slice(2, 8)}`;
    let concurrency: () => number;
    let h: InstrumentHandle;
    if (kind === "p-queue") {
      const queue = new PQueue({ concurrency: 50 });
      h = instrument(queue, shared(service));
      concurrency = () => queue.concurrency;
    } else {
      const limit = pLimit(50);
      h = instrument(limit, shared(service));
      concurrency = () => limit.concurrency;
    }
    cleanups.push(() => h.untrack());
    // The library's own concurrency is the cap: 1 at once, the whole budget once alone for a lease.
    expect(concurrency()).toBe(1);
    expect(h.describe()).toMatchObject({ budget: 10, share: "replicas" });
    await until(() => concurrency() === 10, "the whole budget alone", SETTLE_MS);
    expect(h.sample(Date.now())).toMatchObject({ cap: 10, share: { budget: 10, replicas: 1, target: 10, reachable: true } });

    // A second replica (the other library, another process): 5 each, never more than 10 together once settled.
    const child = startCapReplica(redisServer.url, other, service, "db", 10);
    cleanups.push(() => child.kill());
    await until(() => child.cap() !== -1, "the second replica to start", START_MS);
    await until(() => concurrency() === 5 && child.cap() === 5, "5 each", SETTLE_MS);
    expect(h.sample(Date.now()).share).toMatchObject({ replicas: 2, target: 5 });

    // It dies: the survivor takes the budget back once the dead one's lease lapsed.
    await child.kill();
    await until(() => concurrency() === 10, "the whole budget again", SETTLE_MS);
    expect(h.sample(Date.now()).share).toMatchObject({ replicas: 1, target: 10 });
  }, 60_000);
});

describe("instrument() refuses a share or an adaptive limit for a cap it cannot change", () => {
  it("names the option and the libraries that take it", async () => {
    const { Semaphore: MutexSemaphore } = await import("async-mutex");
    expect(() => instrument(new MutexSemaphore(3), { name: "m", permits: { adaptive: { min: 1, max: 4 } } })).toThrow(/permits: \{ adaptive \} needs a cap semscope can change \(p-limit's or p-queue's concurrency\)/);
    expect(() => instrument(new MutexSemaphore(3), { ...shared("x"), name: "m", permits: 3 })).toThrow(/share: "replicas" needs a cap semscope can change/);
    // And a bad one is refused as a Semaphore's is, leaving the target untouched.
    const queue = new PQueue({ concurrency: 7 });
    expect(() => instrument(queue, { name: "q", share: "replicas", coordinator: { redis } })).toThrow(/share: "replicas" divides a budget; set budget too/);
    expect(() => instrument(queue, { name: "q", permits: { adaptive: { min: 5, max: 2 } } })).toThrow(/max \(2\) must be ≥ min \(5\)/);
    expect(queue.concurrency).toBe(7);
    const again = instrument(queue, { name: "q" });
    again.untrack();
  });
});

describe("a Semaphore with an adaptive limit under a replica share, on a real Redis", () => {
  it("never has a cap above its share however far the limit probes, follows the share as replicas come and go, and cuts beneath it when latency rises", async () => {
    const service = `adaptive-share-${Math.random().toString(36).slice(2, 8)}`;
    const sem = new Semaphore({ ...shared(service), budget: 12, permits: { adaptive: { min: 1, max: 50, initial: 1 } } });
    cleanups.push(() => sem.close());
    // Holds long beside a loaded machine's timer jitter (a few ms), so only the downstream's
    // slowing below reads as latency rising.
    let holdMs = 20;
    let on = true;
    const callers = Array.from({ length: 40 }, async () => {
      while (on) await sem.use(() => sleep(holdMs));
    });
    cleanups.push(async () => {
      on = false;
      await Promise.all(callers);
    });
    // Read every few milliseconds: the cap against the share the last heartbeat gave.
    const above: string[] = [];
    const watch = setInterval(() => {
      const share = sem.sample(Date.now()).share;
      if (share !== undefined && sem.permits > share.target) above.push(`cap ${sem.permits} over share ${share.target}`);
    }, 5);
    cleanups.push(() => clearInterval(watch));

    // Alone: the share is the whole budget, and the cap stops there while the limit probes on.
    await until(() => sem.permits === 12, "the cap at the whole budget", CLIMB_MS);
    await until(() => (sem.adaptiveLimit?.limit ?? 0) > 12, "the limit probing past the share", CLIMB_MS);
    expect(sem.permits).toBe(12);

    // A second replica: the share, and with it the cap, halves (the limit then follows what the cap lets through).
    const child = startCapReplica(redisServer.url, "semaphore", service, "db", 12);
    cleanups.push(() => child.kill());
    await until(() => child.cap() !== -1, "the second replica to start", START_MS);
    await until(() => sem.permits === 6, "the cap at half the budget", SETTLE_MS);
    // The other replica has no traffic: its limit stays at 1, under its own share.
    expect(child.cap()).toBeLessThanOrEqual(6);

    // It dies: the share grows back after a lease, and the cap with it.
    await child.kill();
    await until(() => sem.permits === 12, "the whole budget again", SETTLE_MS);

    // The downstream slows: the limit cuts beneath the share, naming why; the share stays.
    holdMs = 80;
    await until(() => sem.permits < 12 && (sem.adaptiveLimit?.reason ?? "").startsWith("latency rose"), "a cut beneath the share", 15_000);
    expect(sem.sample(Date.now()).share).toMatchObject({ target: 12, replicas: 1 });
    expect(above).toEqual([]);
  }, 120_000);
});
