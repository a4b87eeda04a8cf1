// Filling the hub (issue 28, item 4), against a hub in a child process (its memory is its own):
// floods of new agent names and semaphores from one address, live and disconnected, while an
// honest agent (the real agent, in its own process) joins from another. What the protocol promises
// it: its batches all acknowledged, in order; its semaphores held, with history; the hub's memory
// bounded; and every refusal counted in /api/state and /metrics.
import { afterEach, describe, expect, it } from "vitest";
import { io } from "socket.io-client";
import type { ApiHubState, HubAdmission } from "../../../shared/protocol/index.js";
import type { UiDelta, UiSnapshot } from "../../../shared/ui-protocol/types.js";
import { cleanupAll, onCleanup, startHubChild, startService, until, type Child } from "../stream/harness.js";
import { expectAckedInOrder, ids, rawAgent, type RawAgent } from "./harness.js";

afterEach(cleanupAll);

/** The flood's address: another loopback address, so the hub sees another remote host. */
const FLOOD = "127.0.0.2";

async function state(url: string): Promise<ApiHubState> {
  const res = await fetch(`${url}/api/state`);
  expect(res.status).toBe(200);
  return (await res.json()) as ApiHubState;
}

/** An agent from FLOOD that says hello, registers `n` semaphores and sends one batch of them. */
async function floodAgent(url: string, name: string, n: number): Promise<{ agent: RawAgent; acks: { hello: boolean; register: boolean; samples: boolean; error?: string } }> {
  const agent = await rawAgent(url, { from: FLOOD });
  const hello = await agent.hello(name, { service: "flood", instance: name });
  if (!hello.ok) return { agent, acks: { hello: false, register: false, samples: false, error: hello.error } };
  const list = ids(name, n);
  const register = await agent.register(list);
  const samples = await agent.samples(0, list);
  return { agent, acks: { hello: true, register: register.ok, samples: samples.ok, error: register.error ?? samples.error } };
}

/** The honest agent: the real agent in a child, 5 semaphores, acks reported as they come. */
async function honest(url: string): Promise<Child & { agentId: string }> {
  return startService({ url, service: "honest", instance: "h-1", intervalMs: 250, scenarios: ["steady:5"], notifyAcks: true });
}

async function honestHistory(url: string): Promise<number> {
  const s = await state(url);
  const keys = s.semaphores.filter((x) => x.service === "honest").map((x) => x.key);
  let withHistory = 0;
  for (const key of keys) if ((await fetch(`${url}/api/history?key=${encodeURIComponent(key)}&tier=1s`)).status === 200) withHistory++;
  return withHistory;
}

