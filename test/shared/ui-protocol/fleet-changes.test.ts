// A /ui delta's fleet part: only entries dashboards do not already hold, keys of those gone, and
// dashboards that joined in between (with a snapshot newer than the last delta) brought level.
import { describe, expect, it } from "vitest";
import { FleetChangeTracker, sameFleetEntry, type UiFleetEntry } from "../../../shared/ui-protocol/index.js";

const summary = (p99: number) => ({ count: 10, p50: 1, p90: 2, p99, max: p99 });

function entry(name: string, over: Partial<UiFleetEntry> = {}): UiFleetEntry {
  return {
    key: `checkout/${name}`,
    service: "checkout",
    name,
    scope: "process",
    instances: 2,
    cap: 20,
    budget: null,
    overBudget: false,
    inUse: 3,
    waiters: 0,
    waitMs: summary(4),
    holdMs: summary(9),
    ...over,
  };
}

describe("sameFleetEntry", () => {
  it("compares every field and the summaries' numbers, not identity", () => {
    expect(sameFleetEntry(entry("db"), entry("db"))).toBe(true);
    expect(sameFleetEntry(entry("db"), entry("db", { inUse: 4 }))).toBe(false);
    expect(sameFleetEntry(entry("db"), entry("db", { holdMs: summary(10) }))).toBe(false);
    expect(sameFleetEntry(entry("db"), entry("db", { budget: 30 }))).toBe(false);
  });
});

describe("FleetChangeTracker", () => {
  it("sends every entry first, then only the changed ones, and the keys of those gone", () => {
    const t = new FleetChangeTracker();
    expect(t.take([entry("cache"), entry("db")]).changed.map((f) => f.key)).toEqual(["checkout/cache", "checkout/db"]);
    expect(t.take([entry("cache"), entry("db")])).toEqual({ changed: [], removed: [] });
    const next = t.take([entry("cache"), entry("db", { inUse: 7 }), entry("queue")]);
    expect(next.changed.map((f) => [f.key, f.inUse])).toEqual([
      ["checkout/db", 7],
      ["checkout/queue", 3],
    ]);
    expect(t.take([entry("db", { inUse: 7 })])).toEqual({ changed: [], removed: ["checkout/cache", "checkout/queue"] });
  });

  it("resends what a new dashboard's snapshot shows differently from the last delta", () => {
    const t = new FleetChangeTracker();
    t.take([entry("db", { inUse: 1 }), entry("cache")]);
    // Between two deltas db moved to 5 and a new group appeared: the joining dashboard sees both.
    t.snapshotTaken([entry("db", { inUse: 5 }), entry("cache"), entry("queue")]);
    // db went back to 1 before the next delta: the old dashboards hold 1, the new one 5.
    const d = t.take([entry("db", { inUse: 1 }), entry("cache")]);
    expect(d.changed.map((f) => [f.key, f.inUse])).toEqual([["checkout/db", 1]]);
    // The group that only the snapshot showed is gone again: everyone is told.
    expect(d.removed).toEqual(["checkout/queue"]);
  });

  it("resends a group a new dashboard's snapshot lacked when it is back as the others hold it", () => {
    const t = new FleetChangeTracker();
    t.take([entry("db", { inUse: 1 }), entry("cache")]);
    // cache was gone (its agent away) when the snapshot was taken, and is back unchanged by the next delta.
    t.snapshotTaken([entry("db", { inUse: 1 })]);
    expect(t.take([entry("db", { inUse: 1 }), entry("cache")]).changed.map((f) => f.key)).toEqual(["checkout/cache"]);
    // Still gone at the next delta instead: the dashboards that hold it are told.
    t.snapshotTaken([entry("db", { inUse: 1 })]);
    expect(t.take([entry("db", { inUse: 1 })])).toEqual({ changed: [], removed: ["checkout/cache"] });
  });

  it("starts over from a snapshot every dashboard got, and from nothing once none is left", () => {
    const t = new FleetChangeTracker();
    t.take([entry("db", { inUse: 1 })]);
    t.resetTo([entry("db", { inUse: 2 })]);
    expect(t.take([entry("db", { inUse: 2 })]).changed).toEqual([]);
    t.clear();
    expect(t.take([entry("db", { inUse: 2 })]).changed).toHaveLength(1);
  });
});
