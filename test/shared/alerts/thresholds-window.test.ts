import { describe, expect, it } from "vitest";
import { AlertEngine, applyThresholds, DEFAULT_THRESHOLDS } from "../../../shared/alerts/index.js";
import { Run, TrailingWindow } from "../../../shared/alerts/window.js";
import { convoySample, ofRule, setup } from "./helpers.js";

describe("thresholds", () => {
  it("default to the protocol's numbers", () => {
    expect(DEFAULT_THRESHOLDS).toEqual({
      window: { maxGapIntervals: 2 },
      convoy: { windowMs: 5000, minWaiters: 1, waitToHoldRatio: 2, clearMs: 5000 },
      starvation: { minWaitMs: 5000, holdP99Multiple: 10, clearMs: 5000 },
      timeouts: { windowMs: 10_000, ratio: 0.05, minAttempts: 20, clearMs: 10_000 },
      doubleRelease: { quietMs: 60_000 },
      agentDown: { silentIntervals: 3, defaultIntervalMs: 1000 },
    });
    expect(Object.isFrozen(DEFAULT_THRESHOLDS.convoy)).toBe(true);
  });

  it("change per rule at run time, from the next sample on", () => {
    const { engine, agent } = setup();
    agent.sendMany(2, () => [convoySample("db")]);
    const th = engine.setThresholds({ convoy: { windowMs: 3000 } });
    expect(th.convoy).toEqual({ ...DEFAULT_THRESHOLDS.convoy, windowMs: 3000 });
    expect(th.timeouts).toBe(DEFAULT_THRESHOLDS.timeouts);
    const raised = ofRule(agent.send([convoySample("db")]), "convoy");
    expect(raised.map((c) => c.alert.raisedAt)).toEqual([agent.t]);
  });

  it("can be set at construction", () => {
    const engine = new AlertEngine({ thresholds: { doubleRelease: { quietMs: 2000 } } });
    expect(engine.thresholds.doubleRelease.quietMs).toBe(2000);
  });

  it("reject what they cannot mean, and leave the engine unchanged", () => {
    const { engine, agent } = setup();
    expect(() => engine.setThresholds({ timeouts: { ratio: 5 } })).toThrow(RangeError);
    expect(() => engine.setThresholds({ convoy: { windowMs: Number.NaN } })).toThrow(/finite/);
    expect(() => engine.setThresholds({ convoy: { minWaiters: 0 } })).toThrow(RangeError);
    expect(() => engine.setThresholds({ convoy: { windowMs: "5s" as unknown as number } })).toThrow(TypeError);
    expect(() => engine.setThresholds({ leak: {} } as never)).toThrow(/unknown rule group "leak"/);
    expect(() => engine.setThresholds({ convoy: { window: 1 } as never })).toThrow(/unknown field "window"/);
    expect(engine.thresholds).toEqual(DEFAULT_THRESHOLDS);
    // And the rules still run on the defaults: 5 s of convoy, not less.
    agent.sendMany(4, () => [convoySample("db")]);
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    expect(ofRule(agent.send([convoySample("db")]), "convoy")).toHaveLength(1);
    expect(applyThresholds(DEFAULT_THRESHOLDS, {})).toEqual(DEFAULT_THRESHOLDS);
  });
});

describe("windows", () => {
  it("a run covers the union of its samples' intervals", () => {
    const r = new Run();
    expect(r.feed(1000, 1000, true, 2000)).toBe(1000);
    expect(r.feed(1900, 1000, true, 2000)).toBe(1900); // early sample: 100 ms overlap not counted twice
    expect(r.feed(3900, 1000, true, 2000)).toBe(2900); // hole of a missed sample: not counted
    expect(r.feed(5901, 1000, true, 2000)).toBe(1000); // gap over 2 intervals: restarted
    expect(r.since).toBe(4901);
    expect(r.feed(6901, 1000, false, 2000)).toBe(0);
    expect(r.feed(7901, 1000, true, 2000)).toBe(1000);
  });

  it("a trailing window keeps just enough samples to cover it", () => {
    const w = new TrailingWindow<number>();
    for (let i = 1; i <= 12; i++) w.push(i * 1000, 1000, i, 2000, 10_000);
    expect(w.covered).toBe(10_000);
    expect(w.items().map((e) => e.value)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(w.since).toBe(2000);
    w.push(15_000, 1000, 13, 2000, 10_000);
    expect(w.items().map((e) => e.value)).toEqual([13]);
  });
});
