// A scraper that keeps its connection between scrapes (Prometheus does) finds it still open at the
// next scrape: the hub keeps an idle keep-alive connection longer than the usual scrape intervals,
// so a scrape is never sent on a connection the hub is closing (a failed scrape: socket hang up).
import { Agent, get, type IncomingHttpHeaders } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_KEEP_ALIVE_TIMEOUT_MS, resolveHubOptions } from "../../../../main/hub/options.js";
import { cleanupAll, sleep, startHub } from "../helpers.js";

afterEach(cleanupAll);

interface Scrape {
  status: number | undefined;
  headers: IncomingHttpHeaders;
  body: string;
  /** The client's port: the same for two scrapes on one connection. */
  localPort: number | undefined;
  reused: boolean;
}

function scrape(url: string, agent: Agent): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const req = get(`${url}/metrics`, { agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body, localPort: req.socket?.localPort, reused: req.reusedSocket }));
    });
    req.on("error", reject);
  });
}

describe("/metrics over a kept-alive connection", () => {
  it("serves a second scrape on the same connection after the 5 s Node would close it at", async () => {
    const hub = await startHub();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await scrape(hub.url, agent);
      expect(first.status).toBe(200);
      expect(first.body).toContain("semscope_hub_");
      expect(first.headers["keep-alive"]).toBe(`timeout=${DEFAULT_KEEP_ALIVE_TIMEOUT_MS / 1000}`);
      // Past Node's default (5 s, closed about a second later): a scrape sent then met the close.
      await sleep(6500);
      const second = await scrape(hub.url, agent);
      expect(second.status).toBe(200);
      expect(second.reused).toBe(true);
      expect(second.localPort).toBe(first.localPort);
    } finally {
      agent.destroy();
    }
  }, 30_000);

  it("closes an idle connection after keepAliveTimeoutMs, and the next scrape opens another", async () => {
    const hub = await startHub({ keepAliveTimeoutMs: 1000 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await scrape(hub.url, agent);
      expect(first.headers["keep-alive"]).toBe("timeout=1");
      await sleep(3000);
      const second = await scrape(hub.url, agent);
      expect(second.status).toBe(200);
      expect(second.reused).toBe(false);
      expect(second.localPort).not.toBe(first.localPort);
    } finally {
      agent.destroy();
    }
  }, 30_000);

  it("refuses a keep-alive time under a second or over an hour", () => {
    expect(resolveHubOptions({}).keepAliveTimeoutMs).toBe(65_000);
    expect(() => resolveHubOptions({ keepAliveTimeoutMs: 999 })).toThrow(/keepAliveTimeoutMs must be an integer in 1000\.\.3600000, got 999/);
    expect(() => resolveHubOptions({ keepAliveTimeoutMs: 3_600_001 })).toThrow(/keepAliveTimeoutMs must be an integer/);
    expect(() => resolveHubOptions({ keepAliveTimeoutMs: 1.5e3 + 0.5 })).toThrow(/keepAliveTimeoutMs must be an integer/);
  });
});
