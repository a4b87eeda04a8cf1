// One hostile agent within the per-connection message rate limit must not starve the hub's event
// loop for everyone else: while it sends the most expensive valid batches as fast as it is
// allowed, real agents' acks stay fast and none of their batches is lost.
//
// What is timed is the steady flood: from the hostile agent's first ack, i.e. once the hub has
// created its 1,000 semaphores (~30 MB of history rings, a one-off cost any agent that size pays
// once; those acks are logged, not bounded). On a shared 2-core machine other processes also
// stall everyone now and then, hub or not: a canary in this (idle) process records when it could
// not run, and an ack whose flight overlaps such a moment says nothing about the hub and is set
// aside. The rest must meet p99 < 50 ms; when the canary itself was held up for over 50 ms at a
// time, the machine is too busy for that bound to mean anything and p99 < 250 ms is checked
// instead (before the fix: p50 ~400 ms, p99 1.2–2.1 s).
import { afterEach, describe, expect, it } from "vitest";
import type { AckRecord } from "./fixtures/messages.js";
import { cleanupAll, forkFixture, getJson, percentile, startHubChild, startService, until } from "./harness.js";

afterEach(cleanupAll);

const INTERVAL_MS = 200;
/** Long enough for ~100 of the real agent's acks, so p99 is not simply the slowest one. */
const FLOOD_MS = 20_000;
/** A canary tick this much later than due means the machine, not the hub, held things up. */
const STALL_MS = 15;

/** Records the moments this process could not run (gaps between 2 ms ticks). */
function canary() {
  const stalls: [number, number][] = [];
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - last > STALL_MS) stalls.push([last, now]);
    last = now;
  }, 2);
  return {
    stalls,
    stop: () => clearInterval(timer),
    /** Did the ack's flight (sent → acked) overlap a stall? */
    excuses: (a: AckRecord) => stalls.some(([from, to]) => a.at - a.ms <= to && a.at >= from),
  };
}

describe("a hostile agent flooding within the rate limit", () => {
  it("leaves real agents' ack p99 under 50 ms, and their streams whole", async () => {
    // Room for every semaphore's history: past maxHistories (default 1,000, which the hostile
    // agent's 1,000 alone fill) the history store's LRU evicts and rebuilds a history per sample,
    // a cost of its own (~20×), not the scheduling measured here.
    const hub = await startHubChild({ maxHistories: 2000 });
    // Two real agents, for ~200 acks under the flood: a p99 that is not just the slowest one or two.
    const agents = await Promise.all(
      ["f1", "f2"].map((instance) => startService({ url: hub.url, service: "fair", instance, intervalMs: INTERVAL_MS, scenarios: ["steady:10"] })),
    );
    const probeEach = () => Promise.all(agents.map(async (svc) => (await svc.ask({ cmd: "probe" }, "probe")).acks));
    const probe = async () => (await probeEach()).flat();
    const quietCanary = canary();
    const quietFrom = Date.now();
    await until(async () => (await probe()).filter((a) => a.at > quietFrom).length >= 30, "30 acks without the flood", 20_000, 100);
    const quietTo = Date.now();
    quietCanary.stop();

    const flood = forkFixture("flood.ts", { HUB_URL: hub.url, DURATION_MS: String(FLOOD_MS) });
    const ready = await flood.next("flood:ready");
    const floodCanary = canary();
    const warmFrom = Date.now();
    const floodFrom = (await flood.next("flood:first", 30_000)).at;
    const done = await flood.next("flood:done", FLOOD_MS + 60_000);
    const floodTo = Date.now();
    floodCanary.stop();
    const stats = await getJson<{ accepted: number; rateLimited: number; rejected: number }>(hub.url, "/api/stats");
    const each = await probeEach();
    const acks = each.flat();

    const window = (from: number, to: number) => acks.filter((a) => a.at > from && a.at <= to);
    const ms = (v: AckRecord[]) => v.map((a) => a.ms);
    const quiet = window(quietFrom, quietTo);
    const warm = window(warmFrom, floodFrom);
    const flooded = window(floodFrom, floodTo);
    const fair = flooded.filter((a) => !floodCanary.excuses(a));
    const fmt = (v: number[]) => `p50 ${percentile(v, 50).toFixed(1)} / p99 ${percentile(v, 99).toFixed(1)} / max ${Math.max(...v).toFixed(1)} ms over ${v.length}`;
    const seconds = (floodTo - warmFrom) / 1000;
    console.log(
      `fairness: real agents' acks ${fmt(ms(quiet))} quiet; ${fmt(ms(warm))} while the hostile's semaphores were created; ` +
        `under the flood ${fmt(ms(flooded))} all, ${fmt(ms(fair))} ` +
        `outside ${floodCanary.stalls.length} machine stalls (longest ${Math.max(0, ...floodCanary.stalls.filter(([, to]) => to > floodFrom).map(([from, to]) => to - from))} ms); ` +
        `hostile (${ready.bytes} B, ${ready.items} items a batch) sent ${done.sent}, ok ${done.ok}, refused ${done.refused} ${JSON.stringify(done.reasons)}, ` +
        `errors ${done.errors}: ${((done.ok * ready.items) / seconds).toFixed(0)} items/s stored over ${seconds.toFixed(1)} s; hub rateLimited ${stats.rateLimited}; ` +
        `slow acks (ms into the flood: latency${"" /* x: excused */}) ${flooded.filter((a) => a.ms > 30).map((a) => `${a.at - floodFrom}:${a.ms.toFixed(0)}${floodCanary.excuses(a) ? "x" : ""}`).join(" ")}`,
    );

    // The real agents lost nothing: every batch acked ok, each one's seqs contiguous.
    for (const list of each) {
      expect(list.every((a) => a.ok)).toBe(true);
      const seqs = list.map((a) => a.seq).sort((a, b) => a - b);
      expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
    }
    expect(flooded.length).toBeGreaterThanOrEqual(Math.floor((FLOOD_MS / INTERVAL_MS) * 0.8 * agents.length));
    // Most acks are not slowed at all, stalls or not (before the fix: p50 ~400 ms).
    expect(percentile(ms(flooded), 50)).toBeLessThan(percentile(ms(quiet), 50) + 10);
    // The bound, on the acks the machine did not hold up; and those must be most of them.
    expect(fair.length).toBeGreaterThanOrEqual(flooded.length / 2);
    expect(percentile(ms(fair), 90)).toBeLessThan(50);
    const longestStall = Math.max(0, ...floodCanary.stalls.filter(([, to]) => to > floodFrom).map(([from, to]) => to - from));
    expect(percentile(ms(fair), 99)).toBeLessThan(longestStall > 50 ? 250 : 50);
    // The hostile agent was served, not refused: it stayed within every limit it was told about.
    expect(done.ok).toBeGreaterThan(0);
    expect(done.errors).toBe(0);
    expect(done.refused).toBe(0);
  }, 120_000);
});
