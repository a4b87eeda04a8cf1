// A service restarted under the same service/instance (a new agentId) takes over its earlier run's
// semaphores: same keys. The earlier run is kept disconnected and forgotten later (after the keep
// time, or evicted to make room under the agent cap); forgetting it must leave what the other run
// of that name still holds: its histories (/ui snapshot, /api/history), its alerts and its /metrics
// series. Real hub, real sockets; the hub clock is moved forward to pass the keep time.
import type { Socket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import type { Hub, HubOptions } from "../../../../main/hub/index.js";
import { semaphoreKey } from "../../../../shared/protocol/index.js";
import { agent, cleanupAll, client, dashboard, getJson, hello, info, request, sample, sleep, startHub, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const NAME = { service: "svc", instance: "inst" } as const;
const IDS = ["db", "cache"] as const;
const KEYS = IDS.map((id) => semaphoreKey(NAME.service, NAME.instance, id));
const KEEP_MS = 60_000;

/** A hub whose clock runs `skew.ms` ahead of the wall clock; agents are kept KEEP_MS once disconnected. */
async function hubWithClock(opts: HubOptions = {}): Promise<{ hub: Hub; skew: { ms: number } }> {
  const skew = { ms: 0 };
  const hub = await startHub({ now: () => Date.now() + skew.ms, forgetAfterMs: KEEP_MS, ...opts });
  return { hub, skew };
}

/** A run of svc/inst (from 127.0.0.1, or `from`): registers IDS and sends `batches` samples of them (db with a double release). */
async function run(hub: Hub, agentId: string, batches: number, from?: string): Promise<Socket> {
  const s = from === undefined ? await agent(hub, agentId, IDS.map((id) => info(id)), NAME) : await client(hub.url, "/agent", { from });
  if (from !== undefined) {
    expect(await request<AckAnswer>(s, "hello", hello(agentId, NAME))).toMatchObject({ ok: true });
    expect(await request<AckAnswer>(s, "register", { semaphores: IDS.map((id) => info(id)) })).toEqual({ ok: true });
  }
  for (let seq = 0; seq < batches; seq++) {
    const t = Date.now() - (batches - seq) * 1000;
    const ack = await request<AckAnswer>(s, "samples", { seq, t, intervalMs: 1000, items: IDS.map((id) => sample(id, id === "db" ? { doubleReleases: 1 } : {})) });
    expect(ack).toEqual({ ok: true, seq });
  }
  return s;
}

async function leave(hub: Hub, s: Socket, agentId: string): Promise<void> {
  s.disconnect();
  await waitUntil(() => hub.state().agents.some((a) => a.agentId === agentId && !a.connected), `${agentId} disconnected`);
}

/** run-1 (from `firstFrom`) and then run-2 come and leave; then an agent of another name joins from 127.0.0.1. */
async function bothGoneThenNewcomer(hub: Hub, firstFrom?: string): Promise<void> {
  await leave(hub, await run(hub, "run-1", 2, firstFrom), "run-1");
  await leave(hub, await run(hub, "run-2", 3), "run-2");
  await agent(hub, "newcomer", [info("x")], { service: "other", instance: "o-1" });
}

const forgotten = (hub: Hub, agentId: string) => !hub.state().agents.some((a) => a.agentId === agentId);

/** What every reader shows of svc/inst's semaphores, which must all be `owner`'s, with history. */
async function expectHeldBy(hub: Hub, owner: string, points: number): Promise<void> {
  const state = hub.state();
  const sems = state.semaphores.filter((s) => s.service === NAME.service && s.instance === NAME.instance);
  expect(sems.map((s) => [s.key, s.agentId]).sort()).toEqual(KEYS.map((k) => [k, owner]).sort());
  for (const s of sems) expect(s.last).not.toBeNull();
  // Its alert, active: the double release its db reported.
  const alerts = state.alerts.filter((a) => a.service === NAME.service && a.instance === NAME.instance && a.rule === "double_release");
  expect(alerts.map((a) => [a.semaphore, a.resolvedAt])).toEqual([["db", null]]);
  for (const key of KEYS) {
    const { status, body } = await getJson<{ window: { t: number[] } }>(hub, `/api/history?key=${encodeURIComponent(key)}&columns=inUse`);
    expect(status, key).toBe(200);
    expect(body.window.t.length, key).toBeGreaterThanOrEqual(points);
  }
  const { snapshot } = await dashboard(hub.url);
  for (const key of KEYS) {
    expect(snapshot.state.semaphores.find((s) => s.key === key)?.agentId, key).toBe(owner);
    expect(snapshot.sparklines[key]?.t.length ?? 0, key).toBeGreaterThanOrEqual(points);
  }
  expect(snapshot.state.alerts.filter((a) => a.instance === NAME.instance).map((a) => [a.rule, a.semaphore])).toContainEqual(["double_release", "db"]);
  const metrics = (await getJson<string>(hub, "/metrics")).body;
  for (const id of IDS) {
    const m = new RegExp(`semscope_semaphore_acquired_total\\{[^}]*instance="inst"[^}]*semaphore="${id}"[^}]*\\} (\\d+)`).exec(metrics);
    expect(m?.[1], `acquired_total of ${id}`).toBeDefined();
    expect(Number(m![1])).toBeGreaterThan(0);
  }
}

describe("forgetting an earlier run of a restarted service/instance", () => {
  it("past the keep time, leaves the live run's histories, alerts and /metrics series", async () => {
    const { hub, skew } = await hubWithClock();
    const a = await run(hub, "run-1", 2);
    await leave(hub, a, "run-1");
    await run(hub, "run-2", 3);
    const open = await dashboard(hub.url);
    skew.ms += KEEP_MS + 1000;
    await waitUntil(() => forgotten(hub, "run-1"), "run-1 forgotten", 5000);
    await expectHeldBy(hub, "run-2", 3);
    // A dashboard open across the forget is told the agent left, and nothing of its semaphores.
    await waitUntil(() => open.deltas.some((d) => d.removedAgents?.includes("run-1") === true), "run-1 in removedAgents");
    expect(open.deltas.flatMap((d) => d.removed ?? []).filter((k) => KEYS.includes(k))).toEqual([]);
  });

  it("evicted to make room under the agent cap, leaves the live run's histories, alerts and /metrics series", async () => {
    const { hub } = await hubWithClock({ admission: { maxAgents: 2 } });
    const a = await run(hub, "run-1", 2);
    await leave(hub, a, "run-1");
    await run(hub, "run-2", 3);
    await agent(hub, "newcomer", [info("x")], { service: "other", instance: "o-1" });
    expect(forgotten(hub, "run-1")).toBe(true);
    // Its slices run over the next turns.
    await sleep(100);
    await expectHeldBy(hub, "run-2", 3);
  });

  it("while the later run is gone too but still kept, leaves what that run holds", async () => {
    const { hub, skew } = await hubWithClock();
    const a = await run(hub, "run-1", 2);
    await leave(hub, a, "run-1");
    skew.ms += KEEP_MS / 2;
    const b = await run(hub, "run-2", 3);
    await leave(hub, b, "run-2");
    skew.ms += KEEP_MS / 2 + 1000;
    await waitUntil(() => forgotten(hub, "run-1"), "run-1 forgotten", 5000);
    expect(forgotten(hub, "run-2")).toBe(false);
    await expectHeldBy(hub, "run-2", 3);
    // And once the later run is past the keep time as well, nothing of the name is left.
    skew.ms += KEEP_MS;
    await waitUntil(() => forgotten(hub, "run-2"), "run-2 forgotten", 5000);
    expect(hub.state().semaphores.filter((s) => s.instance === NAME.instance)).toEqual([]);
    for (const key of KEYS) expect((await getJson(hub, `/api/history?key=${encodeURIComponent(key)}`)).status).toBe(404);
    // A render serves the scrapes of the next second (DEFAULT_SHARE_MS): a later one has none of it.
    const series = async () => (await getJson<string>(hub, "/metrics")).body.split("\n").filter((l) => l.includes('instance="inst"'));
    await waitUntil(async () => (await series()).length === 0, "its /metrics series gone", 5000);
  });

  it("evicted while the later run is gone too, leaves what that run holds", async () => {
    const { hub } = await hubWithClock({ admission: { maxAgents: 2 } });
    await bothGoneThenNewcomer(hub);
    expect(forgotten(hub, "run-1")).toBe(true);
    expect(forgotten(hub, "run-2")).toBe(false);
    await sleep(100);
    await expectHeldBy(hub, "run-2", 3);
  });

  it("evicting the later run while the earlier one is still kept leaves nothing of the name in any reader", async () => {
    // The later run's address is at its own cap: a newcomer there evicts it, not the earlier run (kept, from elsewhere).
    const { hub } = await hubWithClock({ admission: { maxAgentsPerAddress: 1 } });
    await bothGoneThenNewcomer(hub, "127.0.0.2");
    expect(forgotten(hub, "run-2")).toBe(true);
    expect(forgotten(hub, "run-1")).toBe(false);
    await sleep(100);
    // The semaphores were the later run's: they leave every reader together, not just some.
    expect(hub.state().semaphores.filter((s) => s.instance === NAME.instance)).toEqual([]);
    expect(hub.state().alerts.filter((a) => a.instance === NAME.instance && a.rule === "double_release")).toEqual([]);
    for (const key of KEYS) expect((await getJson(hub, `/api/history?key=${encodeURIComponent(key)}`)).status, key).toBe(404);
    const { snapshot } = await dashboard(hub.url);
    expect(KEYS.filter((k) => snapshot.sparklines[k] !== undefined)).toEqual([]);
    // The earlier run is still an agent (semscope_hub_agent_up); no semaphore series is left.
    const metrics = (await getJson<string>(hub, "/metrics")).body;
    expect(metrics.split("\n").filter((l) => l.startsWith("semscope_semaphore_") && l.includes('instance="inst"'))).toEqual([]);
  });
});
