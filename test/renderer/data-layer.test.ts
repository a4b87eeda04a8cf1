import { describe, expect, it } from "vitest";
import type { UiDelta, UiSnapshot } from "../../shared/ui-protocol/types.js";
import { DEFAULT_THRESHOLDS } from "../../shared/alerts/index.js";
import { DashboardStore } from "../../renderer/src/data/dashboard-store.js";
import { SeriesBuffer } from "../../renderer/src/data/series-buffer.js";
import { SparkRing } from "../../renderer/src/data/sparkline-ring.js";
import { sampleRow } from "../../shared/history/index.js";
import { alert, sample, sem } from "./fixtures.js";

const T = 1_700_000_000_000;

describe("SeriesBuffer", () => {
  it("loads a window with a null row over a gap and appends live points", () => {
    const b = new SeriesBuffer(["inUse", "cap"] as const, 1000);
    b.load({ tier: "1s", length: 4, partialLast: false, t: [T, T + 1000, T + 2000, T + 9000], intervalMs: [1000, 1000, 1000, 1000], inUse: [1, 2, 3, 4], cap: [5, 5, 5, 5] }, 1000);
    expect(b.t).toEqual([T, T + 1000, T + 2000, T + 5500, T + 9000]);
    expect(b.data.inUse).toEqual([1, 2, 3, null, 4]);
    expect(b.latestT).toBe(T + 9000);
    expect(b.append(T + 9000, { inUse: 9 })).toBe("stale");
    expect(b.append(T + 10_000, { inUse: 5 })).toBe("appended");
    expect(b.data.cap.at(-1)).toBeNull();
    expect(b.append(T + 20_000, { inUse: 6, cap: 5 }, 1000)).toBe("gap");
    expect(b.t.slice(-2)).toEqual([T + 15_000, T + 20_000]);
    expect(b.data.inUse.slice(-2)).toEqual([null, 6]);
  });

  it("trims old rows in batches and finds rows by time", () => {
    const b = new SeriesBuffer(["v"] as const);
    for (let i = 0; i < 200; i++) b.append(T + i * 1000, { v: i });
    const v = b.version;
    b.trim(T + 10_000, 64);
    expect(b.length).toBe(200);
    expect(b.version).toBe(v);
    b.trim(T + 100_000, 64);
    expect(b.length).toBe(100);
    expect(b.data.v[0]).toBe(100);
    expect(b.indexAt(T + 150_500)).toBe(51);
  });
});

describe("sampleRow", () => {
  it("turns counts into per-second rates over the interval", () => {
    const r = sampleRow(sample({ acquired: 50, released: 40, timeouts: 2, inUse: 3, holdMs: { count: 40, p50: 5, p90: 9, p99: 12, max: 20, hist: [] } }), 500);
    expect(r.acquiredPerSec).toBe(100);
    expect(r.releasedPerSec).toBe(80);
    expect(r.timeoutsPerSec).toBe(4);
    expect(r.holdP99).toBe(12);
    expect(r.inUse).toBe(3);
  });
});

describe("SparkRing", () => {
  it("keeps the newest points in order and ignores old ones", () => {
    const r = new SparkRing(3);
    r.reset({ t: [1, 2, 3, 4], inUse: [10, 20, 30, 40], waiters: [0, 0, 1, 2] });
    expect(r.length).toBe(3);
    expect([0, 1, 2].map((i) => r.inUse[r.at(i)])).toEqual([20, 30, 40]);
    expect(r.push(4, 1, 1)).toBe(false);
    expect(r.push(5, 50, 0)).toBe(true);
    expect([0, 1, 2].map((i) => r.t[r.at(i)])).toEqual([3, 4, 5]);
    expect(r.lastT).toBe(5);
  });
});

function snapshot(over: Partial<UiSnapshot> = {}): UiSnapshot {
  return {
    serverTime: T,
    deltaSeq: 7,
    state: {
      hub: { version: "0.1.0", startedAt: T - 1000, rejected: 0 },
      agents: [
        { agentId: "checkout-web-1", service: "checkout", instance: "web-1", connected: true, lastSeen: T },
        { agentId: "checkout-web-2", service: "checkout", instance: "web-2", connected: true, lastSeen: T },
      ],
      semaphores: [sem("checkout", "web-1", "db", { inUse: 4, t: T }), sem("checkout", "web-2", "db", { inUse: 2, t: T })],
      alerts: [],
    },
    alertLog: [alert({ id: "old", raisedAt: T - 5000, resolvedAt: T - 1000 })],
    fleet: [],
    thresholds: DEFAULT_THRESHOLDS,
    sparklines: { "checkout/web-1/db": { t: [T - 2000, T - 1000], inUse: [1, 2], waiters: [0, 0] } },
    limits: { deltaIntervalMs: 250, sparklinePoints: 60 },
    ...over,
  };
}