describe("a flood of agents and semaphores from one address", () => {
  it("holds at most maxSemaphoresPerAddress of the flood, with bounded memory, and still admits an honest agent from elsewhere", async () => {
    const hub = await startHubChild({ admission: { maxSemaphoresPerAddress: 2000 } });
    const before = await hub.mem();
    // Three short floods of fresh names, each agent gone right after (kept 6 h unless room is needed).
    let refused = 0;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 6; i++) {
        const { agent, acks } = await floodAgent(hub.url, `f${round}-${i}`, 1000);
        if (!acks.register || !acks.samples) {
          refused++;
          expect(acks.error).toMatch(/semaphore limit reached/);
        }
        agent.close();
        await until(async () => (await state(hub.url)).agents.every((a) => !a.connected) || undefined, "the flood agent's close", 10_000);
      }
    }
    const service = await honest(hub.url);
    await until(async () => (await state(hub.url)).semaphores.filter((x) => x.service === "honest").length === 5 || undefined, "the honest agent's semaphores", 30_000);
    await until(async () => (await honestHistory(hub.url)) === 5 || undefined, "the honest agent's history", 30_000);

    const s = await state(hub.url);
    const flooded = s.semaphores.filter((x) => x.service === "flood").length;
    expect(flooded).toBeLessThanOrEqual(2000);
    expect(s.hub.admission?.semaphores).toBeLessThanOrEqual(2000 + 5);
    // The disconnected flood agents made room for the later ones; none holding room was refused.
    expect(refused).toBe(0);
    expect(s.hub.admission?.evictedAgents).toBeGreaterThan(0);
    const after = await hub.mem();
    // 18,000 semaphores held would take hundreds of MB; the 2,000 kept, a few tens.
    expect(after.heapUsed - before.heapUsed).toBeLessThan(120 * 1024 * 1024);
    await expectAckedInOrder(service);
  }, 120_000);

  it("refuses a live flood past the cap with a reason in the ack, counted in /api/state, /metrics and the dashboards' deltas", async () => {
    const hub = await startHubChild({ admission: { maxSemaphoresPerAddress: 1500, maxAgentsPerAddress: 3 } });
    // A dashboard, connected before: it learns of the refusals from its deltas.
    const ui = io(`${hub.url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
    onCleanup(() => ui.disconnect());
    const seen: HubAdmission[] = [];
    ui.on("snapshot", (s: UiSnapshot) => void (s.state.hub.admission !== undefined && seen.push(s.state.hub.admission)));
    ui.on("delta", (d: UiDelta) => void (d.admission !== undefined && seen.push(d.admission)));
    await until(() => seen.length > 0 || undefined, "the dashboard's snapshot", 10_000);
    expect(seen[0].refused).toEqual({ agents: 0, semaphores: 0, identity: 0, dashboards: 0, connections: 0 });
    const first = await floodAgent(hub.url, "live-0", 1000);
    expect(first.acks).toEqual({ hello: true, register: true, samples: true });
    // Live: nothing to forget to make room.
    const second = await floodAgent(hub.url, "live-1", 1000);
    expect(second.acks.register).toBe(false);
    expect(second.acks.error).toBe(`semaphore limit reached: address cap, at most 1500 semaphores from one address (${FLOOD})`);
    await floodAgent(hub.url, "live-2", 0);
    const fourth = await floodAgent(hub.url, "live-3", 0);
    expect(fourth.acks).toEqual({ hello: false, register: false, samples: false, error: `agent limit reached: address cap, at most 3 agents from one address (${FLOOD})` });

    const service = await honest(hub.url);
    await until(async () => (await honestHistory(hub.url)) === 5 || undefined, "the honest agent's history", 30_000);
    const s = await state(hub.url);
    expect(s.hub.admission?.refused.agents).toBe(1);
    expect(s.hub.admission?.refused.semaphores).toBeGreaterThanOrEqual(2);
    const metrics = await (await fetch(`${hub.url}/metrics`)).text();
    expect(metrics).toMatch(/^semscope_hub_admission_refused_total\{what="agents",scope="address"\} 1$/m);
    expect(metrics).toMatch(/^semscope_hub_semaphores \d+$/m);
    await until(() => seen.at(-1)?.refused.agents === 1 || undefined, "a delta with the refused agent", 10_000);
    await expectAckedInOrder(service);
  }, 120_000);

  it("keeps at most maxAgentsPerAddress disconnected agents of a flood of names, forgetting the oldest", async () => {
    const hub = await startHubChild({ admission: { maxAgentsPerAddress: 10 } });
    for (let i = 0; i < 40; i++) {
      const { agent, acks } = await floodAgent(hub.url, `gone-${i}`, 0);
      expect(acks.hello).toBe(true);
      agent.close();
      // Its close reaches the hub before the next one says hello, so each finds the others gone.
      await until(async () => (await state(hub.url)).agents.every((a) => !a.connected) || undefined, "the flood agent's close", 10_000);
    }
    const service = await honest(hub.url);
    const s = await state(hub.url);
    const flood = s.agents.filter((a) => a.service === "flood");
    expect(flood.length).toBeLessThanOrEqual(10);
    // The newest kept, the oldest forgotten.
    expect(flood.map((a) => a.instance)).toContain("gone-39");
    expect(flood.map((a) => a.instance)).not.toContain("gone-0");
    expect(s.agents.some((a) => a.agentId === service.agentId && a.connected)).toBe(true);
  }, 120_000);
});

describe("making room", () => {
  it("forgets the agent longest gone, never one that came back since it first left", async () => {
    const hub = await startHubChild({ admission: { maxAgentsPerAddress: 2 } });
    const closed = async (a: RawAgent, instance: string) => {
      a.close();
      await until(async () => (await state(hub.url)).agents.find((x) => x.instance === instance)?.connected === false || undefined, `${instance}'s close`, 10_000);
    };
    const back = await rawAgent(hub.url, { from: FLOOD });
    expect((await back.hello("back", { service: "flood", instance: "back" })).ok).toBe(true);
    await closed(back, "back");
    // It returns on a new connection and stays: its first leaving is older than anything else.
    const again = await rawAgent(hub.url, { from: FLOOD });
    expect((await again.hello("back", { service: "flood", instance: "back" })).ok).toBe(true);
    const gone = await rawAgent(hub.url, { from: FLOOD });
    expect((await gone.hello("gone", { service: "flood", instance: "gone" })).ok).toBe(true);
    await closed(gone, "gone");
    const late = await rawAgent(hub.url, { from: FLOOD });
    expect((await late.hello("late", { service: "flood", instance: "late" })).ok).toBe(true);
    const s = await state(hub.url);
    expect(s.agents.map((a) => [a.instance, a.connected]).sort()).toEqual([["back", true], ["late", true]]);
    expect(s.hub.admission?.evictedAgents).toBe(1);
    // Both live now: the next one from this address is refused, nothing left to forget.
    const over = await rawAgent(hub.url, { from: FLOOD });
    expect((await over.hello("over", { service: "flood", instance: "over" })).error).toBe(`agent limit reached: address cap, at most 2 agents from one address (${FLOOD})`);
  }, 60_000);
});

