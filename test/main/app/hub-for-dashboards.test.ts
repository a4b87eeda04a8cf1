// What the app's hub gives dashboards beyond the wire protocol: hub.setThresholds (recorded,
// pushed to every open dashboard), each semaphore's registered config, and samples without
// histograms. A real hub, real agents and real /ui socket.io clients.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_THRESHOLDS } from "../../../shared/alerts/index.js";
import type { UiDelta } from "../../../shared/ui-protocol/index.js";
import { agent, cleanupAll, dashboard, info, onCleanup, request, sample, startHub, T0, waitUntil } from "../hub/helpers.js";

afterEach(cleanupAll);

function tempFile(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), "semscope-dash-"));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, name);
}

const recorded = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { k: string; p?: unknown });

describe("hub.setThresholds", () => {
  it("pushes the new thresholds to every open dashboard and records the change", async () => {
    const file = tempFile("rec.ndjson");
    const hub = await startHub({ record: file });
    const one = await dashboard(hub.url);
    const two = await dashboard(hub.url);
    expect(one.snapshot.thresholds.convoy.windowMs).toBe(DEFAULT_THRESHOLDS.convoy.windowMs);

    const next = hub.setThresholds({ convoy: { windowMs: 9000 }, timeouts: { ratio: 0.3 } });
    expect(next.convoy.windowMs).toBe(9000);
    expect(hub.engine.thresholds.timeouts.ratio).toBe(0.3);

    const pushed = (deltas: UiDelta[]) => deltas.find((d) => d.thresholds !== undefined)?.thresholds;
    await waitUntil(() => pushed(one.deltas) !== undefined && pushed(two.deltas) !== undefined, "a thresholds delta on both dashboards");
    for (const d of [one.deltas, two.deltas]) expect(pushed(d)).toMatchObject({ convoy: { windowMs: 9000 }, timeouts: { ratio: 0.3 } });
    // A dashboard that connects afterwards gets them in its snapshot.
    expect((await dashboard(hub.url)).snapshot.thresholds.convoy.windowMs).toBe(9000);

    await hub.close();
    const lines = recorded(file);
    expect(lines.filter((l) => l.k === "thresholds")).toEqual([{ r: expect.any(Number), k: "thresholds", p: { convoy: { windowMs: 9000 }, timeouts: { ratio: 0.3 } } }]);
  });

  it("refuses a bad patch with the engine's reason, changing and recording nothing", async () => {
    const file = tempFile("rec.ndjson");
    const hub = await startHub({ record: file });
    expect(() => hub.setThresholds({ timeouts: { ratio: 5 } })).toThrow(RangeError);
    expect(() => hub.setThresholds({ leak: {} } as never)).toThrow(/unknown rule group "leak"/);
    expect(hub.engine.thresholds).toEqual(DEFAULT_THRESHOLDS);
    await hub.close();
    expect(recorded(file).some((l) => l.k === "thresholds")).toBe(false);
  });
});

