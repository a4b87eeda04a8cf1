import { describe, expect, it } from "vitest";
import { matchesChip, matchesFilter, parseFilter } from "../../renderer/src/logic/filter.js";
import { compareItems, nextSort } from "../../renderer/src/logic/sorting.js";
import { countStatuses, displayStatus, utilization, worstStatus } from "../../renderer/src/logic/status.js";
import { buildFlatRows, buildRows, instanceRowId, scrollToReveal, serviceRowId, visibleRange } from "../../renderer/src/logic/tree.js";
import { item } from "./fixtures.js";

describe("status", () => {
  it("ranks leak > convoy > saturated > stale > ok and marks a gone agent stale", () => {
    expect(worstStatus("ok", "saturated")).toBe("saturated");
    expect(worstStatus("leak", "convoy")).toBe("leak");
    expect(worstStatus("stale", "saturated")).toBe("saturated");
    expect(displayStatus("saturated", false)).toBe("stale");
    expect(displayStatus("leak", false)).toBe("leak");
    expect(displayStatus("ok", true)).toBe("ok");
  });

  it("computes utilization without dividing by zero", () => {
    expect(utilization(5, 10)).toBe(0.5);
    expect(utilization(0, 0)).toBe(0);
    expect(utilization(1, 0)).toBe(Infinity);
  });

  it("counts statuses", () => {
    expect(countStatuses(["ok", "leak", "ok", "stale"])).toEqual({ total: 4, ok: 2, leak: 1, convoy: 0, saturated: 0, stale: 1, problems: 2 });
    // An ok row a rule badges is a problem too.
    expect(countStatuses(["ok", "leak", "ok", "stale"], (i) => i === 2).problems).toBe(3);
  });
});

describe("filter", () => {
  const db = item("checkout", "web-1", "db", { inUse: 9, waiters: 3 }, "saturated");
  const cache = item("checkout", "web-2", "redis", { kind: "redis-semaphore", inUse: 1 });
  const search = item("search", "s-1", "upstream", {}, "leak");

  it("matches every word against any field, case-insensitively", () => {
    const f = parseFilter("Checkout DB");
    expect(matchesFilter(db, f)).toBe(true);
    expect(matchesFilter(cache, f)).toBe(false);
    expect(parseFilter("   ").empty).toBe(true);
    // is: words naming nothing are reported, not silently matched against nothing.
    expect(parseFilter("is:leak is:double-release is:problem db").unknown).toEqual([]);
    expect(parseFilter("is:nonsense -is:bogus").unknown).toEqual(["is:nonsense", "is:bogus"]);
  });

  it("aims at one field with field:value and excludes with -word", () => {
    expect(matchesFilter(cache, parseFilter("kind:redis"))).toBe(true);
    expect(matchesFilter(db, parseFilter("kind:redis"))).toBe(false);
    expect(matchesFilter(db, parseFilter("svc:checkout -web-2"))).toBe(true);
    expect(matchesFilter(cache, parseFilter("svc:checkout -web-2"))).toBe(false);
    expect(matchesFilter(search, parseFilter("is:leak"))).toBe(true);
    expect(matchesFilter(db, parseFilter("is:problem"))).toBe(true);
    expect(matchesFilter(cache, parseFilter("is:problem"))).toBe(false);
  });

  it("tests live numbers: util in percent, waiters, wait p99", () => {
    expect(matchesFilter(db, parseFilter("util>=90"))).toBe(true);
    expect(matchesFilter(cache, parseFilter("util>=90"))).toBe(false);
    expect(matchesFilter(db, parseFilter("waiters>0"))).toBe(true);
    expect(matchesFilter(cache, parseFilter("waiters>0"))).toBe(false);
    expect(matchesFilter(cache, parseFilter("-waiters>0"))).toBe(true);
  });

  it("takes an unknown field:value as plain text", () => {
    expect(parseFilter("foo:bar").terms[0]).toMatchObject({ type: "text", field: "any", value: "foo:bar" });
  });

  it("filters by status chip", () => {
    expect(matchesChip("ok", "all")).toBe(true);
    expect(matchesChip("ok", "problems")).toBe(false);
    expect(matchesChip("stale", "problems")).toBe(true);
    expect(matchesChip("ok", "problems", true)).toBe(true);
    expect(matchesChip("leak", "leak")).toBe(true);
    expect(matchesChip("convoy", "leak")).toBe(false);
  });
});

