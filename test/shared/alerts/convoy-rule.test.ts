import { describe, expect, it } from "vitest";
import { convoySample, many, ofRule, sample, setup, summaryOf, T0 } from "./helpers.js";

describe("convoy", () => {
  it("is raised on the sample that completes 5 s of convoy, and resolved after 5 s without waiters", () => {
    const { engine, agent } = setup();
    const before = ofRule(agent.sendMany(4, () => [convoySample("db")]), "convoy");
    expect(before).toEqual([]);
    expect(engine.registry.status(agent.key("db"))).toBe("saturated");

    const raised = ofRule(agent.send([convoySample("db")]), "convoy");
    expect(raised).toHaveLength(1);
    expect(raised[0].kind).toBe("raised");
    const a = raised[0].alert;
    expect(a.raisedAt).toBe(T0 + 5000);
    expect(a.severity).toBe("warning");
    expect(a.key).toBe("checkout/web-1/db");
    expect(a.id).toBe(`convoy:checkout/web-1/db:${T0 + 5000}`);
    expect(a.message).toContain("db on checkout/web-1");
    expect(a.message).toContain("10/10 in use, 5 waiting");
    expect(a.evidence).toMatchObject({ cap: 10, inUse: 10, window: { from: T0, to: T0 + 5000, coveredMs: 5000, samples: 5 } });
    expect(engine.registry.status(agent.key("db"))).toBe("convoy");

    // Saturated but the queue is gone: four quiet seconds are not enough...
    expect(ofRule(agent.sendMany(4, () => [sample("db", { inUse: 10 })]), "convoy")).toEqual([]);
    // ...the fifth resolves it at that sample's time.
    const resolved = ofRule(agent.send([sample("db", { inUse: 10 })]), "convoy");
    expect(resolved.map((c) => c.kind)).toEqual(["resolved"]);
    expect(resolved[0].alert.resolvedAt).toBe(T0 + 10_000);
    expect(engine.registry.status(agent.key("db"))).toBe("saturated");
  });

  it("is not raised by 4.9 s of convoy", () => {
    const { engine, agent } = setup({ intervalMs: 100 });
    agent.sendMany(49, () => [convoySample("db")]);
    agent.sendMany(100, () => [sample("db", { inUse: 10 })]);
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    expect(engine.activeAlerts()).toEqual([]);
    // After the quiet 10 s, the 50th consecutive 100 ms sample is the one that reaches 5 s.
    agent.sendMany(49, () => [convoySample("db")]);
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    const raised = ofRule(agent.send([convoySample("db")]), "convoy");
    expect(raised.map((c) => c.alert.raisedAt)).toEqual([agent.t]);
  });

  it("is raised on time through a brief dip: one sample under a full pool does not restart it", () => {
    const { agent } = setup();
    agent.sendMany(2, () => [convoySample("db")]);
    // A release and the next acquire straddled the sample: 9/10 in use and nobody queued, for an instant.
    agent.send([sample("db", { inUse: 9 })]);
    expect(ofRule(agent.sendMany(1, () => [convoySample("db")]), "convoy")).toEqual([]);
    const raised = ofRule(agent.send([convoySample("db")]), "convoy");
    expect(raised.map((c) => [c.kind, c.alert.raisedAt])).toEqual([["raised", T0 + 5000]]);
    expect(raised[0].alert.message).toContain("convoy for 4 s of the last 5 s");
    expect(raised[0].alert.evidence).toMatchObject({ window: { from: T0, to: T0 + 5000, coveredMs: 5000, heldMs: 4000, samples: 5 } });
  });

  it("is raised under a convoy that dips once in every 5 samples, which no unbroken 5 s run ever showed", () => {
    const { agent } = setup();
    agent.sendMany(20, (i) => [i % 5 === 3 ? sample("db", { inUse: 10, waiters: 0 }) : convoySample("db")]);
    expect(ofRule(agent.log, "convoy").map((c) => [c.kind, c.alert.raisedAt])).toEqual([["raised", T0 + 5000]]);
  });

  it("is raised on a sample in convoy only: a dip that ends the window waits for the next", () => {
    const { agent } = setup();
    agent.sendMany(4, () => [convoySample("db")]);
    expect(ofRule(agent.send([sample("db", { inUse: 10 })]), "convoy")).toEqual([]);
    const raised = ofRule(agent.send([convoySample("db")]), "convoy");
    expect(raised.map((c) => c.alert.raisedAt)).toEqual([T0 + 6000]);
  });

  it("is never raised by a load in convoy only half the time, nor by two dips in every 5 s", () => {
    const { engine, agent } = setup();
    agent.sendMany(60, (i) => [i % 2 === 0 ? convoySample("db") : sample("db", { inUse: 10, waiters: 0 })]);
    agent.sendMany(60, (i) => [i % 5 < 2 ? sample("db", { inUse: 8 }) : convoySample("db")]);
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    expect(engine.activeAlerts()).toEqual([]);
  });

  it("judges 'most of the window' by the threshold a user sets: 1 wants every sample", () => {
    const { engine, agent } = setup();
    engine.setThresholds({ convoy: { minHeldFraction: 1 } });
    agent.sendMany(2, () => [convoySample("db")]);
    agent.send([sample("db", { inUse: 9 })]);
    agent.sendMany(4, () => [convoySample("db")]);
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    expect(ofRule(agent.send([convoySample("db")]), "convoy").map((c) => c.alert.raisedAt)).toEqual([T0 + 8000]);
  });

  it("restarts the window after a gap of more than 2 × intervalMs", () => {
    const { agent } = setup();
    agent.sendMany(3, () => [convoySample("db")]);
    agent.send([convoySample("db")], 2001); // gap over 2 s: the run starts again here
    agent.sendMany(3, () => [convoySample("db")]);
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    const raised = ofRule(agent.send([convoySample("db")]), "convoy");
    expect(raised.map((c) => c.alert.raisedAt)).toEqual([T0 + 3000 + 2001 + 4000]);
  });

  it("keeps the window across a gap of exactly 2 × intervalMs, without counting the hole", () => {
    const { agent } = setup();
    agent.sendMany(3, () => [convoySample("db")]);
    agent.send([convoySample("db")], 2000); // tolerated: covers only its own second
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    const raised = ofRule(agent.send([convoySample("db")]), "convoy");
    expect(raised.map((c) => c.alert.raisedAt)).toEqual([T0 + 6000]);
  });

  it("needs all three conditions", () => {
    const { engine, agent } = setup();
    // Waits no longer than twice the hold: a busy queue, not a convoy.
    agent.sendMany(10, () => [convoySample("db", { waitMs: summaryOf(...many(20, 90)), holdMs: summaryOf(...many(20, 50)) })]);
    // Not full.
    agent.sendMany(10, () => [convoySample("db", { inUse: 9 })]);
    // Full, slow waits, but nobody queued.
    agent.sendMany(10, () => [convoySample("db", { waiters: 0 })]);
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    expect(engine.registry.status(agent.key("db"))).toBe("saturated");
  });

  it("does not flap: waiters coming and going neither resolve nor re-raise it", () => {
    const { agent } = setup();
    agent.sendMany(5, () => [convoySample("db")]);
    agent.sendMany(30, (i) => [i % 3 === 2 ? convoySample("db", { waiters: 1 }) : sample("db", { inUse: 10 })]);
    expect(ofRule(agent.log, "convoy").map((c) => c.kind)).toEqual(["raised"]);
    agent.sendMany(5, () => [sample("db")]);
    expect(ofRule(agent.log, "convoy").map((c) => c.kind)).toEqual(["raised", "resolved"]);
  });

  it("is critical from the start when the queue grows while releases per second fall", () => {
    const { agent } = setup();
    const waiters = [2, 4, 6, 8, 10];
    const released = [50, 50, 40, 30, 20];
    const raised = ofRule(agent.sendMany(5, (i) => [convoySample("db", { waiters: waiters[i], released: released[i] })]), "convoy");
    expect(raised).toHaveLength(1);
    expect(raised[0].alert.severity).toBe("critical");
    expect(raised[0].alert.message).toContain("releases per second fall");
    expect(raised[0].alert.evidence).toMatchObject({ waiters: { first: 2, last: 10, max: 10 }, releasedPerSec: { firstHalf: 50, secondHalf: 25 } });
  });

  it("stays a warning when the queue grows but throughput holds", () => {
    const { agent } = setup();
    const raised = ofRule(agent.sendMany(5, (i) => [convoySample("db", { waiters: 2 + i * 2, released: 30 })]), "convoy");
    expect(raised.map((c) => c.alert.severity)).toEqual(["warning"]);
  });

  it("escalates to critical as it worsens, and never steps back down while active", () => {
    const { agent } = setup();
    agent.sendMany(5, () => [convoySample("db", { waiters: 5, released: 20 })]);
    expect(ofRule(agent.log, "convoy").map((c) => c.alert.severity)).toEqual(["warning"]);
    const worse = ofRule(agent.send([convoySample("db", { waiters: 6, released: 18 })]), "convoy");
    expect(worse.map((c) => [c.kind, c.alert.severity, c.alert.raisedAt])).toEqual([["updated", "critical", T0 + 5000]]);
    expect(worse[0].alert.id).toBe(`convoy:checkout/web-1/db:${T0 + 5000}`);
    // It gets better: still critical, no update noise.
    expect(ofRule(agent.sendMany(10, () => [convoySample("db", { waiters: 1, released: 40 })]), "convoy")).toEqual([]);
    agent.sendMany(5, () => [sample("db")]);
    const last = ofRule(agent.log, "convoy").at(-1);
    expect([last?.kind, last?.alert.severity]).toEqual(["resolved", "critical"]);
  });

  it("after a lasting critical convoy resolves, needs 5 s of convoy again", () => {
    const { engine, agent } = setup();
    const waiters = [2, 4, 6, 8, 10];
    const released = [50, 50, 40, 30, 20];
    agent.sendMany(5, (i) => [convoySample("db", { waiters: waiters[i], released: released[i] })]);
    expect(engine.activeAlerts().map((a) => a.severity)).toEqual(["critical"]);
    // A minute of it, then four quiet seconds and one more second of convoy: still the same alert.
    agent.sendMany(60, () => [convoySample("db")]);
    agent.sendMany(4, () => [sample("db")]);
    agent.send([convoySample("db")]);
    expect(ofRule(agent.log, "convoy").map((c) => c.kind)).toEqual(["raised"]);
    agent.sendMany(5, () => [sample("db")]);
    expect(ofRule(agent.log, "convoy").map((c) => c.kind)).toEqual(["raised", "resolved"]);
    // A new convoy right after: raised on its fifth second, not sooner.
    expect(ofRule(agent.sendMany(4, () => [convoySample("db")]), "convoy")).toEqual([]);
    const again = ofRule(agent.send([convoySample("db")]), "convoy");
    expect(again.map((c) => [c.kind, c.alert.severity])).toEqual([["raised", "warning"]]);
    expect(again[0].alert.evidence).toMatchObject({ window: { coveredMs: 5000, samples: 5 } });
  });
});
