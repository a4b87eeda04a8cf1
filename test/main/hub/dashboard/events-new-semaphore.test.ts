// An events batch that names a semaphore the hub has not seen (no register, no sample) creates
// it (an event raising no alert): the next /ui delta must bring it, and its fleet group, to the dashboards already connected.
import { afterEach, describe, expect, it } from "vitest";
import { DashboardStore } from "../../../../renderer/src/data/dashboard-store.js";
import type { UiDelta, UiSnapshot } from "../../../../shared/ui-protocol/index.js";
import { agent, cleanupAll, client, info, request, startHub, T0, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

describe("/ui deltas after an events batch", () => {
  it("bring the semaphore (and group) the batch created", async () => {
    const hub = await startHub();
    try {
      const a = await agent(hub, "a1", [info("db", { budget: 25 })], { service: "checkout", instance: "web-1" });
      const store = new DashboardStore();
      const ui = await client(hub.url, "/ui");
      ui.on("snapshot", (s: UiSnapshot) => store.applySnapshot(s));
      ui.on("delta", (d: UiDelta) => void store.applyDelta(d));
      // The snapshot sent on connect may come before the listener: ask for one.
      store.applySnapshot((await request<{ snapshot: UiSnapshot }>(ui, "snapshot:get", {})).snapshot);
      expect(store.itemList().map((i) => store.semaphore(i.key)?.id)).toEqual(["db"]);

      const ack = await request<AckAnswer>(a, "events", { items: [{ t: T0 + 1000, id: "fresh", type: "leak_resolved", holderId: "h1" }] });
      expect(ack.ok).toBe(true);
      const other = await client(hub.url, "/ui");
      const fresh = (await request<{ snapshot: UiSnapshot }>(other, "snapshot:get", {})).snapshot;
      const key = fresh.state.semaphores.find((s) => s.id === "fresh")?.key;
      expect(key).toBeDefined();
      await waitUntil(() => store.semaphore(key!) !== undefined, "a delta to bring the semaphore the events created", 5000);
      await waitUntil(
        async () => {
          const now = (await request<{ snapshot: UiSnapshot }>(other, "snapshot:get", {})).snapshot;
          return JSON.stringify(store.fleet) === JSON.stringify(now.fleet);
        },
        "the dashboard's fleet to match a fresh snapshot's",
        5000,
      );
      expect(store.fleet.some((f) => f.key.endsWith("/fresh"))).toBe(true);
    } finally {
      await hub.close();
    }
  }, 30_000);
});
