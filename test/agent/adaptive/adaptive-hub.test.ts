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

  it("a sample block the hub does not know is dropped, not a refused batch", () => {
    const future = { ...sample("s"), limitV9: { anything: 1 } };
    const r = parsePayload(samplesBatchSchema, { seq: 1, t: 1, intervalMs: 1000, items: [future] });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.items[0]).not.toHaveProperty("limitV9");
  });
});
