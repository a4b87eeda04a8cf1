import { describe, expect, it } from "vitest";
import { info, many, ofRule, sample, setup, summaryOf, T0 } from "./helpers.js";

describe("starvation", () => {
  const waiting = (oldestWaitMs: number, holdMs = 50) =>
    sample("db", { inUse: 10, waiters: 3, oldestWaitMs, holdMs: summaryOf(...many(10, holdMs)) });

  it("is raised on the first sample whose oldest waiter reached max(5 s, 10 × hold p99)", () => {
    const { agent } = setup({ infos: [info("db", { queue: "lifo" })] });
    agent.send([waiting(4999)]);
    expect(ofRule(agent.log, "starvation")).toEqual([]);
    const raised = ofRule(agent.send([waiting(5000)]), "starvation");
    expect(raised.map((c) => [c.kind, c.alert.raisedAt, c.alert.severity])).toEqual([["raised", T0 + 2000, "warning"]]);
    expect(raised[0].alert.message).toContain("a waiter has waited 5 s (threshold 5 s");
    expect(raised[0].alert.message).toContain("LIFO");
    expect(raised[0].alert.evidence).toMatchObject({ cause: "passed_over", oldestWaitMs: 5000, thresholdMs: 5000, waiters: 3, queue: "lifo" });
  });

  describe("while the pool opens connections", () => {
    // knex on a database slow to accept connections: 2 of 10 lent, 3 callers waiting for the 3 being opened.
    const opening = (oldestWaitMs: number, count = 3) =>
      sample("db", { inUse: 2, waiters: 3, oldestWaitMs, ...(count > 0 ? { opening: count } : {}), holdMs: summaryOf(...many(10, 5)) });

    it("callers waiting behind connections being opened are no starvation, however short the holds", () => {
      const { engine, agent } = setup({ infos: [info("db", { kind: "tarn", queue: "fifo" })] });
      agent.sendMany(5, (i) => [opening(5000 + i * 1000)]);
      expect(ofRule(agent.log, "starvation")).toEqual([]);
      expect(engine.activeAlerts()).toEqual([]);
      // The connections open and the callers are served: nothing was ever raised.
      agent.sendMany(10, () => [sample("db", { inUse: 5 })]);
      expect(ofRule(agent.log, "starvation")).toEqual([]);
    });

    it("is raised with cause `opening` once a caller has waited 10 s on connections that do not open", () => {
      const { agent } = setup({ infos: [info("db", { kind: "tarn", queue: "fifo" })] });
      agent.send([opening(9999)]);
      expect(ofRule(agent.log, "starvation")).toEqual([]);
      const raised = ofRule(agent.send([opening(10_000, 1)]), "starvation");
      expect(raised.map((c) => [c.kind, c.alert.raisedAt])).toEqual([["raised", T0 + 2000]]);
      expect(raised[0].alert.message).toContain("a waiter has waited 10 s while the pool opens 1 connection (threshold 10 s)");
      expect(raised[0].alert.message).not.toContain("hold p99");
      expect(raised[0].alert.evidence).toMatchObject({ cause: "opening", opening: 1, oldestWaitMs: 10_000, thresholdMs: 10_000, waiters: 3, inUse: 2 });
      // The database comes back: the waiters are served and 5 s later it resolves.
      agent.sendMany(4, () => [sample("db", { inUse: 5 })]);
      expect(ofRule(agent.log, "starvation").map((c) => c.kind)).toEqual(["raised"]);
      expect(ofRule(agent.send([sample("db", { inUse: 5 })]), "starvation").map((c) => c.kind)).toEqual(["resolved"]);
    });

    it("permits free while callers wait, with nothing pending (a failing create between two attempts), are judged the same way", () => {
      const { agent } = setup({ infos: [info("db", { kind: "tarn", queue: "fifo" })] });
      agent.sendMany(4, (i) => [i % 2 === 0 ? opening(6000 + i * 1000) : opening(6000 + i * 1000, 0)]);
      expect(ofRule(agent.log, "starvation")).toEqual([]);
      const raised = ofRule(agent.send([opening(10_000, 0)]), "starvation");
      expect(raised[0].alert.message).toContain("a waiter has waited 10 s while 8 of 10 permits are free (threshold 10 s); it waits for no holder");
      expect(raised[0].alert.evidence).toMatchObject({ cause: "permits_free", opening: 0 });
    });

    it("takes its threshold from starvation.openingWaitMs", () => {
      const { engine, agent } = setup();
      engine.setThresholds({ starvation: { openingWaitMs: 3000 } });
      agent.send([opening(2999)]);
      expect(ofRule(agent.log, "starvation")).toEqual([]);
      expect(ofRule(agent.send([opening(3000)]), "starvation").map((c) => c.alert.evidence?.thresholdMs)).toEqual([3000]);
      expect(() => engine.setThresholds({ starvation: { openingWaitMs: -1 } })).toThrow(/openingWaitMs: must be a finite number ≥ 0/);
    });
  });

  it("scales with the hold time: 8 s is no starvation when holds take a second", () => {
    const { agent } = setup();
    agent.sendMany(10, () => [waiting(8000, 1000)]);
    expect(ofRule(agent.log, "starvation")).toEqual([]);
    const raised = ofRule(agent.send([waiting(12_000, 1000)]), "starvation");
    expect(raised.map((c) => c.kind)).toEqual(["raised"]);
  });

  it("is resolved after 5 s below the threshold, and does not flap around it", () => {
    const { agent } = setup();
    agent.send([waiting(6000)]);
    // Dipping below for under 5 s at a time: stays raised, never re-raised.
    agent.sendMany(20, (i) => [waiting(i % 4 === 3 ? 7000 : 100)]);
    expect(ofRule(agent.log, "starvation").map((c) => c.kind)).toEqual(["raised"]);
    agent.sendMany(4, () => [waiting(100)]);
    expect(ofRule(agent.log, "starvation").map((c) => c.kind)).toEqual(["raised"]);
    const resolved = ofRule(agent.send([waiting(100)]), "starvation");
    expect(resolved.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", T0 + 26_000]]);
  });
});

describe("timeouts", () => {
  const attempts = (acquired: number, timeouts: number, rejections = 0) => sample("db", { acquired, timeouts, rejections });

  it("is not raised by 19 attempts that all timed out", () => {
    const { engine, agent } = setup();
    agent.send([attempts(0, 10)]);
    agent.send([attempts(0, 9)]);
    agent.sendMany(12, () => [attempts(0, 0)]);
    expect(ofRule(agent.log, "timeouts")).toEqual([]);
    expect(engine.activeAlerts()).toEqual([]);
  });

  it("is raised on the sample that brings 20 attempts at ≥ 5 % failures into the 10 s window", () => {
    const { agent } = setup();
    agent.send([attempts(0, 10)]);
    const raised = ofRule(agent.send([attempts(0, 5, 5)]), "timeouts");
    expect(raised.map((c) => [c.kind, c.alert.raisedAt])).toEqual([["raised", T0 + 2000]]);
    expect(raised[0].alert.evidence).toMatchObject({ attempts: 20, failed: 20, timeouts: 15, rejections: 5, ratio: 1 });
    expect(raised[0].alert.message).toContain("100 % of acquire attempts timed out or were rejected");
  });

  it("draws the line at 5 %", () => {
    const { agent } = setup();
    agent.send([attempts(951, 49)]); // 4.9 %
    expect(ofRule(agent.log, "timeouts")).toEqual([]);
    const raised = ofRule(agent.send([attempts(0, 1)]), "timeouts"); // 50 of 1001 ≈ 4.995 %
    expect(raised).toEqual([]);
    const now = ofRule(agent.send([attempts(0, 1)]), "timeouts"); // 51 of 1002 ≈ 5.09 %
    expect(now.map((c) => c.kind)).toEqual(["raised"]);
  });

  it("measures over 10 s only: old failures leave the window, then 10 s below resolves it", () => {
    const { agent } = setup();
    expect(ofRule(agent.send([attempts(0, 20)]), "timeouts").map((c) => c.kind)).toEqual(["raised"]);
    // 20 failures against 100 good acquires a second: 16.7 %, 9 %, 6.3 %, then 4.8 % at T0+5000.
    agent.sendMany(12, () => [attempts(100, 0)]);
    expect(ofRule(agent.log, "timeouts").map((c) => c.kind)).toEqual(["raised"]);
    // Below from the T0+5000 sample on: the tenth such sample, at T0+14000, completes 10 s.
    const resolved = ofRule(agent.send([attempts(100, 0)]), "timeouts");
    expect(resolved.map((c) => [c.kind, c.alert.resolvedAt])).toEqual([["resolved", T0 + 14_000]]);
  });

  it("restarts the window after a gap of more than 2 × intervalMs", () => {
    const { agent } = setup();
    agent.send([attempts(0, 10)]);
    agent.send([attempts(0, 10)], 2001);
    expect(ofRule(agent.log, "timeouts")).toEqual([]);
  });
});
