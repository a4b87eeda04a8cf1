import { describe, expect, it } from "vitest";
import { ofRule, sample, setup, T0 } from "./helpers.js";

describe("double_release", () => {
  it("is raised by a sample counting one, and resolved by the first sample 60 s after it", () => {
    const { agent } = setup();
    const raised = ofRule(agent.send([sample("db", { doubleReleases: 1 })]), "double_release");
    expect(raised.map((c) => [c.kind, c.alert.raisedAt, c.alert.severity])).toEqual([["raised", T0 + 1000, "warning"]]);
    expect(raised[0].alert.message).toContain("db on checkout/web-1: a permit was released twice; it now admits more than its cap of 10");
    agent.sendMany(59, () => [sample("db")]);
    expect(ofRule(agent.log, "double_release").map((c) => c.kind)).toEqual(["raised"]);
    const resolved = ofRule(agent.send([sample("db")]), "double_release");
    expect(resolved.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", T0 + 61_000]]);
  });

  it("is raised by a double_release event with its stack; another one later pushes the resolution out", () => {
    const { agent } = setup();
    agent.send([sample("db")]);
    const stack = "    at finish (/app/src/pool.ts:88:12)\n    at retry (/app/src/retry.ts:5:1)";
    const raised = agent.events([{ id: "db", type: "double_release", holderId: "h7", stack }], 400);
    expect(raised.map((c) => [c.kind, c.alert.raisedAt])).toEqual([["raised", T0 + 1400]]);
    expect(raised[0].alert.message).toContain("released again at finish (/app/src/pool.ts:88:12)");
    expect(raised[0].alert.evidence).toMatchObject({ holderId: "h7", stack, events: 1 });
    // The same double release, counted in the next sample: an update, not a second alert.
    const counted = ofRule(agent.send([sample("db", { doubleReleases: 1 })]), "double_release");
    expect(counted.map((c) => c.kind)).toEqual(["updated"]);
    agent.sendMany(29, () => [sample("db")]);
    agent.send([sample("db", { doubleReleases: 2 })]); // at T0+32000
    agent.sendMany(59, () => [sample("db")]);
    expect(ofRule(agent.log, "double_release").filter((c) => c.kind === "resolved")).toEqual([]);
    const resolved = ofRule(agent.send([sample("db")]), "double_release");
    expect(resolved.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", T0 + 92_000]]);
    expect(resolved[0].alert.message).toContain("(3 times)");
  });
});

describe("order_inversion", () => {
  const inversion = { id: "db", type: "order_inversion" as const, stack: "    at pay (/app/src/pay.ts:3:1)", detail: { holding: "cache", acquiring: "db" } };

  it("is raised by the event, updated by repeats, and resolved only when acknowledged", () => {
    const { engine, agent } = setup();
    agent.send([sample("db")]);
    const raised = agent.events([inversion], 30);
    expect(raised.map((c) => [c.kind, c.alert.raisedAt, c.alert.severity])).toEqual([["raised", T0 + 1030, "warning"]]);
    expect(raised[0].alert.message).toBe(
      'db on checkout/web-1: acquired in both orders with "cache": a deadlock waiting to happen; at pay (/app/src/pay.ts:3:1)',
    );
    expect(agent.events([inversion], 60).map((c) => c.kind)).toEqual(["updated"]);
    // Time passing and quiet samples do not resolve it.
    agent.sendMany(120, () => [sample("db")]);
    expect(engine.activeAlerts().map((a) => a.rule)).toEqual(["order_inversion"]);

    const id = raised[0].alert.id;
    const acked = engine.acknowledge(id, T0 + 500_000);
    expect(acked.map((c) => [c.kind, c.alert.acknowledged, c.alert.resolvedAt])).toEqual([["resolved", true, T0 + 500_000]]);
    expect(engine.activeAlerts()).toEqual([]);
    expect(engine.acknowledge(id, T0 + 600_000)).toEqual([]);

    // A new inversion afterwards is a new alert with its own id.
    const again = agent.events([inversion]);
    expect(again.map((c) => c.kind)).toEqual(["raised"]);
    expect(again[0].alert.id).not.toBe(id);
    expect(again[0].alert.message).not.toContain("reports");
  });

  it("acknowledging another rule's alert marks it but leaves it active", () => {
    const { engine, agent } = setup();
    const [raised] = ofRule(agent.send([sample("db", { doubleReleases: 1 })]), "double_release");
    const changes = engine.acknowledge(raised.alert.id, T0 + 5000);
    expect(changes.map((c) => [c.kind, c.alert.acknowledged, c.alert.resolvedAt])).toEqual([["updated", true, null]]);
    expect(engine.activeAlerts().map((a) => [a.rule, a.acknowledged])).toEqual([["double_release", true]]);
    expect(engine.acknowledge("no-such-alert", T0)).toEqual([]);
  });
});
