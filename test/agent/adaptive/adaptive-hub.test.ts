// An adaptive cap's changes reach a real hub on the sample's `limit` block, and /api/state shows
// the latest one with its reason; a hub that predates the block drops it and keeps the sample.
import { afterEach, describe, expect, it } from "vitest";
import { connect, Semaphore } from "../../../agent/src/index.js";
import { parsePayload, samplesBatchSchema, type ApiHubState } from "../../../shared/protocol/index.js";
import { cleanupAll, getJson, onCleanup, sample, startHub, waitUntil } from "../../main/hub/helpers.js";

afterEach(cleanupAll);

describe("adaptive cap on the hub", () => {
  it("shows the latest limit change and its reason in /api/state", async () => {
    const hub = await startHub();
    const agent = connect({ url: hub.url, service: "adaptive", instance: "a-1", intervalMs: 50 });
    onCleanup(() => agent.close());
    const sem = new Semaphore({ name: "downstream", permits: { adaptive: { min: 1, max: 16, initial: 2 } } });
    onCleanup(() => sem.close());
    let on = true;
    onCleanup(() => (on = false));
    const loop = async (): Promise<void> => {
      while (on) await sem.use(() => new Promise<void>((r) => setTimeout(r, 3)));
    };
    for (let i = 0; i < 20; i++) void loop().catch(() => undefined);

    let seen: { cap: number; reason?: string; limit?: number } | undefined;
    await waitUntil(async () => {
      const { body } = await getJson<ApiHubState>(hub, "/api/state");
      const s = body.semaphores.find((x) => x.name === "downstream");
      const limit = s?.last?.limit;
      // Past the first re-measurement of the baseline (a dip to cap 1), the limit probes up.
      if (s?.last == null || limit === undefined || limit.from === undefined || limit.limit <= 2) return false;
      seen = { cap: s.last.cap, reason: limit.reason, limit: limit.limit };
      return true;
    }, "a limit change in /api/state", 10_000);
    expect(seen?.reason).toMatch(/latency .* at in-flight \d+/);
    expect(seen?.limit).toBeGreaterThan(2);
  });

  it("keeps each change with its reason and serves them in history windows: the cut when latency rose, and the probes before it", async () => {
    const hub = await startHub();
    const agent = connect({ url: hub.url, service: "adaptive", instance: "a-2", intervalMs: 50 });
    onCleanup(() => agent.close());
    const sem = new Semaphore({ name: "slowing", permits: { adaptive: { min: 2, max: 40, initial: 8 } } });
    onCleanup(() => sem.close());
    let on = true;
    let holdMs = 3;
    onCleanup(() => (on = false));
    const loop = async (): Promise<void> => {
      while (on) await sem.use(() => new Promise<void>((r) => setTimeout(r, holdMs)));
    };
    for (let i = 0; i < 40; i++) void loop().catch(() => undefined);
    const key = "adaptive/a-2/slowing";
    type Win = { window: { t: number[]; limitChanges?: { t: number; from?: number; limit: number; reason: string }[] } };
    const changes = async () => (await getJson<Win>(hub, `/api/history?key=${encodeURIComponent(key)}`)).body.window?.limitChanges ?? [];
    await waitUntil(async () => (await changes()).some((c) => c.reason.includes("probing up")), "a probe up in the window", 10_000);
    // The downstream slows ten-fold: the limit is cut, and the cut is kept with its reason.
    holdMs = 30;
    // (A window whose latency rose a little may still raise the limit by its queue allowance: the cut is one that lowered it.)
    const isCut = (c: { from?: number; limit: number; reason: string }) => c.reason.startsWith("latency rose") && c.limit < (c.from ?? 0);
    await waitUntil(async () => (await changes()).some(isCut), "the cut in the window", 15_000);
    const all = await changes();
    const cut = all.find(isCut) as (typeof all)[number];
    expect(cut.reason).toMatch(/^latency rose from [\d.]+ ms to [\d.]+ ms at in-flight \d+$/);
    // Oldest first, one entry per change, none before the semaphore's first ("initial limit" is not a change).
    expect(all.map((c) => c.t)).toEqual([...all.map((c) => c.t)].sort((a, b) => a - b));
    expect(new Set(all.map((c) => c.t)).size).toBe(all.length);
    expect(all.every((c) => c.from !== undefined)).toBe(true);
    // A window that ends before the cut does not list it.
    const before = await getJson<Win>(hub, `/api/history?key=${encodeURIComponent(key)}&to=${cut.t - 1}&from=${cut.t - 60_000}`);
    expect((before.body.window.limitChanges ?? []).some((c) => c.t === cut.t)).toBe(false);
  });

  it("gets every change to the hub with its reason, however many one sample interval holds", async () => {
    const hub = await startHub();
    // One sample a second; the limit may change every tenth of one.
    const agent = connect({ url: hub.url, service: "adaptive", instance: "a-3", intervalMs: 1000 });
    onCleanup(() => agent.close());
    const sem = new Semaphore({ name: "busy", permits: { adaptive: { min: 2, max: 60, initial: 4 } } });
    onCleanup(() => sem.close());
    let on = true;
    onCleanup(() => (on = false));
    const loop = async (): Promise<void> => {
      while (on) await sem.use(() => new Promise<void>((r) => setTimeout(r, 2)));
    };
    for (let i = 0; i < 80; i++) void loop().catch(() => undefined);
    const key = "adaptive/a-3/busy";
    type Win = { window: { t: number[]; limitChanges?: { t: number; from?: number; limit: number; reason: string }[] } };
    // No window (404) until the first sample.
    const read = async () => (await getJson<Win>(hub, `/api/history?key=${encodeURIComponent(key)}`)).body.window ?? { t: [] };
    let win: Win["window"] | undefined;
    await waitUntil(async () => {
      win = await read();
      return (win.limitChanges?.length ?? 0) >= 2 * Math.max(2, win.t.length);
    }, "more changes than samples at the hub", 15_000);
    const changes = win?.limitChanges ?? [];
    // None lost: each change starts where the one before it ended.
    for (let i = 1; i < changes.length; i++) expect(changes[i].from, JSON.stringify(changes.slice(i - 1, i + 1))).toBe(changes[i - 1].limit);
    // Each reason names the latency it read (a rise, a flat one, a re-measured baseline).
    expect(changes.every((c) => /latency\b.*\d/.test(c.reason)), JSON.stringify(changes.map((c) => c.reason))).toBe(true);
  });

  it("a sample block the hub does not know is dropped, not a refused batch", () => {
    const future = { ...sample("s"), limitV9: { anything: 1 } };
    const r = parsePayload(samplesBatchSchema, { seq: 1, t: 1, intervalMs: 1000, items: [future] });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.items[0]).not.toHaveProperty("limitV9");
  });
});