describe("a flood from one address and a full hub", () => {
  it("counts each refusal under the cap that made it, address or total, in the ack, /api/stats, /metrics and the dashboards' deltas", async () => {
    // Caps small enough for live floods to reach each one: from one address, 2 agents and 1,500
    // semaphores; in all, 5 agents and 2,200 semaphores.
    const hub = await startHubChild({ admission: { maxAgents: 5, maxAgentsPerAddress: 2, maxSemaphores: 2200, maxSemaphoresPerAddress: 1500 } });
    const ui = io(`${hub.url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
    onCleanup(() => ui.disconnect());
    let seen: HubAdmission | undefined;
    ui.on("snapshot", (s: UiSnapshot) => void (seen = s.state.hub.admission ?? seen));
    ui.on("delta", (d: UiDelta) => void (seen = d.admission ?? seen));
    await until(() => seen, "the dashboard's snapshot", 10_000);
    // The honest agent first (127.0.0.1): 1 agent, 5 semaphores.
    const service = await honest(hub.url);
    await until(async () => (await state(hub.url)).semaphores.filter((x) => x.service === "honest").length === 5 || undefined, "the honest agent's semaphores", 30_000);

    const join = async (from: string, name: string, n: number) => {
      const a = await rawAgent(hub.url, { from });
      const hello = await a.hello(name, { service: "flood", instance: name });
      return { hello, register: hello.ok && n > 0 ? await a.register(ids(name, n)) : undefined };
    };
    // One address floods: 2 agents admitted, 3 refused at its own cap while the hub has room.
    const A = FLOOD;
    const fromA = [];
    for (let i = 0; i < 5; i++) fromA.push(await join(A, `a${i}`, i === 0 ? 1000 : i === 1 ? 1000 : 0));
    expect(fromA.map((j) => j.hello.ok)).toEqual([true, true, false, false, false]);
    for (const j of fromA.slice(2)) expect(j.hello.error).toBe(`agent limit reached: address cap, at most 2 agents from one address (${A})`);
    // a1's 1,000 would take A to 2,000 of its 1,500 (the hub, at 2,005 of 2,200, has room).
    expect(fromA[0].register?.ok).toBe(true);
    expect(fromA[1].register?.error).toBe(`semaphore limit reached: address cap, at most 1500 semaphores from one address (${A})`);

    // Other addresses fill the hub: B's second batch of names passes the hub's 2,200, not B's 1,500.
    const B = "127.0.0.3";
    const b0 = await join(B, "b0", 1000);
    expect(b0.register?.ok).toBe(true);
    const b1 = await join(B, "b1", 300);
    expect(b1.hello.ok).toBe(true);
    expect(b1.register?.error).toBe("semaphore limit reached: total cap, this hub holds at most 2200 semaphores");
    // 5 agents held (honest, a0, a1, b0, b1): each newcomer from a third address finds the hub full.
    const C = "127.0.0.4";
    for (let i = 0; i < 3; i++) expect((await join(C, `c${i}`, 0)).hello.error).toBe("agent limit reached: total cap, this hub holds at most 5 agents");

    const scoped = { agents: { address: 3, total: 3 }, semaphores: { address: 1, total: 1 }, connections: { address: 0, total: 0 }, dashboards: { address: 0, total: 0 } };
    const stats = (await (await fetch(`${hub.url}/api/stats`)).json()) as { admission: HubAdmission };
    expect(stats.admission.refused).toEqual({ agents: 6, semaphores: 2, identity: 0, dashboards: 0, connections: 0 });
    expect(stats.admission.refusedScope).toEqual(scoped);
    expect((await state(hub.url)).hub.admission?.refusedScope).toEqual(scoped);
    const metrics = await (await fetch(`${hub.url}/metrics`)).text();
    for (const what of ["agents", "semaphores", "dashboards"] as const) {
      for (const scope of ["address", "total"] as const) {
        expect(metrics).toMatch(new RegExp(`^semscope_hub_admission_refused_total\\{what="${what}",scope="${scope}"\\} ${scoped[what][scope]}$`, "m"));
      }
    }
    expect(metrics).toMatch(/^semscope_hub_admission_refused_total\{what="identity"\} 0$/m);
    await until(() => (JSON.stringify(seen?.refusedScope) === JSON.stringify(scoped) ? true : undefined), "a delta with every refusal by scope", 10_000);
    await expectAckedInOrder(service);
  }, 120_000);
});

describe("history when the store is full of live semaphores", () => {
  it("gives a newly arrived honest agent its share of history", async () => {
    const hub = await startHubChild({ maxHistories: 1000 });
    // Two live flood agents fill the store and keep every history updated.
    const floods = [await rawAgent(hub.url, { from: FLOOD }), await rawAgent(hub.url, { from: FLOOD })];
    const lists = [ids("a", 600), ids("b", 600)];
    for (const [i, f] of floods.entries()) {
      expect((await f.hello(`hog-${i}`, { service: "flood", instance: `hog-${i}` })).ok).toBe(true);
      expect((await f.register(lists[i])).ok).toBe(true);
    }
    let seq = 0;
    let stop = false;
    const keepUpdating = (async () => {
      while (!stop) {
        await Promise.all(floods.map((f, i) => f.samples(seq, lists[i])));
        seq++;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await until(async () => ((await (await fetch(`${hub.url}/api/stats`)).json()) as { histories: number }).histories >= 1000 || undefined, "a full store", 30_000);
    const service = await honest(hub.url);
    await until(async () => (await honestHistory(hub.url)) === 5 || undefined, "the honest agent's history", 30_000);
    stop = true;
    await keepUpdating;
    await expectAckedInOrder(service);
  }, 120_000);
});
