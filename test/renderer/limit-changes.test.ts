// The limit changes a detail view holds: a poll or a live sample adds only the changes newer than
// the last one held; on a fleet's chart, a change made at the same moment on another replica is
// new, while one already held is not added twice. Each names its replica on a fleet's chart.
import { describe, expect, it } from "vitest";
import type { UiLimitChange } from "../../shared/ui-protocol/types.js";
import { limitChangeText, mergeLimitChanges } from "../../renderer/src/logic/limit-changes.js";

const change = (t: number, instance?: string): UiLimitChange => ({ min: 2, max: 40, limit: 8, from: 6, t, reason: "latency flat at 5 ms: probing up", ...(instance !== undefined ? { instance } : {}) });

describe("limit changes held by a detail view", () => {
  it("adds only what is newer, or as new on another replica, and keeps the same array when nothing is", () => {
    const held = [change(1000, "web-1"), change(2000, "web-1")];
    expect(mergeLimitChanges(held, [change(1000, "web-1"), change(2000, "web-1")])).toBe(held);
    const merged = mergeLimitChanges(held, [change(2000, "web-1"), change(2000, "web-2"), change(3000, "web-1")]);
    expect(merged.map((c) => `${c.t}:${c.instance}`)).toEqual(["1000:web-1", "2000:web-1", "2000:web-2", "3000:web-1"]);
    // The semaphore's creation (no `from`) is no change.
    expect(mergeLimitChanges(held, [{ ...change(5000), from: undefined }])).toBe(held);
  });

  it("names the replica on a fleet's chart, and only there", () => {
    expect(limitChangeText(change(0, "web-2"))).toMatch(/^web-2: Limit 6 → 8 at \d\d:\d\d:\d\d: latency flat at 5 ms: probing up$/);
    expect(limitChangeText(change(0))).toMatch(/^Limit 6 → 8 at /);
  });
});
