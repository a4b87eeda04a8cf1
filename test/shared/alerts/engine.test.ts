import { describe, expect, it } from "vitest";
import { AlertEngine } from "../../../shared/alerts/index.js";
import { convoySample, info, kinds, ofRule, sample, ScriptedAgent, setup, T0 } from "./helpers.js";

describe("AlertEngine", () => {
  it("reports status per semaphore: leak over convoy over saturated over ok", () => {
    const { engine, agent } = setup({ infos: [info("db"), info("cache")] });
    expect(engine.registry.status(agent.key("db"))).toBe("ok");
    expect(engine.registry.status("checkout/web-1/nope")).toBeUndefined();
    agent.send([sample("db", { inUse: 3 }), sample("cache", { inUse: 2, waiters: 1 })]);
    expect([engine.registry.status(agent.key("db")), engine.registry.status(agent.key("cache"))]).toEqual(["ok", "saturated"]);
    agent.sendMany(5, () => [convoySample("db"), sample("cache")]);
    expect(engine.registry.status(agent.key("db"))).toBe("convoy");
    agent.events([{ id: "db", type: "leak_suspected", holderId: "h", heldMs: 99_000 }]);
    expect(engine.registry.status(agent.key("db"))).toBe("leak");
    const state = engine.registry.semaphores().find((s) => s.key === agent.key("db"));
    expect(state).toMatchObject({ agentId: "agent-1", service: "checkout", instance: "web-1", id: "db", name: "db", kind: "semaphore", cap: 10, inUse: 10, available: 0, waiters: 5, status: "leak" });
  });

  it("lists alerts newest raisedAt first, keeps resolved ones, and bounds that history", () => {
    const engine = new AlertEngine({ maxResolved: 3 });
    const agent = new ScriptedAgent(engine, "a");
    agent.hello();
    agent.register([info("db")]);
    // Five leak incidents, each raised by a broken sample and resolved by the next one.
    for (let i = 0; i < 5; i++) {
      agent.send([sample("db", { inUse: 1, available: 0 })]);
      agent.send([sample("db", { inUse: 1 })]);
    }
    agent.send([sample("db", { doubleReleases: 1 })]);
    const all = engine.allAlerts();
    expect(all.map((a) => [a.rule, a.raisedAt])).toEqual([
      ["double_release", T0 + 11_000],
      ["leak", T0 + 9000],
      ["leak", T0 + 7000],
      ["leak", T0 + 5000],
    ]);
    expect(all.map((a) => a.resolvedAt)).toEqual([null, T0 + 10_000, T0 + 8000, T0 + 6000]);
    expect(engine.activeAlerts().map((a) => a.rule)).toEqual(["double_release"]);
    // An alert dropped from history is no longer known by id.
    expect(engine.alert(`leak:checkout/web-1/db:${T0 + 1000}`)).toBeUndefined();
    expect(engine.alert(`leak:checkout/web-1/db:${T0 + 9000}`)?.resolvedAt).toBe(T0 + 10_000);
  });

  it("hands out snapshots: changing a returned alert changes nothing inside", () => {
    const { engine, agent } = setup();
    const [c] = agent.send([sample("db", { doubleReleases: 1 })]);
    c.alert.message = "tampered";
    engine.activeAlerts()[0].acknowledged = true;
    expect(() => {
      (c.alert.evidence as Record<string, unknown>).cap = 99;
    }).toThrow(TypeError);
    expect(engine.activeAlerts()[0]).toMatchObject({ acknowledged: false, evidence: { cap: 10 } });
    expect(engine.activeAlerts()[0].message).not.toBe("tampered");
  });

  it("resolves a semaphore's alerts when a register drops it, at the agent's last sample time", () => {
    const { engine, agent } = setup({ infos: [info("db"), info("cache")] });
    agent.send([sample("db", { doubleReleases: 1 }), sample("cache")]);
    const changes = agent.register([info("cache")], agent.now + 5000);
    expect(changes.map((c) => [c.kind, c.alert.rule, c.alert.resolvedAt, c.alert.evidence?.resolution])).toEqual([
      ["resolved", "double_release", T0 + 1000, "unregistered"],
    ]);
    expect(engine.registry.status(agent.key("db"))).toBeUndefined();
    expect(engine.registry.semaphores().map((s) => s.id)).toEqual(["cache"]);
  });

  it("ignores a re-sent or out-of-order batch, so at-least-once delivery counts nothing twice", () => {
    const { engine, agent } = setup();
    agent.send([sample("db", { timeouts: 12 })]);
    // The same batch again (a re-send after reconnect), then an older one.
    engine.samples("agent-1", { seq: 0, t: agent.t, intervalMs: 1000, items: [sample("db", { timeouts: 12 })] }, agent.now);
    engine.samples("agent-1", { seq: 0, t: agent.t - 500, intervalMs: 1000, items: [sample("db", { timeouts: 12 })] }, agent.now);
    agent.send([sample("db")]);
    expect(engine.activeAlerts()).toEqual([]);
  });

  it("tracks a semaphore it never saw registered", () => {
    const { engine, agent } = setup({ infos: [] });
    agent.send([sample("ghost", { inUse: 1, available: 1 })]);
    expect(engine.registry.status(agent.key("ghost"))).toBe("leak");
    expect(engine.registry.semaphores()[0]).toMatchObject({ id: "ghost", name: "ghost", kind: "unknown" });
  });

  it("ignores messages from an agent that never said hello", () => {
    const engine = new AlertEngine();
    expect(engine.register("x", [info("db")], T0)).toEqual([]);
    expect(engine.samples("x", { seq: 0, t: T0, intervalMs: 1000, items: [sample("db", { doubleReleases: 1 })] }, T0)).toEqual([]);
    expect(engine.events("x", { items: [{ t: T0, id: "db", type: "order_inversion" }] }, T0)).toEqual([]);
    expect(engine.disconnect("x", T0)).toEqual([]);
    expect(engine.touch("x", T0)).toEqual([]);
    expect(engine.allAlerts()).toEqual([]);
    expect(engine.registry.agents()).toEqual([]);
  });

  // The hub's tick asks this every second, and records a tick only when the answer is yes.
  it("says whether any agent is connected, as agents() does", () => {
    const engine = new AlertEngine();
    const a = new ScriptedAgent(engine, "a", "checkout", "web-1");
    const b = new ScriptedAgent(engine, "b", "checkout", "web-2");
    const asAgents = () => engine.registry.agents().some((x) => x.connected);
    expect([engine.registry.anyConnected(), asAgents()]).toEqual([false, false]);
    a.hello();
    b.hello();
    expect([engine.registry.anyConnected(), asAgents()]).toEqual([true, true]);
    engine.disconnect("a", T0);
    expect([engine.registry.anyConnected(), asAgents()]).toEqual([true, true]);
    engine.disconnect("b", T0);
    expect([engine.registry.anyConnected(), asAgents()]).toEqual([false, false]);
    b.hello();
    expect([engine.registry.anyConnected(), asAgents()]).toEqual([true, true]);
  });

  it("keys per-semaphore alerts by service/instance/id, so replicas do not share them", () => {
    const engine = new AlertEngine();
    const a = new ScriptedAgent(engine, "a", "checkout", "web-1");
    const b = new ScriptedAgent(engine, "b", "checkout", "web-2");
    a.hello();
    b.hello();
    a.send([sample("db", { doubleReleases: 1 })]);
    b.send([sample("db")]);
    expect(engine.activeAlerts().map((x) => x.key)).toEqual(["checkout/web-1/db"]);
    expect(kinds(ofRule(a.log, "double_release"))).toEqual(["raised:double_release"]);
    expect(b.log).toEqual([]);
  });
});
