import { describe, expect, it } from "vitest";
import { AlertEngine } from "../../../shared/alerts/index.js";
import type { SemaphoreInfo } from "../../../shared/protocol/types.js";
import { info, kinds, many, sample, ScriptedAgent, summaryOf, T0 } from "./helpers.js";

function fleetOf(n: number, infoOver: Partial<SemaphoreInfo>, skewMs = 0): { engine: AlertEngine; replicas: ScriptedAgent[] } {
  const engine = new AlertEngine();
  const replicas: ScriptedAgent[] = [];
  for (let i = 1; i <= n; i++) {
    const r = new ScriptedAgent(engine, `agent-${i}`, "checkout", `web-${i}`, 1000, skewMs);
    r.hello();
    r.register([info("db", infoOver)]);
    replicas.push(r);
  }
  return { engine, replicas };
}

describe("over_budget", () => {
  it("4 replicas × cap 10 over a budget of 25: raised at the third, still over with three, resolved at two", () => {
    const engine = new AlertEngine();
    const replicas = [1, 2, 3, 4].map((i) => new ScriptedAgent(engine, `agent-${i}`, "checkout", `web-${i}`));
    const log: string[] = [];
    for (const [i, r] of replicas.entries()) {
      r.hello(T0 + i);
      for (const c of r.register([info("db", { budget: 25 })], T0 + i)) log.push(`${c.kind}:${String(c.alert.evidence?.capTotal)}:${c.alert.raisedAt}`);
    }
    // 10, 20 within budget; 30 > 25 raises (at the hub time of that register); 40 updates.
    expect(log).toEqual([`raised:30:${T0 + 2}`, `updated:40:${T0 + 2}`]);
    const [alert] = engine.activeAlerts();
    expect(alert).toMatchObject({ rule: "over_budget", key: "checkout/db", service: "checkout", semaphore: "db", severity: "warning" });
    expect(alert.instance).toBeUndefined();
    expect(alert.message).toBe("db in checkout: the caps of 4 live instances sum to 40, over the budget of 25");
    expect(alert.evidence).toMatchObject({ capTotal: 40, budget: 25, instances: 4, scope: "process" });

    // One replica down: 30 is still over 25.
    const one = engine.disconnect("agent-4", T0 + 5000).filter((c) => c.alert.rule === "over_budget");
    expect(one.map((c) => [c.kind, c.alert.evidence?.capTotal])).toEqual([["updated", 30]]);
    // A second one down: 20 ≤ 25 resolves it.
    const two = engine.disconnect("agent-3", T0 + 6000).filter((c) => c.alert.rule === "over_budget");
    expect(two.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", T0 + 6000]]);
    expect(engine.fleet()).toMatchObject([{ key: "checkout/db", instances: 2, cap: 20, budget: 25, overBudget: false }]);
  });

  it("is resolved when one of 4 replicas goes silent if that brings the sum within budget (35), and raised again when it is back", () => {
    const { engine, replicas } = fleetOf(4, { budget: 35 });
    expect(engine.activeAlerts().map((a) => a.rule)).toEqual(["over_budget"]);
    for (const r of replicas.slice(0, 3)) r.send([sample("db")]);
    const silentSince = replicas[3].now;
    const changes = engine.tick(silentSince + 3000);
    expect(kinds(changes)).toEqual(["raised:agent_down", "resolved:over_budget"]);
    expect(changes[1].alert.resolvedAt).toBe(silentSince + 3000);
    replicas[3].t += 5000;
    const back = replicas[3].send([sample("db")]);
    expect(kinds(back)).toEqual(["resolved:agent_down", "raised:over_budget"]);
  });

  it("follows caps changed at run time, on the hub clock like the rest of its changes", () => {
    // Agent clocks 7 s behind the hub: raised by a register (hub time), it must not be resolved
    // by a sample's agent time, which would come before it was raised.
    const { engine, replicas } = fleetOf(3, { budget: 25 }, 7000);
    expect(engine.activeAlerts().map((a) => a.raisedAt)).toEqual([replicas[2].now]);
    const lowered = replicas[0].send([sample("db", { cap: 5 })]);
    expect(lowered.map((c) => [c.kind, c.alert.rule, c.alert.resolvedAt])).toEqual([["resolved", "over_budget", replicas[0].now]]);
    expect(replicas[0].now - replicas[0].t).toBe(7000);
  });

  it("takes the tightest budget any live replica declares, and raises nothing without one", () => {
    const { engine } = fleetOf(3, {});
    expect(engine.activeAlerts()).toEqual([]);
    const extra = new ScriptedAgent(engine, "agent-x", "checkout", "web-x");
    extra.hello();
    expect(kinds(extra.register([info("db", { budget: 35 })]))).toEqual(["raised:over_budget"]);
    expect(engine.fleet()[0]).toMatchObject({ cap: 40, budget: 35, overBudget: true });
    // A replica with a looser budget joins: the tighter one still holds.
    const loose = new ScriptedAgent(engine, "agent-y", "checkout", "web-y");
    loose.hello();
    loose.register([info("db", { budget: 100 })]);
    expect(engine.fleet()[0]).toMatchObject({ cap: 50, budget: 35, overBudget: true });
    expect(engine.activeAlerts()[0].evidence).toMatchObject({ capTotal: 50, budget: 35 });
  });

  it("does not sum a global semaphore's cap: the fleet cap is the largest reported", () => {
    const { engine, replicas } = fleetOf(4, { scope: "global", cap: 20, budget: 25 });
    replicas.forEach((r, i) => r.send([sample("db", { cap: 20, inUse: i + 1 })]));
    expect(engine.activeAlerts()).toEqual([]);
    expect(engine.fleet()).toMatchObject([{ key: "checkout/db", scope: "global", instances: 4, cap: 20, inUse: 10, overBudget: false }]);
    // A replica configured with a larger global cap is over, and the alert says global.
    expect(kinds(replicas[0].send([sample("db", { cap: 30 })]))).toEqual(["raised:over_budget"]);
    expect(engine.activeAlerts()[0].message).toBe("db in checkout: the global cap 30 is over the budget of 25");
  });
});

describe("fleet()", () => {
  it("sums gauges of live replicas and merges their histograms into a real fleet p99", () => {
    const { engine, replicas } = fleetOf(2, {});
    // 98 fast waits on one host, 2 slow ones on the other: the fleet p99 is a slow wait, not the
    // average of the two hosts' p99s (about 505 ms).
    replicas[0].send([sample("db", { inUse: 3, waiters: 1, waitMs: summaryOf(...many(98, 10)), holdMs: summaryOf(...many(98, 5)) })]);
    replicas[1].send([sample("db", { inUse: 4, waiters: 2, waitMs: summaryOf(...many(2, 1000)), holdMs: summaryOf(...many(2, 5)) })]);
    const [entry] = engine.fleet();
    expect(entry).toMatchObject({ key: "checkout/db", service: "checkout", name: "db", instances: 2, cap: 20, inUse: 7, waiters: 3, budget: null });
    expect(entry.waitMs.count).toBe(100);
    expect(entry.waitMs.p99).toBeGreaterThan(900);
    expect(entry.waitMs.p99).toBeLessThanOrEqual(1000);
    expect(entry.waitMs.p50).toBeLessThan(11);
    expect(entry.waitMs.max).toBe(1000);
    // A replica that is down leaves the fleet view.
    engine.disconnect("agent-2", replicas[1].now);
    expect(engine.fleet()).toMatchObject([{ instances: 1, cap: 10, inUse: 3, waiters: 1 }]);
    expect(engine.fleet()[0].waitMs.count).toBe(98);
  });

  it("groups by (service, name), not by id", () => {
    const engine = new AlertEngine();
    const a = new ScriptedAgent(engine, "a", "checkout", "web-1");
    const b = new ScriptedAgent(engine, "b", "checkout", "web-2");
    const c = new ScriptedAgent(engine, "c", "billing", "web-1");
    for (const r of [a, b, c]) r.hello();
    a.register([info("pool-1", { name: "db" })]);
    b.register([info("pool-7", { name: "db" })]);
    c.register([info("pool-1", { name: "db" })]);
    expect(engine.fleet().map((e) => [e.key, e.instances, e.cap])).toEqual([
      ["billing/db", 1, 10],
      ["checkout/db", 2, 20],
    ]);
  });
});
