// A budget split across live replicas, with real processes: replica children running the real
// agent (share: "replicas" on a real Redis) stream to a real hub, and every figure is read from
// their samples at the hub. 4 replicas on a budget of 20 get 5 each; one killed, the other three
// get 7, 7, 6 within the stated bound; three more started (the killed one's replacement and two
// more), the six get 4, 4, 3, 3, 3, 3; the sum of
// caps is the budget after each settle, and only a starting replica's single permit is ever over
// it. Shrinking a share never revokes a held permit. Redis stopped and started again (empty)
// changes no cap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HubState } from "../../../shared/protocol/index.js";
import { startRedis, type RedisServer } from "../../../scripts/support/redis.js";
import { startHub } from "../global/harness.js";
import { alertsOf, cleanupAll, onCleanup, sleep, stateOf, until } from "../stream/harness.js";
import { startReplica as startShareReplica, type Replica } from "./harness.js";

const SERVICE = "share-e2e";
const BUDGET = 20;
const LEASE_MS = 1500;
const HEARTBEAT_MS = 300;
const INTERVAL_MS = 200;
/** docs/agent-api.md: a dead replica's lease lapses, the others see it, wait a lease, grow; then a sample. */
const REDIVIDE_BOUND_MS = 2 * LEASE_MS + 2 * HEARTBEAT_MS + INTERVAL_MS;
/** Timers in children on a loaded 2-core machine run late; added to the bound, never instead of it. */
const LOAD_SLACK_MS = 3000;

let redis: RedisServer;
let hubUrl: string;
const replicas: Replica[] = [];

async function startReplica(instance: string): Promise<Replica> {
  const r = await startShareReplica({ hubUrl, redisUrl: redis.url, service: SERVICE, budget: BUDGET, leaseMs: LEASE_MS, heartbeatMs: HEARTBEAT_MS, intervalMs: INTERVAL_MS }, instance);
  replicas.push(r);
  return r;
}

interface Seen {
  instance: string;
  cap: number;
  inUse: number;
  available: number;
  replicas: number | undefined;
  reachable: boolean | undefined;
}

/** The live replicas' latest samples of `db` at the hub. */
async function seen(): Promise<Seen[]> {
  const s: HubState = await stateOf(hubUrl);
  const live = new Set(s.agents.filter((a) => a.connected).map((a) => a.agentId));
  return s.semaphores
    .filter((x) => x.service === SERVICE && x.id === "db" && live.has(x.agentId) && x.last !== null)
    .map((x) => ({ instance: x.instance, cap: x.cap, inUse: x.inUse, available: x.available, replicas: x.last?.share?.replicas, reachable: x.last?.share?.reachable }))
    .sort((a, b) => a.instance.localeCompare(b.instance));
}

const capsOf = (list: readonly Seen[]) => list.map((x) => x.cap).sort((a, b) => a - b);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Polls the hub until the live replicas' caps are `want` (sorted), all reporting `n` replicas; the largest sum seen on the way. */
async function settle(want: number[], what: string, timeoutMs: number): Promise<{ at: number; maxSum: number; last: Seen[] }> {
  let maxSum = 0;
  let latest: Seen[] = [];
  const last = await until(async () => {
    const list = (latest = await seen());
    maxSum = Math.max(maxSum, sum(capsOf(list)));
    const ok = list.length === want.length && capsOf(list).join() === want.join() && list.every((x) => x.replicas === want.length && x.reachable === true);
    return ok ? list : undefined;
  }, what, timeoutMs, 50).catch((err: Error) => {
    throw new Error(`${err.message}; the hub last saw ${JSON.stringify(latest)}`);
  });
  return { at: Date.now(), maxSum, last };
}

beforeAll(async () => {
  redis = await startRedis();
  onCleanup(() => redis.stop());
  hubUrl = (await startHub()).url;
}, 60_000);
afterAll(cleanupAll);

