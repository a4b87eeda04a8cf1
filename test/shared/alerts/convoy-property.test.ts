// The convoy rule's contract over any sequence of samples in and out of convoy, one interval
// apart: raised only on a sample in convoy whose trailing 5 s were in convoy for ≥ 80 % of their
// time, and, for a convoy that begins in convoy and dips only briefly, raised on the very first
// sample where that is true.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Sample } from "../../../shared/protocol/types.js";
import { DEFAULT_THRESHOLDS } from "../../../shared/alerts/thresholds.js";
import { convoySample, ofRule, sample, setup, T0 } from "./helpers.js";

const WINDOW_MS = DEFAULT_THRESHOLDS.convoy.windowMs;
const FRACTION = DEFAULT_THRESHOLDS.convoy.minHeldFraction;

// What a brief dip reads like: a permit free for an instant, the queue empty for an instant, or
// both; and a queue whose waits are no longer than the work (not a convoy).
const DIPS: readonly ((id: string) => Sample)[] = [
  (id) => sample(id, { inUse: 9, waiters: 0 }),
  (id) => sample(id, { inUse: 10, waiters: 0 }),
  (id) => convoySample(id, { inUse: 9, waiters: 2 }),
  (id) => convoySample(id, { waitMs: convoySample(id).holdMs }),
];

const intervals = fc.constantFrom(100, 250, 500, 1000);
/** A step: in convoy (-1) or the index of a dip shape. */
const step = fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: DIPS.length - 1 }));

/** Feeds the steps one interval apart; returns the sample times at which convoy was raised. */
function run(intervalMs: number, steps: readonly number[]): number[] {
  const { agent } = setup({ intervalMs });
  const raised: number[] = [];
  for (const k of steps) {
    const changes = ofRule(agent.send([k < 0 ? convoySample("db") : DIPS[k]("db")]), "convoy");
    for (const c of changes) if (c.kind === "raised") raised.push(c.alert.raisedAt);
  }
  return raised;
}

/** Whether sample i is in convoy and the window's worth of samples ending at it are in convoy often enough. */
function windowHolds(intervalMs: number, steps: readonly number[], i: number): boolean {
  const n = WINDOW_MS / intervalMs;
  if (i + 1 < n || steps[i] >= 0) return false;
  let held = 0;
  for (let j = i - n + 1; j <= i; j++) if (steps[j] < 0) held++;
  return held * intervalMs >= FRACTION * n * intervalMs;
}

describe("convoy, as a property of the samples", () => {
  it("is raised only where the trailing 5 s were in convoy for ≥ 80 % of their time and the sample is in convoy", () => {
    fc.assert(
      fc.property(intervals, fc.array(step, { minLength: 1, maxLength: 160 }), (intervalMs, steps) => {
        for (const at of run(intervalMs, steps)) {
          const i = (at - T0) / intervalMs - 1;
          expect(windowHolds(intervalMs, steps, i), `raised at sample ${i}`).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a load in convoy for under 80 % of every 5 s is never raised", () => {
    // Periodic loads: `on` samples in convoy then `off` dips, in every phase, with on/(on+off) under
    // 80 % and the period no longer than the window (a longer period holds whole windows in convoy).
    const load = intervals.chain((intervalMs) => {
      const n = WINDOW_MS / intervalMs;
      return fc
        .integer({ min: 2, max: n })
        .chain((period) => fc.tuple(fc.constant(intervalMs), fc.constant(period), fc.integer({ min: 1, max: Math.ceil(FRACTION * period) - 1 }), fc.nat({ max: period - 1 })));
    });
    fc.assert(
      fc.property(load, fc.integer({ min: 0, max: DIPS.length - 1 }), ([intervalMs, period, on, phase], dip) => {
        const n = WINDOW_MS / intervalMs;
        const steps = Array.from({ length: 4 * n }, (_, i) => ((i + phase) % period < on ? -1 : dip));
        // Only when every window is under the line: a period that does not divide the window can
        // put one more sample in convoy into some windows than its share.
        fc.pre(steps.every((_, i) => !windowHolds(intervalMs, steps, i)));
        expect(run(intervalMs, steps)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it("a convoy held for the window with short dips (at most 20 % of it) is raised on the first sample that completes it", () => {
    // Begins in convoy; dips come in runs shorter than the window, so nothing ever empties it.
    const convoy = intervals.chain((intervalMs) => {
      const n = WINDOW_MS / intervalMs;
      const dipRun = fc.tuple(fc.integer({ min: 0, max: DIPS.length - 1 }), fc.integer({ min: 1, max: Math.max(1, Math.floor(n / 5)) }));
      const held = fc.integer({ min: 1, max: 2 * n });
      return fc.tuple(fc.constant(intervalMs), fc.array(fc.tuple(held, dipRun), { minLength: 1, maxLength: 8 }), held);
    });
    fc.assert(
      fc.property(convoy, ([intervalMs, segments, tail]) => {
        const steps: number[] = [];
        for (const [held, [dip, len]] of segments) steps.push(...Array<number>(held).fill(-1), ...Array<number>(len).fill(dip));
        steps.push(...Array<number>(tail).fill(-1));
        const first = steps.findIndex((_, i) => windowHolds(intervalMs, steps, i));
        const raised = run(intervalMs, steps);
        if (first < 0) {
          expect(raised).toEqual([]);
          return;
        }
        expect(raised[0]).toBe(T0 + (first + 1) * intervalMs);
      }),
      { numRuns: 300 },
    );
  });
});
