// One hostile agent within every limit (the most expensive valid samples batch, as fast as its
// message rate allows) against real agents: what the protocol promises them holds. Every batch of
// theirs is acknowledged, ok, and their streams arrive whole and in order; the flood is what the
// hub throttles (its work budget), never the honest agents, and the hostile agent, being within
// every limit it was told about, is slowed but not refused. How fast the real agents' acks come
// back meanwhile is a speed, measured by bench:hub's fairness case (target p99 ≤ 50 ms), not here.
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_AGENT_BUDGET } from "../../../main/hub/options.js";
import { cleanupAll, forkFixture, getJson, startHubChild, startService, until } from "./harness.js";

afterEach(cleanupAll);

const INTERVAL_MS = 200;
const FLOOD_MS = 10_000;
/** The flood keeps this many batches in flight (fixtures/flood.ts IN_FLIGHT). */
const IN_FLIGHT = 4;

describe("a hostile agent flooding within the rate limit", () => {
  it("is throttled, while the real agents' streams are acknowledged whole and in order", async () => {
    const hub = await startHubChild();
    const agents = await Promise.all(
      ["f1", "f2"].map((instance) => startService({ url: hub.url, service: "fair", instance, intervalMs: INTERVAL_MS, scenarios: ["steady:10"] })),
    );
    const probeEach = () => Promise.all(agents.map(async (svc) => (await svc.ask({ cmd: "probe" }, "probe")).acks));
    await until(async () => (await probeEach()).every((acks) => acks.length >= 5), "both agents streaming", 20_000, 100);

    const floodStart = Date.now();
    const flood = forkFixture("flood.ts", { HUB_URL: hub.url, DURATION_MS: String(FLOOD_MS) });
    const ready = await flood.next("flood:ready");
    const first = await flood.next("flood:first", 60_000);
    const done = await flood.next("flood:done", FLOOD_MS + 60_000);
    const floodEnd = Date.now();
    // And they go on after it: a couple more acks each.
    const ackedByFloodEnd = await Promise.all(agents.map(async (svc) => (await svc.ask({ cmd: "probe" }, "probe")).acks.filter((a) => a.at > first.at).length));
    await until(
      async () => (await probeEach()).every((acks, i) => acks.filter((a) => a.at > first.at).length >= ackedByFloodEnd[i] + 2),
      "the real agents' streams after the flood",
      20_000,
      100,
    );
    const each = await probeEach();
    const stats = await getJson<{ rateLimited: number }>(hub.url, "/api/stats");
    const seconds = (floodEnd - floodStart) / 1000;
    console.log(
      `fairness: hostile (${ready.bytes} B, ${ready.items} items a batch) sent ${done.sent}, ok ${done.ok}, refused ${done.refused}, errors ${done.errors} ` +
        `over ${seconds.toFixed(1)} s (${((done.ok * ready.items) / seconds).toFixed(0)} items/s stored); real agents acked ${each.map((l) => l.length).join(", ")} batches`,
    );

    // The real agents lost nothing: every batch acked ok, each one's seqs contiguous from its first.
    for (const list of each) {
      expect(list.every((a) => a.ok)).toBe(true);
      const seqs = list.map((a) => a.seq).sort((a, b) => a - b);
      expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
      // They kept streaming through the flood (a liveness bound: a quarter of their intervals).
      expect(list.filter((a) => a.at > first.at && a.at <= floodEnd).length).toBeGreaterThan((floodEnd - first.at) / INTERVAL_MS / 4);
    }
    expect(stats.rateLimited).toBe(0);
    // The flood was served, never refused: within every limit it was told about, it is slowed.
    expect(done.ok).toBeGreaterThan(0);
    expect(done.errors).toBe(0);
    expect(done.refused).toBe(0);
    // ...and slowed it was: no more items stored than its work budget allows over the whole run
    // (the burst, the rate, and what it had in flight when the budget ran out).
    const units = done.ok * (ready.items + 1);
    expect(units).toBeLessThanOrEqual(DEFAULT_AGENT_BUDGET.burst + DEFAULT_AGENT_BUDGET.itemsPerSecond * seconds + IN_FLIGHT * (ready.items + 1));
  }, 120_000);
});
