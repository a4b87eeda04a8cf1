// Prometheus scrapes of a hub at its design scale (issue 28, item 2): 10,000 semaphores, about
// 25 MB of exposition, read by four scrapers back to back while an honest agent (the real agent,
// in its own process) streams, two of them taking gzip as Prometheus does, two plain text. What
// the hub promises while it is scraped: the honest agent's batches all acknowledged, in order,
// and still coming; /healthz answering within a health checker's timeout; and every scraper
// getting the whole exposition, each family once.
import { get } from "node:http";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { HISTORY_FULL_BYTES } from "../../../shared/history/index.js";
import { cleanupAll, startHubChild, startService, until } from "../stream/harness.js";
import { expectAckedInOrder, ids, rawAgent } from "./harness.js";

afterEach(cleanupAll);

const SEMAPHORES = 10_000;
const PER_AGENT = 1000;
/** The load's address; the honest agent connects from 127.0.0.1. */
const LOAD = "127.0.0.2";
const SCRAPERS = 4;
const SCRAPE_FOR_MS = 12_000;
const INTERVAL_MS = 250;
/** A health checker's timeout (Kubernetes' default is 1 s): a hub held longer reads as down. */
const HEALTHZ_TIMEOUT_MS = 2000;
const gunzipped = promisify(gunzip);

/** Asks /healthz every 250 ms until stopped; gives every answer that failed or came too late. */
function probeHealth(url: string): () => Promise<string[]> {
  let running = true;
  const failed: string[] = [];
  const loop = (async () => {
    while (running) {
      const at = new Date().toISOString();
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTHZ_TIMEOUT_MS) });
        if (res.status !== 200) failed.push(`${at}: HTTP ${res.status}`);
        await res.text();
      } catch (err) {
        failed.push(`${at}: ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return failed;
  };
}

/**
 * GET `url` on a connection of its own: a kept-alive one can be closed by the hub's idle timer,
 * which starts once the last body is handed to the kernel, while the client still reads it.
 */
function scrape(url: string, acceptEncoding: string): Promise<{ status: number | undefined; encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { "accept-encoding": acceptEncoding } }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (b: Buffer) => parts.push(b));
      res.on("end", () => resolve({ status: res.statusCode, encoding: res.headers["content-encoding"], body: Buffer.concat(parts) }));
      res.on("error", reject);
    }).on("error", reject);
  });
}

describe("/metrics at 10,000 semaphores", () => {
  it("four scrapers back to back: each gets the whole exposition while the honest agent's batches are all acked in order and /healthz answers", async () => {
    const room = SEMAPHORES + 100;
    const hub = await startHubChild({ maxHistories: room, maxHistoryBytes: room * HISTORY_FULL_BYTES, agentAddressBudget: { itemsPerSecond: 1_000_000, burst: 1_000_000 } });
    for (let a = 0; a < SEMAPHORES / PER_AGENT; a++) {
      const agent = await rawAgent(hub.url, { from: LOAD });
      const list = ids(`s${a}`, PER_AGENT);
      expect((await agent.hello(`load-${a}`, { service: `svc-${a % 3}`, instance: `i-${a}` })).ok).toBe(true);
      expect((await agent.register(list)).ok).toBe(true);
      for (let seq = 0; seq < 2; seq++) expect((await agent.samples(seq, list)).ok).toBe(true);
    }
    const service = await startService({ url: hub.url, service: "honest", instance: "h-1", intervalMs: INTERVAL_MS, scenarios: ["steady:5"], notifyAcks: true });
    const acksAt = () => service.messages.flatMap((m) => (m.type === "ack" ? [m.ack.at] : []));
    await until(() => acksAt().length >= 3 || undefined, "the honest agent streaming", 30_000);

    const health = probeHealth(hub.url);
    const from = Date.now();
    const bodies: string[] = [];
    const gzipped: number[] = [];
    // Half of them as Prometheus scrapes (gzip), half plain.
    await Promise.all(
      Array.from({ length: SCRAPERS }, async (_, i) => {
        const acceptEncoding = i % 2 === 0 ? "gzip" : "identity";
        while (Date.now() - from < SCRAPE_FOR_MS) {
          const res = await scrape(`${hub.url}/metrics`, acceptEncoding);
          expect(res.status).toBe(200);
          expect(res.encoding).toBe(acceptEncoding === "gzip" ? "gzip" : undefined);
          if (res.encoding === "gzip") gzipped.push(res.body.length);
          bodies.push((res.encoding === "gzip" ? await gunzipped(res.body) : res.body).toString("utf8"));
        }
      }),
    );
    const to = Date.now();
    const failed = await health();

    expect(failed, "/healthz unanswered within a health checker's timeout").toEqual([]);
    await expectAckedInOrder(service);
    // Its stream went on while it was scraped: at least a quarter of its intervals acked.
    expect(acksAt().filter((t) => t > from && t <= to).length).toBeGreaterThan((to - from) / INTERVAL_MS / 4);
    expect(bodies.length).toBeGreaterThanOrEqual(SCRAPERS);
    expect(gzipped.length).toBeGreaterThanOrEqual(SCRAPERS / 2);
    // Gzip'd, the ~25 MB exposition is a few MB on the wire.
    for (const bytes of gzipped) expect(bytes).toBeLessThan(5 * 2 ** 20);
    for (const body of bodies) {
      expect(body.endsWith("\n")).toBe(true);
      expect(body.match(/^semscope_semaphore_cap\{/gm)).toHaveLength(SEMAPHORES + 5);
      expect(body.match(/^# TYPE semscope_semaphore_cap gauge$/gm)).toHaveLength(1);
      expect(body).toContain("# TYPE semscope_hub_alerts_active gauge");
    }
  }, 300_000);
});
