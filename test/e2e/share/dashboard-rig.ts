// What the share suites in a browser start: the renderer built, a real Redis, a hub serving the
// renderer, the replicas (fixtures/replica.ts) and Chromium, each stopped by cleanupAll.
import { createHub, type Hub } from "../../../main/hub/index.js";
import { startRedis } from "../../../scripts/support/redis.js";
import { buildRenderer, launchBrowser, type Browser } from "../browser.js";
import { onCleanup } from "../stream/harness.js";
import { startReplica, type Replica, type ReplicaConfig } from "./harness.js";

export interface ShareDashboard {
  hub: Hub;
  browser: Browser;
  replicas: Replica[];
}

export async function startShareDashboard(cfg: Omit<ReplicaConfig, "hubUrl" | "redisUrl">, instances: readonly string[]): Promise<ShareDashboard> {
  const built = await buildRenderer();
  onCleanup(built.remove);
  const redis = await startRedis();
  onCleanup(() => redis.stop());
  const hub = await createHub({ port: 0, staticDir: built.dir, log: () => undefined });
  onCleanup(() => hub.close());
  const replicas = await Promise.all(instances.map((i) => startReplica({ ...cfg, hubUrl: hub.url, redisUrl: redis.url }, i)));
  const browser = await launchBrowser();
  onCleanup(() => browser.close());
  return { hub, browser, replicas };
}
