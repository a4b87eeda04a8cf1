// A fleet-wide cap on a real Redis: three replicas (real agent processes, redis-semaphore
// instrumented) share a global cap of 5 under contention, and never more than 5 hold, as Redis's
// own holder set and the replicas' own grant logs both show. A replica killed with SIGKILL while
// holding 2 leaves two orphaned leases, which the hub's fleet view flags while they last; they
// lapse within the lease and the survivors get every permit back.
import { Redis } from "ioredis";
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../../scripts/support/redis.js";
import { cleanupAll, onCleanup, sleep, until } from "../stream/harness.js";
import { globalViews } from "../../../shared/protocol/index.js";
import type { UiSnapshot } from "../../../shared/ui-protocol/index.js";
import type { Grant } from "./fixtures/messages.js";
import { globalOf, startHub, startReplica, type Replica } from "./harness.js";

const CAP = 5;
const LOCK_TIMEOUT_MS = 3000;
const KEY = "semaphore:global-api";
const FLEET = "api/global-api";

let redis: RedisServer;
let probe: Redis;
let hubUrl: string;
const replicas: Replica[] = [];

beforeAll(async () => {
  redis = await startRedis();
  onCleanup(() => redis.stop());
  probe = new Redis(redis.url);
  onCleanup(() => probe.quit());
  hubUrl = (await startHub()).url;
  const env = (i: number) => ({
    MODE: "redis",
    HUB_URL: hubUrl,
    SERVICE: "api",
    INSTANCE: `r${i}`,
    REDIS_URL: redis.url,
    CAP: String(CAP),
    LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
    INTERVAL_MS: "250",
  });
  replicas.push(...(await Promise.all([1, 2, 3].map((i) => startReplica(env(i))))));
}, 90_000);
afterAll(cleanupAll);

/** The most leases that overlap at any instant, from [grantedAt, releasedAt] spans. */
function maxOverlap(spans: readonly Grant[]): number {
  const edges = spans.flatMap((s) => [
    { t: s.grantedAt, d: 1 },
    { t: s.releasedAt, d: -1 },
  ]);
  // A release and a grant at the same ms: the release first (the logged spans are inside Redis's).
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const e of edges) max = Math.max(max, (now += e.d));
  return max;
}

function uiSnapshot(url: string): Promise<UiSnapshot> {
  const socket = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
  return new Promise<UiSnapshot>((resolve, reject) => {
    socket.once("snapshot", (snap: UiSnapshot) => resolve(snap));
    socket.once("connect_error", reject);
  }).finally(() => socket.close());
}

