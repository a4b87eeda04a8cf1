// The reporter's side of "changed_only" (docs/protocol.md): used only when the hub's hello ack
// accepts it. Then an interval's batches carry the semaphores that changed, the first interval on
// each connection carries all of them, and a semaphore that turns busy is in the batch of that
// very interval; an older hub (no features in its ack) gets every semaphore in every batch.
import { afterEach, describe, expect, it } from "vitest";
import { connect, Semaphore, type Agent } from "../../../agent/src/index.js";
import type { Hello, SamplesBatch } from "../../../shared/protocol/index.js";
import { FakeHub, waitUntil } from "./fake-hub.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

const N = 20;
async function setup(features: string[] | undefined): Promise<{ hub: FakeHub; agent: Agent; sems: Semaphore[]; batches: () => SamplesBatch[] }> {
  const hub = await new FakeHub({ features }).start();
  cleanup.push(() => hub.stop());
  const sems = Array.from({ length: N }, (_, i) => new Semaphore({ name: `co-${features === undefined ? "old" : "new"}-${i}`, permits: 2 }));
  cleanup.push(() => Promise.all(sems.map((s) => s.close())));
  const agent = connect({ url: hub.url, service: "svc", instance: "i-1", intervalMs: 40 });
  cleanup.push(() => agent.close());
  const batches = () => hub.seqs(agent.agentId).map((q) => hub.batches.get(agent.agentId)?.get(q) as SamplesBatch);
  return { hub, agent, sems, batches };
}

describe("changed entries only, the agent's side", () => {
  it("offers the feature in hello and, once accepted, sends all once, then only what changed, from its first busy interval", async () => {
    const { hub, agent, sems, batches } = await setup(["changed_only"]);
    // Batches built before the hub answered are whole too (several, on a loaded machine); after
    // it, one whole interval, then changes. Read once two intervals follow the whole ones.
    const lastWhole = (bs: SamplesBatch[]) => bs.map((b) => b.partial === undefined).lastIndexOf(true);
    await waitUntil(() => batches().length >= lastWhole(batches()) + 3, "two intervals after the whole ones");
    expect((hub.log.find((r) => r.event === "hello")?.payload as Hello).features).toEqual(["changed_only", "many_semaphores"]);
    const seen = batches();
    const whole = lastWhole(seen);
    expect(whole).toBeGreaterThanOrEqual(0);
    for (const b of seen.slice(0, whole + 1)) expect(b.items).toHaveLength(N);
    for (const b of seen.slice(whole + 1)) {
      expect(b.partial).toBe("end");
      expect(b.items).toEqual([]);
    }
    const touchedAt = Date.now();
    sems[5].tryAcquire()?.release();
    sems[5].tryAcquire()?.release();
    // Read by the batches' own times: one built before the touch may still be on its way to the hub.
    const busyAt = () => batches().findIndex((b, i) => i > whole && b.items.length > 0);
    await waitUntil(() => busyAt() > 0 && batches().length >= busyAt() + 3, "the busy batch and two after it");
    const all = batches();
    const i = busyAt();
    // The interval it was busy in (the first built after the touch) carries it with both grants, and only it; the next ones nothing.
    expect(all[i - 1].t).toBeLessThanOrEqual(touchedAt);
    expect(all[i].t).toBeGreaterThanOrEqual(touchedAt);
    expect(all[i].items.map((s) => [s.id, s.acquired, s.released])).toEqual([[sems[5].name, 2, 2]]);
    expect(all.slice(i + 1).every((b) => b.items.length === 0)).toBe(true);
    expect(hub.invalid).toEqual([]);
    expect(agent.status().dropped).toBe(0);
  });

  it("sends every semaphore in every batch to a hub that does not accept the feature", async () => {
    const { hub, sems, batches } = await setup(undefined);
    sems[1].tryAcquire()?.release();
    await waitUntil(() => batches().length >= 4, "four batches");
    for (const b of batches()) {
      expect(b.partial).toBeUndefined();
      expect(b.items).toHaveLength(N);
    }
    expect(hub.invalid).toEqual([]);
  });
});