describe("/ui semaphore entries", () => {
  it("carry the registered config in the snapshot, and in a delta once per (re)registration", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [
      info("db", { queue: "lifo", maxWaiters: 50, acquireTimeoutMs: 250, leaseTimeoutMs: 20_000, leakThresholdMs: 10_000, scope: "global", budget: 30 }),
      info("cache"),
    ]);
    await request(a, "samples", { seq: 0, t: T0, intervalMs: 1000, items: [sample("db"), sample("cache"), sample("stray")] });
    const { socket: _ui, snapshot, deltas } = await dashboard(hub.url);
    const byKey = new Map(snapshot.state.semaphores.map((s) => [s.key, s]));
    expect(byKey.get("checkout/web-1/db")?.config).toEqual({
      kind: "semaphore",
      queue: "lifo",
      maxWaiters: 50,
      acquireTimeoutMs: 250,
      leaseTimeoutMs: 20_000,
      leakThresholdMs: 10_000,
      scope: "global",
      budget: 30,
    });
    expect(byKey.get("checkout/web-1/cache")?.config).toEqual({
      kind: "semaphore",
      queue: "fifo",
      maxWaiters: null,
      acquireTimeoutMs: null,
      leaseTimeoutMs: null,
      leakThresholdMs: null,
      scope: "process",
    });
    // Seen in samples only: nothing was registered, so no config is made up.
    expect(byKey.get("checkout/web-1/stray")?.config).toBeUndefined();

    // The first delta to mention a semaphore gives its config once; later samples do not repeat it.
    await request(a, "samples", { seq: 1, t: T0 + 1000, intervalMs: 1000, items: [sample("db", { inUse: 3 })] });
    await waitUntil(() => deltas.some((d) => d.semaphores?.some((s) => s.key === "checkout/web-1/db" && s.last?.inUse === 3)), "a delta with the sample");
    await request(a, "samples", { seq: 2, t: T0 + 2000, intervalMs: 1000, items: [sample("db", { inUse: 4 })] });
    await waitUntil(() => deltas.some((d) => d.semaphores?.some((s) => s.key === "checkout/web-1/db" && s.last?.inUse === 4)), "a delta with the next sample");
    const entries = () => deltas.flatMap((d) => d.semaphores ?? []).filter((s) => s.key === "checkout/web-1/db");
    expect(entries().filter((s) => s.config !== undefined).length).toBeLessThanOrEqual(1);
    expect(entries().at(-1)?.config).toBeUndefined();
    // Nor its identity (the snapshot had it), nor the gauges its sample repeats.
    expect(Object.keys(entries().at(-1)!).sort()).toEqual(["key", "last", "status", "t"]);

    // A register that changes it: the next delta carries the new config.
    await request(a, "register", { semaphores: [info("db", { queue: "fifo", acquireTimeoutMs: 1000 }), info("cache")] });
    await waitUntil(() => entries().some((s) => s.config?.acquireTimeoutMs === 1000), "a delta with the new config");
    expect(entries().find((s) => s.config?.acquireTimeoutMs === 1000)?.config).toMatchObject({ queue: "fifo", scope: "process", leaseTimeoutMs: null });
  });

  it("carry percentiles without histograms, in snapshots, deltas and fleet entries", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [info("db")]);
    await request(a, "samples", { seq: 0, t: T0, intervalMs: 1000, items: [sample("db")] });
    const { snapshot, deltas } = await dashboard(hub.url);
    // In use moves (2 → 3), so the fleet entry changes too: a delta carries only changed entries.
    await request(a, "samples", { seq: 1, t: T0 + 1000, intervalMs: 1000, items: [sample("db", { inUse: 3 })] });
    await waitUntil(() => deltas.some((d) => d.semaphores !== undefined && d.fleet !== undefined), "a delta with the sample");
    const delta = deltas.find((d) => d.semaphores !== undefined && d.fleet !== undefined)!;
    for (const s of [snapshot.state.semaphores[0], delta.semaphores![0]]) {
      expect(s.last?.waitMs).toEqual({ count: expect.any(Number), p50: expect.any(Number), p90: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) });
      expect(s.last?.holdMs).not.toHaveProperty("hist");
    }
    for (const f of [snapshot.fleet[0], delta.fleet![0]]) {
      expect(f.waitMs).not.toHaveProperty("hist");
      expect(f.holdMs.p99).toBeGreaterThan(0);
    }
    // The hub itself keeps the histograms (/api/state, the alert rules, the fleet merge).
    const full = hub.state().semaphores[0].last!;
    expect(full.waitMs.hist).toBeDefined();
    // Dashboards get its percentiles to 4 significant digits (bucket estimates, good to ~9 %).
    const ui = delta.semaphores![0].last!;
    for (const q of ["p50", "p90", "p99", "max"] as const) {
      expect(ui.holdMs[q]).toBeCloseTo(full.holdMs[q], 1);
      expect(Math.abs(ui.holdMs[q] - full.holdMs[q])).toBeLessThanOrEqual(full.holdMs[q] * 5e-4);
      expect(JSON.stringify(ui.holdMs[q]).replace(".", "").replace(/^0+/, "").length).toBeLessThanOrEqual(4);
    }
  });
});
