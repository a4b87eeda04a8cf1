// The reporter's side of "many_semaphores" (docs/protocol.md): offered in hello; with a hub that
// accepts it, up to 10,000 semaphores are registered, in parts of at most 1,000 ("more"… "end"),
// and each interval's samples in batches of at most 1,000; an older hub gets the first 1,000 in
// one register, as before, and the rest are counted as omitted.
import { afterEach, describe, expect, it } from "vitest";
import { connect, Semaphore } from "../../../agent/src/index.js";
import type { Hello, SamplesBatch } from "../../../shared/protocol/index.js";
import { FakeHub, waitUntil } from "./fake-hub.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

const N = 2_500;
async function setup(features: string[] | undefined) {
  const hub = await new FakeHub({ features }).start();
  cleanup.push(() => hub.stop());
  const tag = features === undefined ? "old" : "new";
  const sems = Array.from({ length: N }, (_, i) => new Semaphore({ name: `many-${tag}-${i}`, permits: 1 }));
  cleanup.push(() => Promise.all(sems.map((s) => s.close())));
  const agent = connect({ url: hub.url, service: "svc", instance: "i-1", intervalMs: 100 });
  cleanup.push(() => agent.close());
  const batches = () => hub.seqs(agent.agentId).map((q) => hub.batches.get(agent.agentId)?.get(q) as SamplesBatch);
  return { hub, agent, sems, batches };
}

describe("many semaphores, the agent's side", () => {
  it("registers 2,500 in parts and samples them all, with a hub that accepts the feature", async () => {
    const { hub, agent, batches } = await setup(["changed_only", "many_semaphores"]);
    await waitUntil(() => hub.registers.at(-1)?.partial === "end", "the register's last part");
    expect((hub.log.find((r) => r.event === "hello")?.payload as Hello).features).toContain("many_semaphores");
    const parts = hub.registers.slice(-3);
    expect(parts.map((r) => [r.semaphores.length, r.partial])).toEqual([
      [1000, "more"],
      [1000, "more"],
      [500, "end"],
    ]);
    const ids = parts.flatMap((r) => r.semaphores.map((s) => s.id));
    expect(new Set(ids).size).toBe(N);
    // The first whole interval after the hub answered carries all of them, in batches of at most 1,000.
    await waitUntil(() => new Set(batches().flatMap((b) => b.items.map((s) => s.id))).size === N, "a sample of each");
    expect(batches().every((b) => b.items.length <= 1000)).toBe(true);
    expect(hub.invalid).toEqual([]);
    expect(agent.status()).toMatchObject({ omitted: 0, rejected: 0, dropped: 0 });
  });

  it("keeps to 1,000 in one register with a hub that does not, and still exports all of them locally", async () => {
    const { hub, agent, batches } = await setup(undefined);
    await waitUntil(() => hub.registers.length > 0 && batches().length > 2, "a register and batches");
    expect(hub.registers.map((r) => [r.semaphores.length, r.partial])).toEqual([[1000, undefined]]);
    const registered = new Set(hub.registers[0]!.semaphores.map((s) => s.id));
    expect(batches().every((b) => b.items.length === 1000 && b.items.every((s) => registered.has(s.id)))).toBe(true);
    expect(agent.status().omitted).toBe(N - 1000);
    expect(hub.invalid).toEqual([]);
    // The hub's limit is the hub's: the agent's own Prometheus endpoint has every semaphore.
    expect(agent.prometheus().match(/^semscope_semaphore_in_use\{/gm)).toHaveLength(N);
  });
});
