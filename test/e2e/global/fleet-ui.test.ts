// The dashboard's Fleet tab (real Chromium, web mode) for a global semaphore on a real Redis: the
// fleet-wide in-use read from Redis against the global cap, holders without an agent included,
// and the orphaned leases of a SIGKILLed replica flagged while they last.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHub, type Hub } from "../../../main/hub/index.js";
import { buildRenderer, launchBrowser, until, type Browser } from "../browser.js";
import { startRedis, type RedisServer } from "../../../scripts/support/redis.js";
import { cleanupAll, onCleanup } from "../stream/harness.js";
import { startReplica, type Replica } from "./harness.js";

const CAP = 5;
const LOCK_TIMEOUT_MS = 3000;

let redis: RedisServer;
let probe: Redis;
let hub: Hub;
let browser: Browser;
let victim: Replica;
let survivor: Replica;

beforeAll(async () => {
  const built = await buildRenderer();
  onCleanup(built.remove);
  redis = await startRedis();
  onCleanup(() => redis.stop());
  probe = new Redis(redis.url);
  onCleanup(() => probe.quit());
  hub = await createHub({ port: 0, staticDir: built.dir, log: () => undefined });
  onCleanup(() => hub.close());
  const env = (instance: string) => ({
    MODE: "redis", HUB_URL: hub.url, SERVICE: "api", INSTANCE: instance, REDIS_URL: redis.url,
    CAP: String(CAP), LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS), INTERVAL_MS: "250",
  });
  [victim, survivor] = await Promise.all([startReplica(env("v1")), startReplica(env("s1"))]);
  browser = await launchBrowser();
  onCleanup(() => browser.close());
}, 120_000);
afterAll(cleanupAll);

describe("the Fleet tab for a global semaphore", () => {
  it("shows Redis's in-use against the global cap and flags a killed replica's leases as orphaned until they lapse", async () => {
    await victim.ask({ cmd: "hold", n: 2 }, "held");
    await survivor.ask({ cmd: "hold", n: 1 }, "held");
    // A holder in a process without an agent: written to Redis the way redis-semaphore does, and refreshed.
    const refresh = () => probe.zadd("semaphore:global-api", Date.now(), "no-agent-holder");
    await refresh();
    const keepAlive = setInterval(() => void refresh(), 500);
    try {
      const page = browser.page;
      await page.goto(`${hub.url}/#/fleet`);
      const row = page.locator('.sem-row[data-key="api/global-api"]');
      const inUse = row.getByTestId("global-in-use");
      await until("4 of 5 held fleet-wide (the agentless holder counted)", () => inUse.textContent(), (t) => (t ?? "").replace(/\s/g, "") === "4/5", 20_000);
      expect(await row.getByTestId("orphans").count()).toBe(0);

      await victim.kill("SIGKILL");
      const orphans = row.getByTestId("orphans");
      await until("the orphaned leases flagged", async () => ((await orphans.count()) > 0 ? orphans.textContent() : null), (t) => t === "2 orphaned", 10_000);
      expect(await orphans.getAttribute("title")).toContain("last held by v1");
      expect((await inUse.textContent())?.replace(/\s/g, "")).toBe("4/5");

      // Gone within the lease (+5 s of slack): 2 of 5 left, no orphans.
      await until("the orphans lapsed", async () => ({ n: await orphans.count(), t: await inUse.textContent() }), (v) => v.n === 0 && (v.t ?? "").replace(/\s/g, "") === "2/5", LOCK_TIMEOUT_MS + 5000);
      expect(browser.errors).toEqual([]);
    } finally {
      clearInterval(keepAlive);
    }
  }, 60_000);
});
