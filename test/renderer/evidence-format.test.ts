import { describe, expect, it } from "vitest";
import { evidenceLabel, evidenceStacks, flattenEvidence, holderAge, isDurationPath, leakHolders } from "../../renderer/src/logic/evidence.js";
import { fmtAgo, fmtCount, fmtDuration, fmtPct, fmtRate } from "../../renderer/src/logic/format.js";

describe("evidence", () => {
  const leak = {
    suspectedHolders: 2,
    holders: [
      { holderId: "h1", t: 1000, heldMs: 30_000, stack: "Error\n    at handler (src/db.ts:42:7)" },
      { holderId: "h2", t: 2000 },
      { nope: true },
    ],
    check: { t: 1_700_000_000_000, cap: 10, inUse: 11, available: 0 },
  };

  it("reads leak holders with their stacks and ages them", () => {
    const h = leakHolders(leak);
    expect(h).toEqual([
      { holderId: "h1", t: 1000, heldMs: 30_000, stack: "Error\n    at handler (src/db.ts:42:7)" },
      { holderId: "h2", t: 2000, heldMs: null, stack: null },
    ]);
    expect(holderAge(h[0], 6000)).toBe(35_000);
    expect(holderAge(h[1], 1000)).toBe(0);
    expect(leakHolders(undefined)).toEqual([]);
  });

  it("flattens every other number into dotted lines, flags times, and leaves holders and stacks out", () => {
    const lines = flattenEvidence(leak);
    expect(lines).toContainEqual({ path: "suspectedHolders", value: 2, time: false });
    expect(lines).toContainEqual({ path: "check.t", value: 1_700_000_000_000, time: true });
    expect(lines).toContainEqual({ path: "check.inUse", value: 11, time: false });
    expect(lines.some((l) => l.path.startsWith("holders"))).toBe(false);
    expect(flattenEvidence({ waiters: { first: 1, last: 9 }, members: ["a", "b"] })).toEqual([
      { path: "waiters.first", value: 1, time: false },
      { path: "waiters.last", value: 9, time: false },
      { path: "members", value: "a, b", time: false },
    ]);
  });

  it("knows which fields are durations", () => {
    expect(["oldestWaitMs", "waitMs.p99", "window.coveredMs", "heldMs"].every(isDurationPath)).toBe(true);
    expect(["waiters.max", "msgs", "cap", "releasedPerSec.firstHalf"].some(isDurationPath)).toBe(false);
  });

  it("finds stacks outside the leak holders", () => {
    expect(evidenceStacks({ secondStack: "Error\n at x", holders: [{ stack: "a\nb" }], n: 1 })).toEqual([{ path: "secondStack", stack: "Error\n at x" }]);
  });
});

describe("format", () => {
  it("formats durations for tables", () => {
    expect(fmtDuration(null)).toBe("—");
    expect(fmtDuration(0)).toBe("0");
    expect(fmtDuration(0.42)).toBe("420 µs");
    expect(fmtDuration(2.5)).toBe("2.5 ms");
    expect(fmtDuration(850)).toBe("850 ms");
    expect(fmtDuration(1500)).toBe("1.5 s");
    expect(fmtDuration(125_000)).toBe("2m 05s");
    expect(fmtDuration(3_840_000)).toBe("1h 04m");
  });

  it("formats rates, counts and percentages", () => {
    expect(fmtRate(0)).toBe("0/s");
    expect(fmtRate(0.25)).toBe("0.25/s");
    expect(fmtRate(3.44)).toBe("3.4/s");
    expect(fmtCount(12_345)).toBe("12.3k");
    expect(fmtPct(0.873)).toBe("87 %");
    expect(fmtPct(NaN)).toBe("—");
  });

  it("says how long ago", () => {
    expect(fmtAgo(0, 500)).toBe("just now");
    expect(fmtAgo(0, 42_000)).toBe("42s ago");
    expect(fmtAgo(0, 7_200_000)).toBe("2h ago");
  });
});

describe("evidenceLabel", () => {
  it("names evidence paths for people", () => {
    expect(evidenceLabel("members[0].instance")).toBe("Member 1 · instance");
    expect(evidenceLabel("waitMs.p99")).toBe("Wait · p99");
    expect(evidenceLabel("releasedPerSec.firstHalf")).toBe("Released per sec · first half");
    expect(evidenceLabel("lastAt")).toBe("Last seen at");
    expect(evidenceLabel("window.coveredMs")).toBe("Window · covered");
  });

  it("reads any …At key as a time", () => {
    const lines = flattenEvidence({ lastAt: 1_796_267_900_000, doubleReleases: 3 });
    expect(lines).toContainEqual({ path: "lastAt", value: 1_796_267_900_000, time: true });
    expect(lines).toContainEqual({ path: "doubleReleases", value: 3, time: false });
  });
});
