// A dashboard that asks for a snapshot while an agent is gone, the agent back (same register)
// before the next delta, must get that agent's fleet groups again from the delta: the snapshot
// lacked them, the other dashboard still holds them, and they are the same as before it left.
import { afterEach, describe, expect, it } from "vitest";
import { DashboardStore } from "../../../../renderer/src/data/dashboard-store.js";
import type { UiDelta, UiSnapshot } from "../../../../shared/ui-protocol/index.js";
import { agent, cleanupAll, client, info, request, sample, startHub, storeClient, summaryOf, T0, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const IDS = ["db", "cache"];
const INFOS = IDS.map((id) => info(id, { budget: 25 }));
const SEARCH = { service: "search", instance: "web-1" };

describe("/ui snapshot taken while an agent is away", () => {
  it("the delta after its return brings back the groups the snapshot lacked", async () => {
    const hub = await startHub({ ui: { deltaIntervalMs: 1500, sliceMs: 0 } });
    try {
      await agent(hub, "a1", INFOS, { service: "checkout", instance: "web-1" });
      let search = await agent(hub, "a3", INFOS, SEARCH);
      const items = IDS.map((id) => sample(id, { inUse: 3, waitMs: summaryOf(20) }));
      expect((await request<AckAnswer>(search, "samples", { seq: 1, t: T0 + 1000, intervalMs: 1000, items })).ok).toBe(true);

      const store = new DashboardStore();
      let deltas = 0;
      let nextDelta: (() => void) | undefined;
      const ui = await storeClient(hub.url, store, (d: UiDelta) => {
        deltas++;
        expect(store.applyDelta(d)).toBe(true);
        nextDelta?.();
      });
      const other = await client(hub.url, "/ui");
      const snapshot = async (socket: typeof ui) => (await request<{ snapshot: UiSnapshot }>(socket, "snapshot:get", {})).snapshot;
      const searchGroups = (s: { fleet: readonly { key: string }[] }) => s.fleet.filter((f) => f.key.startsWith("search/")).map((f) => f.key);
      await waitUntil(async () => searchGroups(await snapshot(other)).length === IDS.length, "search's groups in the fleet", 5000);
      // Every dashboard holds search's groups once a delta has gone out since.
      await waitUntil(() => searchGroups(store).length === IDS.length, "the dashboard to hold search's groups", 5000);

      // Leave, snapshot and return all between two deltas (retried when a delta slips in).
      let between = false;
      for (let attempt = 0; attempt < 5 && !between; attempt++) {
        await new Promise<void>((resolve) => (nextDelta = resolve));
        nextDelta = undefined;
        const before = deltas;
        search.disconnect();
        await waitUntil(async () => {
          const s = await snapshot(ui);
          store.applySnapshot(s);
          return searchGroups(s).length === 0;
        }, "a snapshot without search's groups", 5000);
        search = await agent(hub, "a3", INFOS, SEARCH);
        between = deltas === before;
      }
      expect(between).toBe(true);

      let last: unknown;
      await waitUntil(async () => {
        last = (await snapshot(other)).fleet;
        return deltas > 0 && JSON.stringify(store.fleet) === JSON.stringify(last);
      }, "the dashboard to hold the fleet a fresh snapshot shows", 5000).catch(() => expect(store.fleet).toEqual(last));
      expect(searchGroups(store)).toHaveLength(IDS.length);
    } finally {
      await hub.close();
    }
  }, 60_000);
});
