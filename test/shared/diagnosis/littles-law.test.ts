import { describe, expect, it } from "vitest";
import { littlesLaw, meanFromQuantiles, readoutInputs, type LittleInput, type ReadoutColumns } from "../../../shared/diagnosis/littles-law.js";

const base: LittleInput = {
  cap: 20,
  inUse: 20,
  waiters: 8,
  holdMs: 100,
  baselineHoldMs: 100,
  releasedPerSec: 200,
  attemptsPerSec: 300,
};

describe("littlesLaw", () => {
  it("computes throughput as in-use ÷ hold time", () => {
    const r = littlesLaw({ ...base, inUse: 10, waiters: 0 });
    expect(r.predictedPerSec).toBeCloseTo(100);
    expect(r.capacityPerSec).toBeCloseTo(200);
    expect(r.utilization).toBeCloseTo(0.5);
  });

  it("leaves the cause and the N to raise it to to the diagnosis when every permit is busy", () => {
    const r = littlesLaw(base);
    expect(r.verdict).toBe("saturated");
    expect(r.holdInflation).toBeCloseTo(1);
    // Its numbers, but no N of its own: the alert's diagnosis is the one place N is computed.
    expect(r.detail).toContain("20 permits at 100 ms drain at most 200/s");
    expect(r.detail).not.toMatch(/N ≈/);
    const slow = littlesLaw({ ...base, holdMs: 400, releasedPerSec: 50 });
    expect(slow.verdict).toBe("saturated");
    expect(slow.holdInflation).toBeCloseTo(4);
    expect(slow.capacityPerSec).toBeCloseTo(50);
    expect(slow.healthyCapacityPerSec).toBeCloseTo(200);
  });

  it("spots permits that do not cycle (fewer releases than L / W predicts)", () => {
    const r = littlesLaw({ ...base, inUse: 20, holdMs: 100, releasedPerSec: 40 });
    expect(r.verdict).toBe("stuck-permits");
    // 40/s × 0.1 s = 4 cycling, so 16 stuck.
    expect(r.stuckPermits).toBeCloseTo(16);
  });

  it("says stuck when permits are held and nothing is released at all", () => {
    const r = littlesLaw({ ...base, holdMs: 0, releasedPerSec: 0, inUse: 3 });
    expect(r.verdict).toBe("stuck-permits");
    expect(r.stuckPermits).toBe(3);
  });

  it("reports headroom below saturation and idle with no traffic", () => {
    expect(littlesLaw({ ...base, inUse: 5, waiters: 0, releasedPerSec: 50, attemptsPerSec: 50 }).verdict).toBe("headroom");
    expect(littlesLaw({ ...base, inUse: 0, waiters: 0, holdMs: 0, releasedPerSec: 0, attemptsPerSec: 0 }).verdict).toBe("idle");
  });

  it("treats a queue as saturation even when L is under 90 % of N", () => {
    expect(littlesLaw({ ...base, inUse: 15, waiters: 2, releasedPerSec: 150 }).verdict).toBe("saturated");
    expect(littlesLaw({ ...base, baselineHoldMs: null }).holdInflation).toBeNull();
  });
});

describe("meanFromQuantiles", () => {
  it("is the median for a tight distribution and larger for a skewed one", () => {
    expect(meanFromQuantiles(10, 10)).toBe(10);
    expect(meanFromQuantiles(10, 0)).toBe(10);
    const m = meanFromQuantiles(10, 36);
    expect(m).toBeGreaterThan(10);
    expect(m).toBeLessThan(36);
    expect(meanFromQuantiles(10, 1000, 20)).toBe(20);
    expect(meanFromQuantiles(0, 5)).toBe(0);
  });
});

describe("readoutInputs", () => {
  function cols(n: number, over: (i: number) => Partial<Record<keyof ReadoutColumns, number | null>>): ReadoutColumns {
    const c = {} as Record<keyof ReadoutColumns, (number | null)[]>;
    const names: (keyof ReadoutColumns)[] = ["cap", "inUse", "waiters", "releasedPerSec", "acquiredPerSec", "timeoutsPerSec", "rejectionsPerSec", "holdCount", "holdP50", "holdP90", "holdP99"];
    for (const k of names) c[k] = [];
    for (let i = 0; i < n; i++) {
      const row = { cap: 10, inUse: 5, waiters: 0, releasedPerSec: 50, acquiredPerSec: 50, timeoutsPerSec: 0, rejectionsPerSec: 0, holdCount: 50, holdP50: 100, holdP90: 100, holdP99: 100, ...over(i) };
      for (const k of names) c[k].push(row[k]);
    }
    return c;
  }

  it("averages gauges and rates over the rows, skipping gaps", () => {
    const c = cols(10, (i) => (i === 3 ? { inUse: null } : { inUse: i < 5 ? 4 : 6 }));
    const r = readoutInputs(c, 0, 10);
    expect(r).not.toBeNull();
    expect(r?.inUse).toBeCloseTo((4 * 4 + 6 * 5) / 9);
    expect(r?.holdMs).toBeCloseTo(100);
    expect(r?.attemptsPerSec).toBeCloseTo(50);
  });

  it("takes the baseline from the low end of the hold medians over the longer range", () => {
    // 20 healthy rows at 100 ms, then 10 slow rows at 500 ms.
    const c = cols(30, (i) => (i < 20 ? {} : { holdP50: 500, holdP90: 500, holdP99: 500, releasedPerSec: 10 }));
    const r = readoutInputs(c, 20, 30, 0);
    expect(r?.holdMs).toBeCloseTo(500);
    expect(r?.baselineHoldMs).toBeCloseTo(100);
  });

  it("returns null for an empty range and no baseline from too few rows", () => {
    expect(readoutInputs(cols(0, () => ({})), 0, 0)).toBeNull();
    expect(readoutInputs(cols(3, () => ({})), 0, 3)?.baselineHoldMs).toBeNull();
  });
});
