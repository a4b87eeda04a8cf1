// The redis-semaphore adapter in process, against a real Redis: what it recognises and refuses,
// what it reports (scope global, the global cap, this process's holders, the fleet's read from
// Redis), that it leaves the library's behaviour alone while Redis is up, that untrack() puts the
// prototype back, and the typed error while Redis is down. The fleet-wide behaviour (three
// processes, SIGKILL, Redis stopped mid-run) is in test/e2e/global.
import { Redis } from "ioredis";
import { MultiSemaphore, Mutex, RedlockSemaphore, Semaphore as RedisSemaphore } from "redis-semaphore";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrumentRedisSemaphore } from "../../../agent/src/adapters/redis-semaphore/adapter.js";
import type { RedisSemaphoreOptions } from "../../../agent/src/adapters/redis-semaphore/options.js";
import { isRedisSemaphore } from "../../../agent/src/adapters/redis-semaphore/shape.js";
import { SemscopeAdapterError, SemscopeRedisUnavailableError, trackedAll, type InstrumentHandle, type Sample } from "../../../agent/src/index.js";
import { startRedis, type RedisServer } from "../../../scripts/support/redis.js";
import { eventsOf, tracked, uniqueName, until } from "./helpers.js";

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
  redis.on("error", () => undefined);
}, 30_000);
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

const sem = (key: string, limit = 3, extra: Record<string, unknown> = {}) => new RedisSemaphore(redis, key, limit, { lockTimeout: 5000, acquireTimeout: 300, retryInterval: 10, ...extra });
const instrumented = (s: RedisSemaphore, extra: Partial<RedisSemaphoreOptions> = {}) =>
  tracked(instrumentRedisSemaphore(s, { name: uniqueName("global"), pollIntervalMs: 50, redisTimeoutMs: 300, ...extra }));

/** Samples until one carries a read of Redis with `inUse` members; each sample's counts are for its interval, so `acquired` sums them. */
async function sampleUntilGlobal(h: InstrumentHandle, inUse: number): Promise<{ s: Sample; acquired: number }> {
  let acquired = 0;
  const s = await until(() => {
    const x = h.sample(Date.now());
    acquired += x.acquired;
    return x.global?.inUse === inUse ? x : undefined;
  }, `a read of the holder set with ${inUse} members`);
  return { s, acquired };
}

