import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AlertEngine, applyThresholds, DEFAULT_THRESHOLDS } from "../../../shared/alerts/index.js";
import { feedRun, RUN_LENGTH, TrailingWindow } from "../../../shared/alerts/window.js";
import { MAX_HIST_PAIRS } from "../../../shared/alerts/hist-ring.js";
import { MAX_WINDOW_SAMPLES } from "../../../shared/alerts/window.js";
import type { Summary } from "../../../shared/histogram.js";
import { convoySample, info, ofRule, setup } from "./helpers.js";

describe("thresholds", () => {
  it("default to the protocol's numbers", () => {
    expect(DEFAULT_THRESHOLDS).toEqual({
      window: { maxGapIntervals: 2 },
      convoy: { windowMs: 5000, minHeldFraction: 0.8, minWaiters: 1, waitToHoldRatio: 2, clearMs: 5000 },
      starvation: { minWaitMs: 5000, holdP99Multiple: 10, openingWaitMs: 10_000, clearMs: 5000 },
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
    // At an offset in a shared array, as a tracker keeps its rules' runs; its neighbours untouched.
    const st = new Float64Array(2 + RUN_LENGTH + 2).fill(7);
    st.fill(0, 2, 2 + RUN_LENGTH);
    const feed = (t: number, holds = true) => feedRun(st, 2, t, 1000, holds, 2000);
    expect(feed(1000)).toBe(1000);
    expect(feed(1900)).toBe(1900); // early sample: 100 ms overlap not counted twice
    expect(feed(3900)).toBe(2900); // hole of a missed sample: not counted
    expect(feed(5901)).toBe(1000); // gap over 2 intervals: restarted
    expect(feed(6401)).toBe(1500);
    expect(feed(6901, false)).toBe(0);
    expect(feed(7901)).toBe(1000);
    expect([st[0], st[1], st[2 + RUN_LENGTH], st[3 + RUN_LENGTH]]).toEqual([7, 7, 7, 7]);
  });

  const values = (w: TrailingWindow) => Array.from({ length: w.size }, (_, i) => w.get(i, 0));
  const push = (w: TrailingWindow, t: number, v: number, intervalMs = 1000, windowMs = 10_000) => {
    w.push(t, intervalMs, 2 * intervalMs);
    w.set(0, v);
    w.trim(windowMs);
  };

  it("a trailing window keeps just enough samples to cover it", () => {
    const w = new TrailingWindow(1);
    for (let i = 1; i <= 12; i++) push(w, i * 1000, i);
    expect(w.covered).toBe(10_000);
    expect(values(w)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(w.since).toBe(2000);
    push(w, 15_000, 13);
    expect(values(w)).toEqual([13]);
  });

  it("a trailing window is bounded by count when sample time barely advances", () => {
    const w = new TrailingWindow(1, 64);
    // +0.001 ms a sample: by time alone, 10 s would take 10 million samples.
    for (let i = 1; i <= 10_000; i++) push(w, 1_000_000 + i * 0.001, i);
    expect(w.size).toBe(64);
    expect(values(w)).toEqual(Array.from({ length: 64 }, (_, i) => 10_000 - 63 + i));
    // It covers what its samples cover, never more: such a window does not reach 10 s.
    expect(w.covered).toBeLessThan(1000 + 64 * 0.001 + 1e-6);
    // 64 entries of (t, cover, one field), and the running totals: covered time and the field's sum.
    expect(w.bytes()).toBeLessThanOrEqual((64 * 3 + 2) * 8);
    // Still a window: a gap restarts it, and honest samples after fill it by time again.
    for (let i = 1; i <= 12; i++) push(w, 2_000_000 + i * 1000, i);
    expect(values(w)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it("a trailing window's running sums equal a pass over what it holds, whatever comes and goes", () => {
    // Steps: a sample (time step, interval, counts), an explicit drop of the oldest, or a clear.
    const step = fc.oneof(
      { weight: 8, arbitrary: fc.record({ dt: fc.integer({ min: 0, max: 5000 }), iv: fc.constantFrom(100, 1000, 2000), a: fc.nat(1_000_000), b: fc.nat(50) }) },
      { weight: 1, arbitrary: fc.constant("drop" as const) },
      { weight: 1, arbitrary: fc.constant("clear" as const) },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(step, { maxLength: 300 }), (maxSamples, steps) => {
        const w = new TrailingWindow(2, maxSamples);
        let t = 1_000_000;
        for (const s of steps) {
          if (s === "drop") w.dropFirst();
          else if (s === "clear") w.clear();
          else {
            t += s.dt;
            w.push(t, s.iv, 2 * s.iv);
            w.set(0, s.a);
            w.set(1, s.b);
            w.set(1, s.b + 1); // a field set twice counts once, at its last value
            w.trim(10_000);
          }
          for (let f = 0; f < 2; f++) {
            let pass = 0;
            for (let i = 0; i < w.size; i++) pass += w.get(i, f);
            expect(w.sum(f)).toBe(pass);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("rule windows under a hostile sample time", () => {
  /** Every bucket filled: the most a sample's histogram can hold. */
  const full = (ms: number): Summary => ({ count: 256, p50: ms, p90: ms, p99: ms, max: ms, hist: Array.from({ length: 256 }, (_, b) => [b, 1] as [number, number]) });

  it("hold memory bounded by count, and raise nothing for time the samples never covered", () => {
    const { engine, agent } = setup({ infos: [info("a"), info("b")] });
    // Within every protocol limit: a convoy and a failing acquire rate in every sample, each
    // with two full histograms, while `t` advances 0.001 ms a sample.
    const hostile = (id: string) => convoySample(id, { timeouts: 5, acquired: 1, waitMs: full(400), holdMs: full(50) });
    const perSemaphore = MAX_WINDOW_SAMPLES * (2 + 7) * 8 + 2 * (MAX_HIST_PAIRS + 256) * 9 + MAX_WINDOW_SAMPLES * (2 + 3) * 8;
    let plateau = 0;
    for (let i = 0; i < 20_000; i++) {
      agent.send([hostile("a"), hostile("b")], 0.001);
      if (i === 2_000) plateau = engine.windowBytes();
    }
    expect(engine.windowBytes()).toBeLessThanOrEqual(2 * perSemaphore);
    expect(engine.windowBytes()).toBe(plateau);
    // 20 ms of sample time is not the 5 s a convoy needs; the timeouts window judges what it holds.
    expect(ofRule(agent.log, "convoy")).toEqual([]);
    expect(ofRule(agent.log, "timeouts").map((c) => c.kind)).toEqual(["raised", "raised"]);
    // The same semaphores, honest again: a gap restarts the windows and 5 s raises the convoy.
    agent.send([convoySample("a")], 10_000);
    const raised = ofRule(agent.sendMany(5, () => [convoySample("a")]), "convoy");
    expect(raised.map((c) => c.kind)).toEqual(["raised"]);
    expect(raised[0].alert.evidence?.window).toMatchObject({ coveredMs: 5000, samples: 5 });
  });
});
