// Redis slow (SIGSTOP: connected, answering nothing) and Redis down (stopped), with real agent
// processes on the service's default ioredis client (offline queue on, retries on): an acquire is
// answered, never left hanging. onRedisDown "fail" rejects with SemscopeRedisUnavailableError,
// also an acquire already waiting when Redis goes; "local" grants up to localPermits and no more.
// When Redis is back, acquires go through Redis again, and no permit granted during the outage
// is left behind in Redis. Bounds are liveness bounds (the ask's deadline), not timings.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../../scripts/support/redis.js";
import { cleanupAll, onCleanup, until } from "../stream/harness.js";
import type { TryOutcome } from "./fixtures/messages.js";
import { globalOf, startHub, startReplica, stateOf, type Replica } from "./harness.js";

const CAP = 5;
const LOCK_TIMEOUT_MS = 3000;
const REDIS_TIMEOUT_MS = 500;
const KEY = "semaphore:global-api";
/** Found down within a poll plus the Redis timeout; 5 s of slack for a loaded machine. */
const ANSWER_BOUND_MS = REDIS_TIMEOUT_MS + 250 + 5000;

let redis: RedisServer;
let probe: Redis;
let hubUrl: string;
let failing: Replica;
let local: Replica;

beforeAll(async () => {
  redis = await startRedis();
  onCleanup(() => redis.stop());
  probe = new Redis(redis.url, { maxRetriesPerRequest: null });
  probe.on("error", () => undefined);
  onCleanup(() => probe.disconnect());
  hubUrl = (await startHub()).url;
  const env = (instance: string, extra: Record<string, string>) => ({
    MODE: "redis",
    HUB_URL: hubUrl,
    SERVICE: "api",
    INSTANCE: instance,
    REDIS_URL: redis.url,
    CAP: String(CAP),
    LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
    REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
    ...extra,
  });
  [failing, local] = await Promise.all([
    startReplica(env("fail-1", { ON_REDIS_DOWN: "fail" })),
    startReplica(env("local-1", { ON_REDIS_DOWN: "local", LOCAL_PERMITS: "2" })),
  ]);
}, 90_000);
afterAll(cleanupAll);

const tryOn = async (r: Replica, n: number, timeoutMs: number) => (await r.ask({ cmd: "try", n, timeoutMs }, "tried", ANSWER_BOUND_MS + timeoutMs)).outcomes;
const unavailable = (o: TryOutcome) => !o.ok && o.error === "SemscopeRedisUnavailableError";

/** Until an acquire on `r` goes through Redis again (each try is answered quickly either way). */
async function recovered(r: Replica): Promise<string> {
  return until(async () => {
    const [o] = await tryOn(r, 1, 1000);
    return o.ok && (await probe.zrange(KEY, 0, -1)).includes(o.id) ? o.id : undefined;
  }, `${r.instance} to acquire through Redis again`, 30_000, 100);
}

describe("redis-semaphore when Redis is slow or down", () => {
  it("slow (SIGSTOP): a waiting acquire fails fast, no permit is left behind, and it recovers on SIGCONT", async () => {
    // The fleet full first, so the acquire is waiting (retrying) when Redis stops answering,
    // whether it reaches Redis before the SIGSTOP or after: with free permits, a loaded machine
    // let it be granted before the signal landed.
    await local.ask({ cmd: "hold", n: CAP }, "held");
    const pending = tryOn(failing, 1, 20_000);
    redis.pause();
    let outcomes: TryOutcome[];
    try {
      outcomes = await pending;
    } finally {
      redis.resume();
    }
    expect(outcomes[0]).toMatchObject({ ok: false, error: "SemscopeRedisUnavailableError" });
    expect((outcomes[0] as { message: string }).message).toMatch(/Redis is unavailable/);
    await local.ask({ cmd: "release-all" }, "released");
    const id = await recovered(failing);
    // Whatever the abandoned attempt got once Redis answered again was handed back.
    await until(async () => {
      const members = await probe.zrange(KEY, 0, -1);
      return members.length === 1 && members[0] === id;
    }, "only the recovered lease in Redis", 10_000, 50);
    await failing.ask({ cmd: "release-all" }, "released");
  }, 60_000);

  it("down: fail rejects at once (also an acquire already waiting), local grants up to its cap; both recover", async () => {
    // The fleet is full, so this acquire is waiting (retrying) when Redis goes away.
    const held = await failing.ask({ cmd: "hold", n: CAP }, "held");
    await until(async () => (await globalOf(hubUrl, "api/global-api"))?.inUse === CAP, "the fleet view to show the cap reached", 10_000, 50);
    const waiting = tryOn(failing, 1, 30_000);
    await redis.stop();
    expect((await waiting)[0]).toMatchObject({ ok: false, error: "SemscopeRedisUnavailableError" });

    // While it is down: a fresh acquire fails fast on "fail"; "local" grants 2 and times the third out.
    expect(unavailable((await tryOn(failing, 1, 5000))[0])).toBe(true);
    const onLocal = await tryOn(local, 3, 1000);
    expect(onLocal.filter((o) => o.ok)).toHaveLength(2);
    // redis-semaphore's own TimeoutError (its name is plain "Error"), as when the fleet is full.
    expect(onLocal.filter((o) => !o.ok).map((o) => (o as { message: string }).message)).toEqual([expect.stringMatching(/^Acquire semaphore .* timeout$/)]);

    // Both services keep reporting; the fleet view has no fleet-wide figure without Redis.
    const state = await stateOf(hubUrl);
    expect(state.agents.filter((a) => a.connected).map((a) => a.instance).sort()).toEqual(["fail-1", "local-1"]);
    await until(async () => (await globalOf(hubUrl, "api/global-api"))?.inUse === null, "the fleet view without a Redis read", 10_000, 50);

    await redis.restart();
    await recovered(failing);
    await local.ask({ cmd: "release-all" }, "released");
    await recovered(local);
    // Redis came back empty: the leases held through the outage are reported lost (the service's
    // onLockLost) at their next refresh, not left counted forever.
    await until(async () => {
      const r = await failing.ask({ cmd: "lost" }, "lost");
      return held.ids.every((id) => r.ids.includes(id));
    }, "the outage's leases reported lost", LOCK_TIMEOUT_MS + 10_000, 200);
    // ... and no longer counted as this replica's holders.
    await until(async () => {
      const sem = (await stateOf(hubUrl)).semaphores.find((s) => s.instance === "fail-1" && s.id === "global-api");
      return sem !== undefined && sem.inUse === 1;
    }, "fail-1 to report only its recovered holder", 10_000, 50);
    await Promise.all([failing.ask({ cmd: "release-all" }, "released"), local.ask({ cmd: "release-all" }, "released")]);
    await until(async () => (await probe.zcard(KEY)) === 0, "every lease released", 10_000);
  }, 90_000);
});