describe('share: "replicas" across real processes on a real Redis', () => {
  it("4 replicas on a budget of 20 get 5 each", async () => {
    await Promise.all(["r1", "r2", "r3", "r4"].map((i) => startReplica(i)));
    const { last } = await settle([5, 5, 5, 5], "4 replicas at 5 each", 30_000);
    expect(sum(last.map((x) => x.cap))).toBe(BUDGET);
  }, 120_000);

  it("one killed: the other three get 6–7 within the stated bound, their sum the budget", async () => {
    const victim = replicas.shift()!;
    const t0 = Date.now();
    await victim.kill("SIGKILL");
    const { at, last } = await settle([6, 7, 7], "3 replicas at 7, 7, 6", REDIVIDE_BOUND_MS + LOAD_SLACK_MS + 10_000);
    expect(at - t0, `re-divided ${at - t0} ms after the kill (bound ${REDIVIDE_BOUND_MS} ms + ${LOAD_SLACK_MS} ms for load)`).toBeLessThanOrEqual(REDIVIDE_BOUND_MS + LOAD_SLACK_MS);
    expect(sum(last.map((x) => x.cap))).toBe(BUDGET);
  }, 60_000);

  it("three more started: the six get 3–4, and a shrunk share keeps the permits it holds", async () => {
    // The first replica holds its whole share (and one more waits) before the others arrive.
    const holder = replicas[0];
    const before = await holder.ask({ cmd: "state" }, "state");
    await holder.ask({ cmd: "hold", n: before.cap + 1 }, "holding");
    await until(async () => ((await holder.ask({ cmd: "state" }, "state")).held === before.cap ? true : undefined), "the holder to hold its share", 10_000);

    await Promise.all(["r5", "r6", "r7"].map((i) => startReplica(i)));
    const { maxSum, last } = await settle([3, 3, 3, 3, 4, 4], "6 replicas at 4, 4, 3, 3, 3, 3", 30_000);
    expect(sum(last.map((x) => x.cap))).toBe(BUDGET);
    // The documented transient: each starting replica's single permit, until the others shrink.
    expect(maxSum).toBeLessThanOrEqual(BUDGET + 3);

    // Nothing revoked: in-use above the new cap, available negative, the waiter still waiting.
    const h = await holder.ask({ cmd: "state" }, "state");
    expect(h.held).toBe(before.cap);
    expect(h.inUse).toBe(before.cap);
    expect(h.cap).toBeLessThan(before.cap);
    expect(h.waiting).toBe(1);
    const atHub = last.find((x) => x.instance === holder.instance)!;
    expect(atHub.inUse).toBe(before.cap);
    expect(atHub.available).toBe(atHub.cap - before.cap);
    // Released down to below the cap, the waiter is granted; no more than the cap is held.
    await holder.ask({ cmd: "release", n: before.cap }, "released");
    await until(async () => ((await holder.ask({ cmd: "state" }, "state")).waiting === 0 ? true : undefined), "the waiter to be granted", 10_000);
    const after = await holder.ask({ cmd: "state" }, "state");
    expect(after.inUse).toBe(1);
    await holder.ask({ cmd: "release" }, "released");
  }, 120_000);

  it("Redis stopped mid-run changes no cap, and none after it is back (empty)", async () => {
    const baseline = await seen();
    expect(baseline).toHaveLength(6);
    const caps = new Map(baseline.map((x) => [x.instance, x.cap]));
    const unchanged = (list: Seen[]) => {
      for (const x of list) expect(x.cap, `${x.instance}'s cap`).toBe(caps.get(x.instance));
    };
    await redis.stop();
    // Every replica finds it gone, and keeps its share for longer than two leases.
    await until(async () => {
      const list = await seen();
      unchanged(list);
      return list.length === 6 && list.every((x) => x.reachable === false) ? true : undefined;
    }, "every replica to report the coordinator unreachable", 15_000, 50);
    const downUntil = Date.now() + 2 * LEASE_MS + 500;
    while (Date.now() < downUntil) {
      unchanged(await seen());
      await sleep(50);
    }
    await redis.restart();
    await until(async () => {
      const list = await seen();
      unchanged(list);
      return list.length === 6 && list.every((x) => x.reachable === true && x.replicas === 6) ? true : undefined;
    }, "every replica to reach Redis again and count six", 30_000, 50);
    // Back, the first heartbeats saw fewer members (larger shares): nobody grew on them.
    const watchUntil = Date.now() + 2 * LEASE_MS + 500;
    while (Date.now() < watchUntil) {
      unchanged(await seen());
      await sleep(50);
    }
  }, 120_000);

  it("a replica closed cleanly gives its lease up at once: the others grow after one lease period", async () => {
    const leaving = replicas.pop()!;
    const t0 = Date.now();
    await leaving.ask({ cmd: "close" }, "closed");
    const { at } = await until(async () => {
      const list = (await seen()).filter((x) => x.instance !== leaving.instance);
      return list.length === 5 && capsOf(list).join() === "4,4,4,4,4" && list.every((x) => x.replicas === 5) ? { at: Date.now() } : undefined;
    }, "5 replicas at 4 each", 30_000, 50);
    expect(at - t0).toBeLessThanOrEqual(LEASE_MS + 2 * HEARTBEAT_MS + INTERVAL_MS + LOAD_SLACK_MS);
  }, 60_000);

  it("raised no over_budget alert over the whole run: the starting replicas' transient is not one", async () => {
    const alerts = await alertsOf(hubUrl);
    expect(alerts.filter((a) => a.rule === "over_budget").map((a) => JSON.stringify(a))).toEqual([]);
  });
});
