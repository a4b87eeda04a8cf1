import { describe, expect, it } from "vitest";
import { info, ofRule, sample, setup, T0 } from "./helpers.js";

const STACK = "    at checkout (/app/src/db.ts:42:7)\n    at handler (/app/src/routes.ts:10:3)";

describe("leak", () => {
  it("is raised by leak_suspected at the event's time, and resolved when every holder has leak_resolved", () => {
    const { engine, agent } = setup({ infos: [info("db", { leakThresholdMs: 10_000 })] });
    agent.send([sample("db", { inUse: 2 })]);
    const raised = agent.events([{ id: "db", type: "leak_suspected", holderId: "h1", heldMs: 10_400, stack: STACK }], 250);
    expect(raised.map((c) => c.kind)).toEqual(["raised"]);
    const a = raised[0].alert;
    expect(a).toMatchObject({ rule: "leak", severity: "critical", key: "checkout/web-1/db", service: "checkout", instance: "web-1", semaphore: "db" });
    expect(a.raisedAt).toBe(T0 + 1250);
    expect(a.message).toBe("db on checkout/web-1: 1 permit held > 10 s and not released, acquired at checkout (/app/src/db.ts:42:7)");
    expect(a.evidence).toMatchObject({ suspectedHolders: 1, holders: [{ holderId: "h1", heldMs: 10_400, stack: STACK, t: T0 + 1250 }] });
    expect(engine.registry.status(agent.key("db"))).toBe("leak");

    const second = agent.events([{ id: "db", type: "leak_suspected", holderId: "h2", heldMs: 30_000 }], 300);
    expect(second.map((c) => c.kind)).toEqual(["updated"]);
    expect(second[0].alert.message).toContain("2 permits held > 10 s and not released (longest 30 s)");

    // Samples keep holding the check (leaked permits still count as in use): nothing changes.
    expect(ofRule(agent.sendMany(3, () => [sample("db", { inUse: 2 })]), "leak")).toEqual([]);

    const one = agent.events([{ id: "db", type: "leak_resolved", holderId: "h1" }], 100);
    expect(one.map((c) => c.kind)).toEqual(["updated"]);
    expect(engine.registry.status(agent.key("db"))).toBe("leak");
    const done = agent.events([{ id: "db", type: "leak_resolved", holderId: "h2" }], 700);
    expect(done.map((c) => c.kind)).toEqual(["resolved"]);
    expect(done[0].alert.resolvedAt).toBe(agent.t + 700);
    expect(engine.registry.status(agent.key("db"))).toBe("ok");
  });

  it("is raised at once by a sample breaking available + inUse = cap, and resolved by the next sample that holds", () => {
    const { engine, agent } = setup();
    agent.send([sample("db", { inUse: 4 })]);
    const raised = ofRule(agent.send([sample("db", { inUse: 4, available: 3 })]), "leak");
    expect(raised.map((c) => [c.kind, c.alert.raisedAt, c.alert.severity])).toEqual([["raised", T0 + 2000, "critical"]]);
    expect(raised[0].alert.message).toBe("db on checkout/web-1: leak check failed: available 3 + inUse 4 ≠ cap 10");
    expect(raised[0].alert.evidence).toMatchObject({ check: { t: T0 + 2000, cap: 10, inUse: 4, available: 3 } });

    // Still broken at the same numbers: one fact, no update per interval.
    expect(ofRule(agent.sendMany(3, () => [sample("db", { inUse: 4, available: 3 })]), "leak")).toEqual([]);
    const worse = ofRule(agent.send([sample("db", { inUse: 5, available: 3 })]), "leak");
    expect(worse.map((c) => c.kind)).toEqual(["updated"]);

    const resolved = ofRule(agent.send([sample("db", { inUse: 5 })]), "leak");
    expect(resolved.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", T0 + 7000]]);
    expect(engine.registry.status(agent.key("db"))).toBe("ok");
  });

  it("accepts a negative available while a lowered cap is over-subscribed", () => {
    const { engine, agent } = setup();
    agent.sendMany(3, () => [sample("db", { cap: 5, inUse: 8, available: -3 })]);
    expect(ofRule(agent.log, "leak")).toEqual([]);
    expect(engine.registry.status(agent.key("db"))).toBe("saturated");
  });

  it("is not resolved by leak_resolved while the check is still broken", () => {
    const { agent } = setup();
    agent.events([{ id: "db", type: "leak_suspected", holderId: "h1", heldMs: 60_000 }]);
    agent.send([sample("db", { inUse: 1, available: 8 })]);
    agent.events([{ id: "db", type: "leak_resolved", holderId: "h1" }], 10);
    expect(ofRule(agent.log, "leak").map((c) => c.kind)).toEqual(["raised", "updated", "updated"]);
    const resolved = ofRule(agent.send([sample("db", { inUse: 1 })]), "leak");
    expect(resolved.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", T0 + 2000]]);
  });

  it("is raised by invariant_violation and resolved by a later sample that holds", () => {
    const { agent } = setup();
    agent.send([sample("db")]);
    const raised = agent.events([{ id: "db", type: "invariant_violation", detail: { cap: 10, inUse: 2, available: 9 } }], 20);
    expect(raised.map((c) => [c.kind, c.alert.raisedAt])).toEqual([["raised", T0 + 1020]]);
    expect(raised[0].alert.evidence).toMatchObject({ violations: 1, violation: { cap: 10, inUse: 2, available: 9 } });
    const resolved = ofRule(agent.send([sample("db", { inUse: 2 })]), "leak");
    expect(resolved.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", T0 + 2000]]);
  });

  it("does not raise again for a late invariant_violation about a broken sample it already alerted on", () => {
    const { agent } = setup();
    agent.send([sample("db", { inUse: 2, available: 9 })]);
    agent.send([sample("db", { inUse: 2 })]);
    agent.events([{ id: "db", type: "invariant_violation", detail: { cap: 10, inUse: 2, available: 9 } }], -1000);
    expect(ofRule(agent.log, "leak").map((c) => c.kind)).toEqual(["raised", "resolved"]);
  });

  it("tracks holders per semaphore: a leak_resolved on another semaphore resolves nothing", () => {
    const { engine, agent } = setup({ infos: [info("db"), info("cache")] });
    agent.events([{ id: "db", type: "leak_suspected", holderId: "h1", heldMs: 20_000 }]);
    agent.events([{ id: "cache", type: "leak_resolved", holderId: "h1" }]);
    expect(engine.registry.status(agent.key("db"))).toBe("leak");
    expect(engine.registry.status(agent.key("cache"))).toBe("ok");
  });
});
