import { describe, expect, it } from "vitest";
import { alertTarget, compareAlerts } from "../../renderer/src/logic/alert-target.js";
import { addMute, mutedUntil, parseMutes, pruneMutes, removeMute } from "../../renderer/src/logic/mutes.js";
import { formatRoute, parseRoute, type Route } from "../../renderer/src/logic/route.js";
import { historyRange, pointsFor, windowMs } from "../../renderer/src/logic/time-window.js";
import { alert } from "./fixtures.js";

const T = 1_700_000_000_000;

describe("historyRange", () => {
  it("ends a live window at the latest sample and reads the 1 s tier up to 15 minutes", () => {
    expect(historyRange(windowMs("5m"), null, T, T + 999)).toEqual({ tier: "1s", from: T - 300_000, to: T });
    expect(historyRange(windowMs("15m"), null, T, 0).tier).toBe("1s");
    expect(historyRange(windowMs("1h"), null, T, 0)).toEqual({ tier: "1m", from: T - 3_600_000, to: T });
    expect(historyRange(windowMs("24h"), null, null, T).to).toBe(T);
  });

  it("places a pinned moment two thirds into the window", () => {
    const r = historyRange(windowMs("5m"), { at: T - 60_000 }, T, T);
    expect(r.from).toBe(T - 60_000 - 200_000);
    expect(r.to).toBe(T - 60_000 + 100_000);
    expect(r.tier).toBe("1s");
  });

  it("ends a paused window where it was paused", () => {
    expect(historyRange(windowMs("1m"), { end: T - 5000 }, T, T)).toEqual({ tier: "1s", from: T - 65_000, to: T - 5000 });
  });

  it("reads minutes for a moment the 1 s tier no longer covers", () => {
    expect(historyRange(windowMs("5m"), { at: T - 3_600_000 }, T, T).tier).toBe("1m");
  });

  it("sizes buffers per tier", () => {
    expect(pointsFor("1s", 300_000)).toBe(302);
    expect(pointsFor("1m", 86_400_000)).toBe(1442);
  });
});

describe("routes", () => {
  const routes: Route[] = [
    { view: "overview", mode: "instances" },
    { view: "overview", mode: "fleet" },
    { view: "overview", mode: "instances", q: "is:leak svc:checkout" },
    { view: "semaphore", key: "checkout/web 1:8080/db?pool#2" },
    { view: "semaphore", key: "a/b/c", window: "1h", at: T },
    { view: "fleet", service: "search", name: "upstream/http", window: "15m" },
    { view: "alerts" },
    { view: "alerts", id: "leak:checkout/web-1/db:1" },
    { view: "alerts", tab: "rules" },
    { view: "alerts", tab: "history", id: "x" },
    { view: "settings" },
  ];
  it("round-trips every route through the hash", () => {
    for (const r of routes) expect(parseRoute(formatRoute(r))).toEqual(r);
  });

  it("falls back to the overview on anything it does not know", () => {
    expect(parseRoute("")).toEqual({ view: "overview", mode: "instances" });
    expect(parseRoute("#/nope")).toEqual({ view: "overview", mode: "instances" });
    expect(parseRoute("#/s/%E0%A4%A")).toEqual({ view: "overview", mode: "instances" });
    expect(parseRoute("#/s/a?w=7m&at=-5")).toEqual({ view: "semaphore", key: "a" });
  });
});

describe("mutes", () => {
  const a = alert();
  it("mutes (rule, key) until a time, across re-raised alerts", () => {
    const m = addMute([], a, 60_000, T);
    expect(mutedUntil(m, a, T + 1)).toBe(T + 60_000);
    expect(mutedUntil(m, alert({ id: "other" }), T + 1)).toBe(T + 60_000);
    expect(mutedUntil(m, { ...a, rule: "convoy" }, T + 1)).toBeNull();
    expect(mutedUntil(m, a, T + 60_000)).toBeNull();
  });

  it("replaces a mute of the same alert and prunes expired ones", () => {
    let m = addMute([], a, 60_000, T);
    m = addMute(m, a, 10_000, T + 5);
    expect(m).toHaveLength(1);
    expect(mutedUntil(m, a, T + 6)).toBe(T + 10_005);
    expect(pruneMutes(m, T + 20_000)).toEqual([]);
    expect(removeMute(m, a)).toEqual([]);
  });

  it("reads whatever localStorage holds without throwing", () => {
    expect(parseMutes(null)).toEqual([]);
    expect(parseMutes("not json")).toEqual([]);
    expect(parseMutes('{"a":1}')).toEqual([]);
    expect(parseMutes('[{"match":"leak|k","until":5},{"match":3},null,{"match":"x","until":"soon"}]')).toEqual([{ match: "leak|k", until: 5 }]);
  });
});

describe("alertTarget", () => {
  it("leads semaphore alerts to the semaphore, over_budget to the fleet, agent_down to the instance", () => {
    expect(alertTarget(alert())).toEqual({ kind: "semaphore", key: "checkout/web-1/db" });
    expect(alertTarget(alert({ rule: "over_budget", key: "search/upstream", service: "search", instance: undefined, semaphore: "upstream" }))).toEqual({
      kind: "fleet",
      service: "search",
      name: "upstream",
    });
    // Key parts are escaped (keyPart): a name holding `/` reads back whole.
    expect(alertTarget(alert({ rule: "over_budget", key: "search/up%2Fstream", service: "search", instance: undefined, semaphore: undefined }))).toEqual({
      kind: "fleet",
      service: "search",
      name: "up/stream",
    });
    expect(alertTarget(alert({ rule: "agent_down", key: "checkout/web-1", semaphore: undefined }))).toEqual({ kind: "instance", service: "checkout", instance: "web-1" });
  });

  it("orders newest first, active before resolved", () => {
    const list = [alert({ id: "old", raisedAt: 1 }), alert({ id: "res", raisedAt: 5, resolvedAt: 6 }), alert({ id: "act", raisedAt: 5 })];
    expect(list.sort(compareAlerts).map((x) => x.id)).toEqual(["act", "res", "old"]);
  });
});
