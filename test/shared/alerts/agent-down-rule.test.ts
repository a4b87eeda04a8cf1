import { describe, expect, it } from "vitest";
import { AlertEngine } from "../../../shared/alerts/index.js";
import { info, kinds, ofRule, sample, ScriptedAgent, setup, T0 } from "./helpers.js";

describe("agent_down", () => {
  it("is raised by tick after 3 × intervalMs of silence on the hub clock, dated when the silence crossed it", () => {
    // The hub clock runs 7 s ahead of the agent's: agent_down must use the hub's.
    const { engine, agent } = setup({ skewMs: 7000 });
    agent.sendMany(3, () => [sample("db")]);
    const lastSeen = agent.now;
    expect(engine.tick(lastSeen + 2999)).toEqual([]);
    const raised = engine.tick(lastSeen + 3500);
    expect(raised.map((c) => [c.kind, c.alert.rule, c.alert.key, c.alert.raisedAt])).toEqual([["raised", "agent_down", "checkout/web-1", lastSeen + 3000]]);
    expect(raised[0].alert).toMatchObject({ service: "checkout", instance: "web-1", severity: "warning" });
    expect(raised[0].alert.semaphore).toBeUndefined();
    expect(raised[0].alert.message).toBe("checkout/web-1 is down: nothing heard for 3 s (3 × its 1 s interval)");
    expect(engine.tick(lastSeen + 60_000)).toEqual([]);
    expect(engine.registry.agents()).toEqual([{ agentId: "agent-1", service: "checkout", instance: "web-1", connected: true, lastSeen }]);

    // Back: any message resolves it, at the hub time it arrived.
    agent.t += 60_000;
    const back = ofRule(agent.send([sample("db")]), "agent_down");
    expect(back.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", agent.now]]);
  });

  it("dates the alert the same however often tick runs", () => {
    const run = (step: number) => {
      const engine = new AlertEngine();
      const a = new ScriptedAgent(engine, "a");
      a.hello();
      a.send([]);
      const out = [];
      for (let now = a.now; now <= a.now + 10_000; now += step) out.push(...engine.tick(now));
      return out.map((c) => c.alert);
    };
    expect(run(7)).toEqual(run(1000));
    expect(run(7)).toHaveLength(1);
  });

  it("uses the agent's own interval", () => {
    const { engine, agent } = setup({ intervalMs: 5000 });
    agent.send([sample("db")]);
    expect(engine.tick(agent.now + 14_999)).toEqual([]);
    expect(kinds(engine.tick(agent.now + 15_000))).toEqual(["raised:agent_down"]);
  });

  it("is raised at once on disconnect and resolved when the agent says hello again", () => {
    const { engine, agent } = setup();
    agent.send([sample("db")]);
    const down = engine.disconnect("agent-1", agent.now + 120);
    expect(down.map((c) => [c.kind, c.alert.rule, c.alert.raisedAt])).toEqual([["raised", "agent_down", agent.now + 120]]);
    expect(down[0].alert.message).toBe("checkout/web-1 is down: disconnected");
    expect(engine.registry.agents()[0].connected).toBe(false);
    // A disconnected agent is not "silent" on top of it.
    expect(engine.tick(agent.now + 60_000)).toEqual([]);
    const back = agent.hello(agent.now + 61_000);
    expect(back.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", agent.now + 61_000]]);
    expect(engine.registry.agents()[0].connected).toBe(true);
    // Resume keeps its semaphores without a new register.
    expect(engine.registry.status(agent.key("db"))).toBe("ok");
  });

  it("counts a refused message (touch) as the agent being alive", () => {
    const { engine, agent } = setup();
    agent.send([sample("db")]);
    engine.touch("agent-1", agent.now + 2500);
    expect(engine.tick(agent.now + 5000)).toEqual([]);
    expect(kinds(engine.tick(agent.now + 5500))).toEqual(["raised:agent_down"]);
  });

  it("does not call a restarted process down when its new agent already took the name", () => {
    const engine = new AlertEngine();
    const old = new ScriptedAgent(engine, "old");
    old.hello();
    old.register([info("db")]);
    old.send([sample("db")]);
    const fresh = new ScriptedAgent(engine, "new");
    fresh.t = old.t;
    fresh.hello();
    fresh.register([info("db")]);
    expect(engine.disconnect("old", old.now + 10)).toEqual([]);
    fresh.send([sample("db")]);
    expect(engine.tick(fresh.now + 1000)).toEqual([]);
    // The semaphore is now the new agent's; the name goes down only when the new one does.
    expect(engine.registry.semaphores().map((s) => [s.key, s.agentId])).toEqual([["checkout/web-1/db", "new"]]);
    expect(kinds(engine.disconnect("new", fresh.now + 20))).toEqual(["raised:agent_down"]);
  });

  it("is resolved when a down agent is forgotten, with its semaphores' alerts", () => {
    const { engine, agent } = setup();
    agent.send([sample("db", { doubleReleases: 1 })]);
    engine.disconnect("agent-1", agent.now);
    const gone = engine.forget("agent-1", agent.now + 100);
    expect(gone.map((c) => `${c.kind}:${c.alert.rule}:${String(c.alert.evidence?.resolution)}`)).toEqual([
      "resolved:double_release:agent forgotten",
      "resolved:agent_down:forgotten",
    ]);
    expect(engine.registry.agents()).toEqual([]);
    expect(engine.registry.semaphores()).toEqual([]);
    expect(engine.activeAlerts()).toEqual([]);
    expect(engine.samples("agent-1", { seq: 9, t: T0 + 99_000, intervalMs: 1000, items: [sample("db", { doubleReleases: 3 })] }, T0)).toEqual([]);
  });
});