describe("DashboardStore", () => {
  it("applies a snapshot: items, sparklines, alerts, seq", () => {
    const s = new DashboardStore();
    s.applySnapshot(snapshot());
    expect(s.lastSeq).toBe(7);
    expect(s.itemList().map((i) => i.key)).toEqual(["checkout/web-1/db", "checkout/web-2/db"]);
    expect(s.sparks.get("checkout/web-1/db")?.length).toBe(3);
    expect(s.sparks.get("checkout/web-2/db")?.length).toBe(1);
    expect(s.alertList().map((a) => a.id)).toEqual(["old"]);
  });

  it("keeps the hub's admission from the snapshot, and from a delta that carries it, telling the connection channel", () => {
    const s = new DashboardStore();
    s.applySnapshot(snapshot());
    expect(s.admission).toBeUndefined();
    const limits = { maxAgents: 2000, maxAgentsPerAddress: 1000, maxSemaphores: 20_000, maxSemaphoresPerAddress: 10_000 };
    const admission = { agents: 3, semaphores: 30, limits, refused: { agents: 1, semaphores: 2, identity: 0 }, evictedAgents: 0 };
    let told = 0;
    s.subscribe("connection", () => told++);
    s.applyDelta({ seq: 8, serverTime: T + 1000, rejected: 3, admission });
    expect(s.admission).toEqual(admission);
    expect(told).toBe(1);
    // A delta without it leaves it as it was.
    s.applyDelta({ seq: 9, serverTime: T + 2000, rejected: 3 });
    expect(s.admission).toEqual(admission);
  });

  it("applies deltas per channel and tells per-key listeners", () => {
    const s = new DashboardStore();
    s.applySnapshot(snapshot());
    const seen: number[] = [];
    let alertsNotified = 0;
    s.onSemaphore("checkout/web-1/db", (x) => seen.push(x.inUse));
    s.subscribe("alerts", () => alertsNotified++);
    const list = s.itemList();
    const d: UiDelta = { seq: 8, serverTime: T + 1000, rejected: 0, semaphores: [sem("checkout", "web-1", "db", { inUse: 7, t: T + 1000 }, "saturated")] };
    s.applyDelta(d);
    expect(seen).toEqual([7]);
    expect(alertsNotified).toBe(0);
    expect(s.itemList()).not.toBe(list);
    expect(s.item("checkout/web-1/db")?.status).toBe("saturated");
    expect(s.item("checkout/web-2/db")).toBe(list[1]);
    expect(s.sparks.get("checkout/web-1/db")?.lastT).toBe(T + 1000);

    s.applyDelta({ seq: 9, serverTime: T + 2000, rejected: 1, alerts: [{ kind: "raised", alert: alert({ id: "new", raisedAt: T + 1500 }) }], removed: ["checkout/web-2/db"] });
    expect(alertsNotified).toBe(1);
    expect(s.alertList().map((a) => a.id)).toEqual(["new", "old"]);
    expect(s.semaphoreCount).toBe(1);
    expect(s.sparks.has("checkout/web-2/db")).toBe(false);
  });

  it("keeps a semaphore's config across deltas that do not repeat it, and takes a new one", () => {
    const config = { kind: "pg-pool", queue: "fifo", maxWaiters: 50, acquireTimeoutMs: 2000, leaseTimeoutMs: null, leakThresholdMs: 30_000, scope: "process" } as const;
    const s = new DashboardStore();
    s.applySnapshot(snapshot({ state: { ...snapshot().state, semaphores: [sem("checkout", "web-1", "db", { inUse: 4, t: T, config })] } }));
    expect(s.semaphore("checkout/web-1/db")?.config).toEqual(config);
    s.applyDelta({ seq: 8, serverTime: T + 1000, rejected: 0, semaphores: [sem("checkout", "web-1", "db", { inUse: 5, t: T + 1000 })] });
    expect(s.semaphore("checkout/web-1/db")).toMatchObject({ inUse: 5, config });
    const changed = { ...config, queue: "lifo", acquireTimeoutMs: null } as const;
    s.applyDelta({ seq: 9, serverTime: T + 2000, rejected: 0, semaphores: [sem("checkout", "web-1", "db", { inUse: 6, t: T + 2000, config: changed })] });
    expect(s.semaphore("checkout/web-1/db")?.config).toEqual(changed);
    // Unregistered but still reported: `unconfigured` takes the config back, and its listeners hear it.
    const heard: unknown[] = [];
    s.onSemaphore("checkout/web-1/db", (x) => heard.push(x.config));
    s.applyDelta({ seq: 10, serverTime: T + 3000, rejected: 0, semaphores: [sem("checkout", "web-1", "db", { inUse: 7, t: T + 3000 })], unconfigured: ["checkout/web-1/db"] });
    expect(s.semaphore("checkout/web-1/db")).toMatchObject({ inUse: 7 });
    expect(s.semaphore("checkout/web-1/db")?.config).toBeUndefined();
    expect(heard).toEqual([undefined]);
  });

  it("rebuilds a semaphore from a delta's patch, and says when a patch names one it never had", () => {
    const s = new DashboardStore();
    s.applySnapshot(snapshot());
    const before = s.semaphore("checkout/web-1/db")!;
    const last = { ...before.last!, inUse: 9, available: 1, waiters: 4 };
    // What the hub sends for a known semaphore: no identity, no gauge the sample repeats.
    expect(s.applyDelta({ seq: 8, serverTime: T + 1000, rejected: 0, semaphores: [{ key: before.key, status: "convoy", t: T + 1000, last }] })).toBe(true);
    expect(s.semaphore(before.key)).toEqual({ ...before, inUse: 9, available: 1, waiters: 4, status: "convoy", t: T + 1000, last });
    expect(s.item(before.key)?.status).toBe("convoy");
    expect(s.sparks.get(before.key)?.lastT).toBe(T + 1000);

    const stranger = { key: "checkout/web-9/db", status: "ok" as const, t: T + 2000, last };
    expect(s.applyDelta({ seq: 9, serverTime: T + 2000, rejected: 0, semaphores: [stranger] })).toBe(false);
    expect(s.semaphore(stranger.key)).toBeUndefined();
  });

  it("keeps the fleet from a snapshot and applies a delta's changed and removed entries by key", () => {
    const entry = (name: string, inUse: number) => ({
      key: `checkout/${name}`,
      service: "checkout",
      name,
      scope: "process" as const,
      instances: 2,
      cap: 20,
      budget: null,
      overBudget: false,
      inUse,
      waiters: 0,
      waitMs: { count: 1, p50: 1, p90: 1, p99: 1, max: 1 },
      holdMs: { count: 1, p50: 1, p90: 1, p99: 1, max: 1 },
    });
    const s = new DashboardStore();
    s.applySnapshot(snapshot({ fleet: [entry("cache", 1), entry("db", 2)] }));
    let notified = 0;
    s.subscribe("fleet", () => notified++);
    s.applyDelta({ seq: 8, serverTime: T, rejected: 0, fleet: [entry("db", 9)] });
    expect(notified).toBe(1);
    expect(s.fleet.map((f) => [f.key, f.inUse])).toEqual([
      ["checkout/cache", 1],
      ["checkout/db", 9],
    ]);
    expect(s.fleetEntry("checkout", "db")?.inUse).toBe(9);
    // A new group takes its place in key order; a removed one goes.
    s.applyDelta({ seq: 9, serverTime: T, rejected: 0, fleet: [entry("auth", 4)], removedFleet: ["checkout/cache"] });
    expect(s.fleet.map((f) => f.key)).toEqual(["checkout/auth", "checkout/db"]);
    expect(s.fleetEntry("checkout", "cache")).toBeUndefined();
    // A delta without a fleet part leaves it (and its listeners) alone.
    const before = s.fleet;
    s.applyDelta({ seq: 10, serverTime: T, rejected: 0, semaphores: [sem("checkout", "web-1", "db", { inUse: 1, t: T + 1000 })] });
    expect(s.fleet).toBe(before);
    expect(notified).toBe(2);
  });

  it("marks a disconnected agent's semaphores stale", () => {
    const s = new DashboardStore();
    s.applySnapshot(snapshot());
    s.applyDelta({ seq: 8, serverTime: T, rejected: 0, agents: [{ agentId: "checkout-web-2", service: "checkout", instance: "web-2", connected: false, lastSeen: T }] });
    expect(s.item("checkout/web-2/db")?.status).toBe("stale");
    expect(s.item("checkout/web-1/db")?.status).toBe("ok");
  });
});

describe("SeriesBuffer.merge", () => {
  it("replaces the still-open minute and appends newer rows", () => {
    const b = new SeriesBuffer(["inUse"] as const, 60_000);
    b.load({ tier: "1m", length: 2, partialLast: true, t: [T, T + 60_000], inUse: [1, 2] }, 60_000);
    expect(b.merge({ tier: "1m", length: 3, partialLast: true, t: [T, T + 60_000, T + 120_000], inUse: [9, 3, 4] })).toBe(2);
    expect(b.data.inUse).toEqual([1, 3, 4]);
    expect(b.latestT).toBe(T + 120_000);
    expect(b.merge({ tier: "1m", length: 0, partialLast: false, t: [] })).toBe(0);
  });
});