describe("sorting and grouping", () => {
  const items = [
    item("checkout", "web-1", "db", { inUse: 2 }),
    item("checkout", "web-1", "cache", { inUse: 9 }, "saturated"),
    item("checkout", "web-2", "db", { inUse: 10, waiters: 4 }, "convoy"),
    item("search", "s-1", "upstream", { inUse: 1 }),
    item("billing", "b-1", "ledger", { inUse: 5 }, "leak"),
  ];

  it("flips direction on the same key and starts new keys in their natural direction", () => {
    expect(nextSort({ key: "util", dir: "desc" }, "util")).toEqual({ key: "util", dir: "asc" });
    expect(nextSort({ key: "util", dir: "desc" }, "name")).toEqual({ key: "name", dir: "asc" });
    expect(nextSort({ key: "name", dir: "asc" }, "status")).toEqual({ key: "status", dir: "desc" });
  });

  it("sorts worst first by status, then by name so rows stay put", () => {
    const sorted = [...items].sort((a, b) => compareItems(a, b, { key: "status", dir: "desc" })).map((i) => i.key);
    expect(sorted).toEqual(["billing/b-1/ledger", "checkout/web-2/db", "checkout/web-1/cache", "checkout/web-1/db", "search/s-1/upstream"]);
  });

  it("groups services → instances → semaphores, groups ordered by their worst member", () => {
    const rows = buildRows(items, { key: "status", dir: "desc" }, new Set());
    expect(rows.map((r) => r.id)).toEqual([
      serviceRowId("billing"),
      instanceRowId("billing", "b-1"),
      "billing/b-1/ledger",
      serviceRowId("checkout"),
      instanceRowId("checkout", "web-2"),
      "checkout/web-2/db",
      instanceRowId("checkout", "web-1"),
      "checkout/web-1/cache",
      "checkout/web-1/db",
      serviceRowId("search"),
      instanceRowId("search", "s-1"),
      "search/s-1/upstream",
    ]);
    const svc = rows[3];
    expect(svc.kind === "service" && svc.status).toBe("convoy");
    expect(svc.kind === "service" && svc.problems).toBe(2);
    expect(svc.kind === "service" && svc.instances).toBe(2);
    // A row whose status is ok but which a rule badges (a double release) needs attention too.
    const ok = items.find((i) => i.service === "checkout" && i.status === "ok");
    expect(ok).toBeDefined();
    const flagged = buildRows(items, { key: "status", dir: "desc" }, new Set(), (key) => key === ok?.key)[3];
    expect(flagged.kind === "service" && flagged.problems).toBe(3);
  });

  it("hides the children of collapsed groups", () => {
    const rows = buildRows(items, { key: "name", dir: "asc" }, new Set([serviceRowId("checkout"), instanceRowId("search", "s-1")]));
    expect(rows.map((r) => r.id)).toEqual([
      serviceRowId("billing"),
      instanceRowId("billing", "b-1"),
      "billing/b-1/ledger",
      serviceRowId("checkout"),
      serviceRowId("search"),
      instanceRowId("search", "s-1"),
    ]);
    expect(rows[3].kind === "service" && rows[3].collapsed).toBe(true);
  });

  it("sorts flat rows across the fleet", () => {
    expect(buildFlatRows(items, { key: "util", dir: "desc" }).map((r) => r.id)[0]).toBe("checkout/web-2/db");
  });
});

describe("windowing", () => {
  it("renders only the rows on screen plus overscan", () => {
    expect(visibleRange(0, 340, 34, 500, 5)).toEqual([0, 15]);
    expect(visibleRange(3400, 340, 34, 500, 5)).toEqual([95, 115]);
    expect(visibleRange(34 * 495, 340, 34, 500, 5)).toEqual([490, 500]);
    expect(visibleRange(0, 340, 34, 0, 5)).toEqual([0, 0]);
  });

  it("scrolls just enough to reveal a row", () => {
    expect(scrollToReveal(5, 0, 340, 34)).toBeNull();
    expect(scrollToReveal(12, 0, 340, 34)).toBe(13 * 34 - 340);
    expect(scrollToReveal(2, 200, 340, 34)).toBe(68);
  });
});