describe("redis-semaphore adapter", () => {
  it("recognises a Semaphore and nothing else of the library", () => {
    expect(isRedisSemaphore(sem("k"))).toBe(true);
    expect(isRedisSemaphore(new Mutex(redis, "m"))).toBe(false);
    expect(isRedisSemaphore(new MultiSemaphore(redis, "ms", 3, 1))).toBe(false);
    expect(isRedisSemaphore({ acquire() {}, release() {} })).toBe(false);
    expect(isRedisSemaphore(null)).toBe(false);
    expect(() => instrumentRedisSemaphore(new RedlockSemaphore([redis], "r", 3), { name: uniqueName("r") })).toThrow(SemscopeAdapterError);
  });

  it("refuses a look-alike missing what 5.x has, and bad options, with errors that say which", () => {
    const s = sem(uniqueName("k"));
    const older = Object.create(Object.getPrototypeOf(s) as object, { ...Object.getOwnPropertyDescriptors(s), _acquireOptions: { value: undefined } }) as RedisSemaphore;
    expect(() => instrumentRedisSemaphore(older, { name: uniqueName("o") })).toThrow(/no object "_acquireOptions".*redis-semaphore 5\.x/);
    expect(() => instrumentRedisSemaphore(s, { name: uniqueName("o"), onRedisDown: "queue" as never })).toThrow(TypeError);
    expect(() => instrumentRedisSemaphore(s, { name: uniqueName("o"), onRedisDown: "local" })).toThrow(/localPermits is required/);
    expect(() => instrumentRedisSemaphore(s, { name: uniqueName("o"), onRedisDown: "local", localPermits: 4 })).toThrow(RangeError);
    expect(() => instrumentRedisSemaphore(s, { name: uniqueName("o"), permits: 9 })).toThrow(/differs from the semaphore's own limit 3/);
    expect(() => instrumentRedisSemaphore(s, { name: uniqueName("o"), redisTimeoutMs: 0 })).toThrow(RangeError);
    // None of the refusals left anything behind: the same target instruments cleanly.
    const h = instrumented(s);
    expect(() => instrumentRedisSemaphore(sem(s["_key"].slice("semaphore:".length)), { name: uniqueName("o") })).toThrow(/already instrumented/);
    h.untrack();
  });

  it("reports scope global with the global cap, this process's holders on that key, and the fleet read from Redis", async () => {
    const key = uniqueName("k");
    const h = instrumented(sem(key));
    expect(h.describe()).toMatchObject({ kind: "redis-semaphore", scope: "global", cap: 3, queue: "unknown", leaseTimeoutMs: 5000, acquireTimeoutMs: 300 });
    const a = sem(key);
    const b = sem(key);
    const other = sem(uniqueName("other"));
    await a.acquire();
    await b.acquire();
    await other.acquire();
    // A holder outside this process's view (as another process would be): written straight to Redis.
    await redis.zadd(`semaphore:${key}`, Date.now(), "elsewhere");
    const { s, acquired } = await sampleUntilGlobal(h, 3);
    expect(acquired).toBe(2);
    expect(s).toMatchObject({ cap: 3, inUse: 2, available: 1 });
    expect(s.global?.holders.slice().sort()).toEqual([a.identifier, b.identifier, "elsewhere"].sort());
    expect(s.global?.own.slice().sort()).toEqual([a.identifier, b.identifier].sort());
    // Unchanged behaviour while Redis is up: the fleet is full, so the library's own timeout.
    await expect(sem(key).acquire()).rejects.toThrow(/^Acquire semaphore semaphore:.* timeout$/);
    await a.release();
    await b.release();
    await other.release();
    // A second release() is a no-op in redis-semaphore, and a double release to the agent.
    await a.release();
    const after = h.sample(Date.now());
    expect(after).toMatchObject({ inUse: 0, released: 2, timeouts: 1, doubleReleases: 1 });
    expect(after.holdMs.count).toBe(2);
    expect(eventsOf(h, "double_release")).toHaveLength(1);
  });

  it("counts a MultiSemaphore on the instrumented key as the N permits it holds", async () => {
    const key = uniqueName("k");
    const h = instrumented(sem(key, 5));
    const multi = new MultiSemaphore(redis, key, 5, 3, { lockTimeout: 5000, acquireTimeout: 300, retryInterval: 10 });
    const single = sem(key, 5);
    await multi.acquire();
    await single.acquire();
    const { s, acquired } = await sampleUntilGlobal(h, 4);
    expect(acquired).toBe(2);
    expect(s).toMatchObject({ cap: 5, inUse: 4, available: 1 });
    // Its own members are the ones Redis holds: <identifier>_0 .. _2, beside the Semaphore's one.
    expect(s.global?.own.slice().sort()).toEqual(s.global?.holders.slice().sort());
    expect(h.snapshot().holders.map((x) => x.weight).sort()).toEqual([1, 3]);
    await multi.release();
    await single.release();
    expect(h.sample(Date.now())).toMatchObject({ inUse: 0, released: 2 });
  });

  it("untrack() puts the library's own methods back and stops reporting", () => {
    const s = sem(uniqueName("k"));
    const proto = Object.getPrototypeOf(s) as object;
    const before = { tryAcquire: s.tryAcquire, release: s.release, own: Object.getOwnPropertyNames(proto) };
    const h = instrumented(s);
    expect(s.tryAcquire).not.toBe(before.tryAcquire);
    expect(trackedAll()).toContain(h);
    h.untrack();
    expect(s.tryAcquire).toBe(before.tryAcquire);
    expect(s.release).toBe(before.release);
    expect(Object.getOwnPropertyNames(proto)).toEqual(before.own);
    expect(trackedAll()).not.toContain(h);
  });

  it("keeps a holder's refresh failures while Redis is down from becoming unhandled rejections, and reports the lease lost after", async () => {
    // No offline queue: every refresh while Redis is down rejects at once inside redis-semaphore's timer.
    const client = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on("error", () => undefined);
    await until(() => client.status === "ready", "the client ready", 10_000);
    const key = uniqueName("k");
    const lost: string[] = [];
    const mk = () => new RedisSemaphore(client, key, 3, { lockTimeout: 600, acquireTimeout: 300, retryInterval: 10, onLockLost(this: { identifier: string }) { lost.push(this.identifier); } });
    const h = tracked(instrumentRedisSemaphore(mk(), { name: uniqueName("refresh"), pollIntervalMs: 50, redisTimeoutMs: 300 }));
    const holder = mk();
    await holder.acquire();
    await server.stop();
    try {
      // Refreshes run every 480 ms; each one fails while Redis is away (vitest fails the run on an unhandled rejection).
      await until(() => h.refreshFailures >= 2, "two failed refreshes", 10_000);
    } finally {
      await server.restart();
    }
    // Redis came back empty: the next refresh finds the lease gone, and the service's onLockLost hears it.
    await until(() => lost.includes(holder.identifier), "the lease reported lost", 10_000);
    expect(eventsOf(h, "lease_expired").map((e) => e.holderId)).toEqual([holder.identifier]);
    let expiries = 0;
    await until(() => (expiries += h.sample(Date.now()).leaseExpiries) === 1, "one lease expiry in the samples");
    expect(h.sample(Date.now()).inUse).toBe(0);
    await holder.release();
    client.disconnect();
  }, 60_000);

  it("while Redis is down, acquire rejects with SemscopeRedisUnavailableError instead of waiting on ioredis's offline queue", async () => {
    const key = uniqueName("k");
    const h = instrumented(sem(key));
    await server.stop();
    try {
      await until(() => h.redisUp === false, "Redis seen down", 10_000);
      const err: unknown = await sem(key, 3, { acquireTimeout: 60_000 }).acquire().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(SemscopeRedisUnavailableError);
      expect(err).toMatchObject({ code: "SEMSCOPE_REDIS_UNAVAILABLE", semaphore: h.name });
      expect(h.sample(Date.now())).toMatchObject({ rejections: 1, inUse: 0 });
      expect(h.sample(Date.now()).global).toBeUndefined();
    } finally {
      await server.restart();
    }
    await until(() => h.redisUp, "Redis seen back", 20_000);
    const s = sem(key);
    await s.acquire();
    await s.release();
  }, 60_000);

  it("a client whose connection Redis accepts and never answers is found down: acquire rejects instead of waiting for good", async () => {
    // A stopped redis-server still completes TCP handshakes, so a client connecting to it stays at
    // "connect" (its ready check unanswered) with every command queued behind it.
    server.pause();
    const fresh = new Redis(server.url);
    fresh.on("error", () => undefined);
    try {
      const key = uniqueName("k");
      const make = () => new RedisSemaphore(fresh, key, 3, { lockTimeout: 5000, acquireTimeout: 60_000, retryInterval: 10 });
      const h = instrumented(make());
      const answered = make()
        .acquire()
        .then(
          () => "granted",
          (e: unknown) => e,
        );
      const bound = new Promise((resolve) => setTimeout(() => resolve("no answer within 10 s"), 10_000));
      const err = await Promise.race([answered, bound]);
      expect(fresh.status).toBe("connect");
      expect(err).toBeInstanceOf(SemscopeRedisUnavailableError);
      expect(err).toMatchObject({ reason: "not connected within 300 ms" });
      expect(h.redisUp).toBe(false);
      server.resume();
      await until(() => h.redisUp, "Redis seen up once the connection is made", 20_000);
      const s = make();
      await s.acquire();
      await s.release();
    } finally {
      server.resume();
      fresh.disconnect();
    }
  }, 60_000);
});