describe("redis-semaphore: a global cap across three agent processes", () => {
  it("never lets more than 5 hold, by Redis's holder set and by the holders' own logs", async () => {
    await Promise.all(replicas.map((r) => r.ask({ cmd: "churn:start", n: 4 }, "churn:started")));
    // 12 workers contend for 5 permits; Redis's sorted set is read as fast as it answers.
    // Counted as read, not spread into Math.max: 4 s of reads can outnumber the arguments a call
    // may take ("Maximum call stack size exceeded" on a fast machine).
    let reads = 0;
    let maxHeld = 0;
    let overCap = 0;
    const end = Date.now() + 4000;
    while (Date.now() < end) {
      const held = await probe.zcard(KEY);
      reads++;
      maxHeld = Math.max(maxHeld, held);
      if (held > CAP) overCap++;
    }
    const logs = await Promise.all(replicas.map((r) => r.ask({ cmd: "churn:stop" }, "churn:stopped")));
    const spans = logs.flatMap((l) => l.log);
    console.log(`global cap: ${spans.length} grants over 3 replicas, ${reads} reads of the holder set, max held ${maxHeld} (Redis), ${maxOverlap(spans)} (logs)`);
    // Contention was real: the cap was reached, and every replica got permits.
    expect(maxHeld).toBe(CAP);
    expect(logs.every((l) => l.log.length > 0)).toBe(true);
    expect(overCap).toBe(0);
    expect(maxOverlap(spans)).toBeLessThanOrEqual(CAP);
    expect(maxOverlap(spans)).toBeGreaterThanOrEqual(CAP - 1);
  }, 60_000);

  it("gives a SIGKILLed holder's permits back within the lease, and the fleet view flags its orphans while they last", async () => {
    await until(async () => (await probe.zcard(KEY)) === 0, "the churn's leases released", 10_000);
    const [victim, a, b] = replicas;
    const held = await victim.ask({ cmd: "hold", n: 2 }, "held");
    const mine = await a.ask({ cmd: "hold", n: 1 }, "held");
    // The fleet view: 3 held fleet-wide against the global cap of 5, all claimed by live agents.
    const before = await until(async () => {
      const g = await globalOf(hubUrl, FLEET);
      return g !== undefined && g.inUse === 3 && g.agentsInUse === 3 && g.unattributed === 0 ? g : undefined;
    }, "the fleet view to show 3 of 5 held", 10_000, 50);
    expect(before).toMatchObject({ cap: CAP, replicas: 3, orphans: [] });

    await victim.kill("SIGKILL");
    const killedAt = Date.now();
    // Its two leases are still in Redis, held by no live agent: orphans, named by the replica that held them.
    const orphaned = await until(async () => {
      const g = await globalOf(hubUrl, FLEET);
      return g !== undefined && g.orphans.length === 2 && g.replicas === 2 ? g : undefined;
    }, "the fleet view to flag the orphaned leases", 10_000, 50);
    expect(orphaned.inUse).toBe(3);
    expect(orphaned.agentsInUse).toBe(1);
    expect(orphaned.orphans.map((o) => o.id).sort()).toEqual([...held.ids].sort());
    expect(orphaned.orphans.every((o) => o.instance === victim.instance)).toBe(true);
    // A dashboard (/ui) computes the same view from its snapshot, as renderer's fleet view does.
    const snap = await uiSnapshot(hubUrl);
    const live = new Set(snap.state.agents.filter((x) => x.connected).map((x) => x.agentId));
    const fromUi = globalViews(snap.state.semaphores, (id) => live.has(id)).find((g) => g.key === FLEET);
    expect(fromUi?.orphans.map((o) => o.id).sort()).toEqual([...held.ids].sort());
    expect(fromUi?.inUse).toBe(3);

    // Within the lease (+5 s of slack for a loaded machine) the survivors can take all 5 permits
    // between them: 1 is held by a, so 4 more must be grantable.
    const bound = LOCK_TIMEOUT_MS + 5000;
    const got = await b.ask({ cmd: "try", n: 4, timeoutMs: bound }, "tried", bound + 10_000);
    expect(got.outcomes.every((o) => o.ok)).toBe(true);
    console.log(`orphaned leases: permits back ${Date.now() - killedAt} ms after SIGKILL (lease ${LOCK_TIMEOUT_MS} ms)`);
    expect(await probe.zcard(KEY)).toBe(CAP);
    const members = await probe.zrange(KEY, 0, -1);
    expect(members).toEqual(expect.arrayContaining(mine.ids));
    for (const id of held.ids) expect(members).not.toContain(id);

    // The view drops the orphans once their leases lapsed, and shows the fleet full.
    const after = await until(async () => {
      const g = await globalOf(hubUrl, FLEET);
      return g !== undefined && g.orphans.length === 0 && g.inUse === CAP ? g : undefined;
    }, "the fleet view without orphans", 10_000, 50);
    expect(after.agentsInUse).toBe(CAP);
    await Promise.all([a.ask({ cmd: "release-all" }, "released"), b.ask({ cmd: "release-all" }, "released")]);
    await until(async () => (await probe.zcard(KEY)) === 0, "every lease released", 10_000);
    await sleep(0);
  }, 60_000);
});
