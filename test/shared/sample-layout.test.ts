// The Sample's layout (shared/protocol/sample-layout.ts) is what code handling a sample field by
// field follows; where that code is written out for speed, each field of the layout must still
// reach the reader: the latest sample, the hub's running totals, the 1 s history a chart reads,
// and the quiet-sample and optional-part checks the changed-only feature relies on.
import { describe, expect, it } from "vitest";
import { addCounters, sampleRow, SemaphoreHistory } from "../../shared/history/index.js";
import { LatestSample } from "../../shared/protocol/latest-sample.js";
import {
  hasActivity,
  hasParts,
  quietSample,
  SAMPLE_COUNTERS,
  SAMPLE_NUMBERS,
  SAMPLE_PARTS,
  SAMPLE_SUMMARIES,
  SUMMARY_NUMBERS,
  type Sample,
} from "../../shared/protocol/index.js";

const T0 = Date.UTC(2026, 0, 1);

/** A sample whose every number of the layout is its own (small integers, exact in the 1 s tier's Float32). */
function distinctSample(): Sample {
  const s = quietSample("s", { cap: 0, inUse: 0, available: 0, longestHoldMs: 0 });
  let next = 1;
  for (const k of SAMPLE_NUMBERS) s[k] = next++;
  for (const summary of SAMPLE_SUMMARIES) for (const k of SUMMARY_NUMBERS) s[summary][k] = next++;
  s.waitMs.hist = [[3, 2]];
  s.holdMs.hist = [[5, 4]];
  return s;
}

describe("the Sample's layout", () => {
  it("every field reaches the latest sample's readers as it was sent", () => {
    const s = distinctSample();
    const latest = new LatestSample("s");
    latest.set(s);
    expect(latest.get()).toEqual(s);
    expect(JSON.stringify(latest.get())).toBe(JSON.stringify(s));
  });

  it("every counter adds into its own running total, in SAMPLE_COUNTERS order", () => {
    const s = distinctSample();
    const sums = new Float64Array(SAMPLE_COUNTERS.length + 2);
    addCounters(sums, s, 1);
    addCounters(sums, s, 1);
    expect(Array.from(sums)).toEqual([0, ...SAMPLE_COUNTERS.map((k) => 2 * s[k]), 0]);
  });

  it("every number reads back from the 1 s history as the sample's row, rates per second", () => {
    const s = distinctSample();
    const h = new SemaphoreHistory();
    h.push(s, T0, 500);
    const w = h.window("1s", -Infinity, Infinity);
    const row = sampleRow(s, 500);
    expect(w.length).toBe(1);
    expect(w.t[0]).toBe(T0);
    for (const [column, value] of Object.entries(row)) expect([column, w[column as keyof typeof row][0]]).toEqual([column, value]);
    for (const k of SAMPLE_COUNTERS) expect(row[`${k}PerSec`]).toBe(s[k] * 2);
  });

  it("any counter, or a waiter, is activity; any optional part is a part", () => {
    const quiet = quietSample("s", { cap: 4, inUse: 2, available: 2, longestHoldMs: 9 });
    expect(hasActivity(quiet)).toBe(false);
    expect(hasParts(quiet)).toBe(false);
    for (const k of [...SAMPLE_COUNTERS, "waiters"] as const) expect([k, hasActivity({ ...quiet, [k]: 1 })]).toEqual([k, true]);
    const parts: Required<Pick<Sample, (typeof SAMPLE_PARTS)[number]>> = {
      global: { inUse: 1, holders: [], own: [] },
      share: { budget: 4, replicas: 2, target: 2, reachable: true },
      limit: { min: 1, max: 8, limit: 4, t: T0, reason: "initial" },
      opening: 2,
    };
    for (const k of SAMPLE_PARTS) expect([k, hasParts({ ...quiet, [k]: parts[k] })]).toEqual([k, true]);
  });
});
