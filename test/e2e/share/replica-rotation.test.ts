// More live replicas than the budget, with real processes on a real Redis: 3 replicas on a budget
// of 2. In any turn two hold 1 permit and one holds 0, so the fleet's caps never sum past the
// budget once settled; the permits rotate, so every replica holds one within two turns; an
// acquire on a replica at 0 waits for its turn instead of failing; the replica at 0 says so on
// its samples (target 0, replicas 3) and with a process warning.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../../scripts/support/redis.js";
import { startHub } from "../global/harness.js";
import { alertsOf, cleanupAll, onCleanup, sleep, stateOf, until } from "../stream/harness.js";
import { startReplica, type Replica } from "./harness.js";

const SERVICE = "share-rotation-e2e";
const BUDGET = 2;
const LEASE_MS = 1000;
const HEARTBEAT_MS = 200;
const TURN_MS = 4000;
const INTERVAL_MS = 200;

let redis: RedisServer;
let hubUrl: string;
let replicas: Replica[] = [];

beforeAll(async () => {
  redis = await startRedis();
  onCleanup(() => redis.stop());
  hubUrl = (await startHub()).url;
  const cfg = { hubUrl, redisUrl: redis.url, service: SERVICE, budget: BUDGET, leaseMs: LEASE_MS, heartbeatMs: HEARTBEAT_MS, intervalMs: INTERVAL_MS, turnMs: TURN_MS };
  replicas = await Promise.all(["q1", "q2", "q3"].map((i) => startReplica(cfg, i)));
}, 60_000);
afterAll(cleanupAll);

const capsNow = () => Promise.all(replicas.map(async (r) => (await r.ask({ cmd: "state" }, "state")).cap));

describe('share: "replicas" with more replicas than the budget', () => {
  it("settles to two replicas at 1 and one at 0, and the 0 is on its samples", async () => {
    await until(async () => {
      const caps = await capsNow();
      return caps.sort().join() === "0,1,1" ? true : undefined;
    }, "caps 0, 1, 1", 20_000, 50);
    const s = await stateOf(hubUrl);
    await until(async () => {
      const rows = (await stateOf(hubUrl)).semaphores.filter((x) => x.service === SERVICE && x.id === "db" && x.last !== null);
      const waiting = rows.filter((x) => x.cap === 0);
      return rows.length === 3 && waiting.length === 1 && waiting[0].last?.share?.target === 0 && waiting[0].last?.share?.replicas === 3 ? true : undefined;
    }, `the hub to show one replica at 0 of 3 (it last had ${JSON.stringify(s.semaphores.map((x) => x.cap))})`, 10_000, 50);
    for (const r of replicas) expect(r.stderr()).toMatch(/SEMSCOPE_SHARE_ROTATION.*3 live replicas share a budget of 2/);
  }, 60_000);

  it("rotates: every replica holds a permit within two turns, and the caps never sum past the budget", async () => {
    const everHeld = new Set<string>();
    let maxSum = 0;
    const until2 = Date.now() + 2 * TURN_MS + LEASE_MS + 2 * HEARTBEAT_MS + 3000;
    while (Date.now() < until2 && everHeld.size < 3) {
      const caps = await capsNow();
      maxSum = Math.max(maxSum, caps.reduce((a, b) => a + b, 0));
      caps.forEach((c, i) => c > 0 && everHeld.add(replicas[i].instance));
      await sleep(25);
    }
    expect([...everHeld].sort()).toEqual(["q1", "q2", "q3"]);
    expect(maxSum).toBeLessThanOrEqual(BUDGET);
  }, 60_000);

  it("an acquire on the replica at 0 waits for its turn, then is granted", async () => {
    let caps: number[] = [];
    await until(async () => ((caps = await capsNow()).includes(0) ? true : undefined), "a replica at 0", 10_000, 25);
    const waiter = replicas[caps.indexOf(0)];
    await waiter.ask({ cmd: "hold", n: 1 }, "holding");
    const st = await waiter.ask({ cmd: "state" }, "state");
    // Its turn may have come in between; if not, the acquire is waiting, not refused.
    expect(st.held + st.waiting).toBe(1);
    await until(async () => ((await waiter.ask({ cmd: "state" }, "state")).held === 1 ? true : undefined), "the waiting acquire to be granted on its turn", 2 * TURN_MS + LEASE_MS + 3000, 50);
    await waiter.ask({ cmd: "release" }, "released");
  }, 60_000);

  it("raised no over_budget alert: the rotation keeps the fleet within its budget", async () => {
    const alerts = await alertsOf(hubUrl);
    expect(alerts.filter((a) => a.rule === "over_budget").map((a) => JSON.stringify(a))).toEqual([]);
  });
});
