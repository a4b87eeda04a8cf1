// The dashboard's connection against a real socket.io server that plays the hub's /ui side: a
// delta patching a semaphore the dashboard never had (so it lacks what the semaphore is) makes
// the client ask for a snapshot, once, and the store is whole again.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_THRESHOLDS } from "../../shared/alerts/index.js";
import type { UiSnapshot } from "../../shared/ui-protocol/types.js";
import { DashboardStore } from "../../renderer/src/data/dashboard-store.js";
import { UiClient } from "../../renderer/src/data/ui-client.js";
import { sem } from "./fixtures.js";
import { waitUntil } from "../main/hub/helpers.js";

const T = 1_700_000_000_000;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function snapshot(deltaSeq: number, semaphores: UiSnapshot["state"]["semaphores"]): UiSnapshot {
  return {
    serverTime: T,
    deltaSeq,
    state: { hub: { version: "0.1.0", startedAt: T, rejected: 0 }, agents: [], semaphores, alerts: [] },
    alertLog: [],
    fleet: [],
    thresholds: DEFAULT_THRESHOLDS,
    sparklines: {},
    limits: { deltaIntervalMs: 250, sparklinePoints: 60 },
  };
}

describe("UiClient", () => {
  it("asks for a snapshot when a delta patches a semaphore it never had", async () => {
    const http = createServer();
    const io = new Server(http);
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    cleanups.push(() => void io.close());
    const db = sem("checkout", "web-1", "db", { t: T });
    const cache = sem("checkout", "web-1", "cache", { t: T + 1000, inUse: 3 });
    let snapshotsAsked = 0;
    io.of("/ui").on("connection", (socket) => {
      // Its first snapshot misses `cache`, as if the delta that introduced it had been lost.
      socket.emit("snapshot", snapshot(1, [db]));
      socket.on("snapshot:get", (_req: unknown, ack: (a: unknown) => void) => {
        snapshotsAsked++;
        ack({ ok: true, snapshot: snapshot(2, [db, cache]) });
      });
      setTimeout(() => socket.emit("delta", { seq: 2, serverTime: T + 1000, rejected: 0, semaphores: [{ key: cache.key, status: "ok", t: cache.t, last: cache.last }] }), 50);
    });

    const store = new DashboardStore();
    const client = new UiClient(store, { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, token: null, name: "test", bridged: false, local: false });
    client.start();
    cleanups.push(() => client.stop());
    await waitUntil(() => store.semaphore(cache.key) !== undefined, "the missing semaphore, from a fresh snapshot");
    expect(snapshotsAsked).toBe(1);
    expect(store.semaphore(cache.key)).toMatchObject({ agentId: cache.agentId, inUse: 3 });
    expect(store.lastSeq).toBe(2);
  });
});
