// What a dashboard holds after a snapshot and the deltas after it is what a fresh snapshot shows,
// when the snapshot shows what no delta will repeat: a rename since the last delta, undone before
// the next (the other dashboards hold the name a delta gave them, the very one the semaphore has
// again), or a snapshot served again after changes dropped while no dashboard was connected.
import { afterEach, describe, expect, it } from "vitest";
import { DashboardStore } from "../../../../renderer/src/data/dashboard-store.js";
import type { UiDelta, UiSnapshot } from "../../../../shared/ui-protocol/index.js";
import { agent, cleanupAll, dashboard, info, request, sample, sleep, startHub, T0, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const KEY = "checkout/web-1/db";

describe("/ui snapshot and the deltas after it", () => {
  it("a snapshot taken while a semaphore is renamed: the delta after the rename is undone brings the name back", async () => {
    const hub = await startHub({ ui: { deltaIntervalMs: 1500 } });
    try {
      const a1 = await agent(hub, "a1", [info("db")], { service: "checkout", instance: "web-1" });
      const register = async (name: string) => expect((await request<AckAnswer>(a1, "register", { semaphores: [info("db", { name })] })).ok).toBe(true);

      const store = new DashboardStore();
      let deltas = 0;
      const problems: string[] = [];
      const apply = (d: UiDelta) => {
        deltas++;
        if (!store.applyDelta(d)) problems.push(`delta ${d.seq} patched a semaphore the dashboard never had`);
      };
      const { socket: ui, snapshot, deltas: early } = await dashboard(hub.url);
      store.applySnapshot(snapshot);
      for (const d of early) apply(d);
      ui.on("delta", apply);

      // A delta gives every dashboard db's name: a sample marks it.
      expect((await request<AckAnswer>(a1, "samples", { seq: 1, t: T0 + 1000, intervalMs: 1000, items: [sample("db", { inUse: 2 })] })).ok).toBe(true);
      await waitUntil(() => store.semaphore(KEY)?.t === T0 + 1000, "a delta with db's sample", 5000);

      // Rename, snapshot and undo all between two deltas (deltas go out every 1.5 s; retried when one slips in).
      let between = false;
      for (let attempt = 0; attempt < 5 && !between; attempt++) {
        const before = deltas;
        await register("db-renamed");
        const snap = (await request<{ snapshot: UiSnapshot }>(ui, "snapshot:get", {})).snapshot;
        store.applySnapshot(snap);
        expect(store.semaphore(KEY)?.name).toBe("db-renamed");
        await register("db");
        between = deltas === before;
      }
      expect(between).toBe(true);

      // Nothing else changes: the delta that says db changed back is the only one to tell it.
      await waitUntil(() => store.semaphore(KEY)?.name === "db", "the dashboard to hold db's name again", 5000).catch(() =>
        expect(store.semaphore(KEY)?.name).toBe("db"),
      );
      expect(problems).toEqual([]);
    } finally {
      await hub.close();
    }
  }, 60_000);

  it("a snapshot is not served again once what changed while no dashboard was connected is dropped", async () => {
    const hub = await startHub({ ui: { deltaIntervalMs: 250 } });
    try {
      const a1 = await agent(hub, "a1", [info("db")], { service: "checkout", instance: "web-1" });
      const samples = async (seq: number, inUse: number) =>
        expect((await request<AckAnswer>(a1, "samples", { seq, t: T0 + seq * 1000, intervalMs: 1000, items: [sample("db", { inUse })] })).ok).toBe(true);
      await samples(1, 2);
      const first = await dashboard(hub.url);
      expect(first.snapshot.state.semaphores.find((s) => s.key === KEY)?.inUse).toBe(2);
      first.socket.disconnect();
      await samples(2, 7);
      // A few delta ticks with no dashboard: the change is taken and dropped. Well within the
      // second a snapshot is served again for while nothing changed.
      await sleep(400);
      const second = await dashboard(hub.url);
      expect(second.snapshot.state.semaphores.find((s) => s.key === KEY)?.inUse).toBe(7);
    } finally {
      await hub.close();
    }
  }, 30_000);
});
