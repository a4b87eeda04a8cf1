// The optional `global` block of a sample (what a global semaphore's replica read from Redis) on
// the wire, and the fleet view built from it: the global in-use, orphaned leases (claimed last by
// an agent that is gone) and leases no agent claims.
import { describe, expect, it } from "vitest";
import { globalViews, parsePayload, samplesBatchSchema, type GlobalMemberInput, type SampleGlobal } from "../../shared/protocol/index.js";

const summary = { count: 0, p50: 0, p90: 0, p99: 0, max: 0, hist: [] };
const sample = (extra: Record<string, unknown> = {}) => ({
  id: "g", cap: 5, inUse: 1, available: 4, waiters: 0, oldestWaitMs: 0, acquired: 0, released: 0, timeouts: 0, rejections: 0,
  aborts: 0, doubleReleases: 0, leaseExpiries: 0, waitMs: summary, holdMs: summary, longestHoldMs: 0, ...extra,
});
const batch = (item: unknown) => ({ seq: 0, t: 1, intervalMs: 1000, items: [item] });

describe("Sample.global on the wire", () => {
  it("is optional, kept when valid, and bounded", () => {
    const without = parsePayload(samplesBatchSchema, batch(sample()));
    expect(without.ok && without.value.items[0].global).toBeUndefined();
    const g = { inUse: 3, holders: ["a", "b", "c"], own: ["a"] };
    const withIt = parsePayload(samplesBatchSchema, batch(sample({ global: g })));
    expect(withIt.ok && withIt.value.items[0].global).toEqual(g);
    const many = Array.from({ length: 65 }, (_, i) => `h${i}`);
    expect(parsePayload(samplesBatchSchema, batch(sample({ global: { ...g, holders: many } })))).toEqual({ ok: false, error: "items.0.global.holders: must have at most 64 items" });
    expect(parsePayload(samplesBatchSchema, batch(sample({ global: { ...g, inUse: -1 } })))).toEqual({ ok: false, error: "items.0.global.inUse: must be finite and >= 0" });
    expect(parsePayload(samplesBatchSchema, batch(sample({ global: { ...g, own: ["x".repeat(257)] } })))).toMatchObject({ ok: false });
    expect(parsePayload(samplesBatchSchema, batch(sample({ global: { inUse: 1, holders: [] } })))).toEqual({ ok: false, error: "items.0.global.own: required" });
  });
});

const member = (agentId: string, instance: string, global: SampleGlobal | undefined, t = 1, inUse = global?.own.length ?? 0): GlobalMemberInput => ({
  agentId, service: "api", instance, name: "global-api", kind: "redis-semaphore", cap: 5, inUse, last: global === undefined ? null : { global }, t,
});

describe("globalViews", () => {
  it("counts the fleet from the freshest read and sorts its leases into live, orphaned and unattributed", () => {
    const members = [
      member("A", "a", { inUse: 4, holders: ["a1", "b1", "c1"], own: ["a1"] }, 10),
      // B's read is older; its own claim still counts.
      member("B", "b", { inUse: 9, holders: [], own: ["b1"] }, 5),
      // C is gone: its lease c1 is still in Redis.
      member("C", "c", { inUse: 1, holders: ["c1"], own: ["c1"] }, 3),
    ];
    const [v] = globalViews(members, (id) => id !== "C");
    expect(v).toEqual({
      key: "api/global-api", service: "api", name: "global-api", cap: 5, inUse: 4, readBy: "a", agentsInUse: 2, replicas: 2,
      orphans: [{ id: "c1", instance: "c" }],
      // One lease beyond the listed identifiers: nobody can claim it.
      unattributed: 1,
    });
  });

  it("has no fleet-wide figure while no live replica read Redis, and no view without a live replica", () => {
    const down = [member("A", "a", undefined), member("B", "b", undefined)];
    expect(globalViews(down, () => true)[0]).toMatchObject({ inUse: null, readBy: null, orphans: [], unattributed: 0 });
    expect(globalViews(down, () => false)).toEqual([]);
  });

  it("leaves process-scope semaphores out", () => {
    expect(globalViews([{ ...member("A", "a", undefined), kind: "semaphore" }], () => true)).toEqual([]);
  });

  it("does not call a lease orphaned when a live agent claims it, even if a gone one did too", () => {
    const members = [member("A", "a", { inUse: 1, holders: ["x"], own: ["x"] }), member("C", "c", { inUse: 1, holders: ["x"], own: ["x"] })];
    expect(globalViews(members, (id) => id === "A")[0].orphans).toEqual([]);
  });
});
