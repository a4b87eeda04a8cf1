// No packet over the hub's limit: big intervals are split into several batches, and a message
// that gets its connection closed for size is dropped and counted, never re-sent in a loop.
import { afterEach, describe, expect, it } from "vitest";
import { connect, type Agent } from "../../../agent/src/index.js";
import { emitEvent } from "../../../agent/src/registry.js";
import { LIMITS, type SamplesBatch } from "../../../shared/protocol/index.js";
import { fakeTracked } from "./fake-tracked.js";
import { FakeHub, waitUntil } from "./fake-hub.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every one of the 256 buckets used, with big counts: the largest sample the wire allows. */
const FULL_HIST: [number, number][] = Array.from({ length: 256 }, (_, b) => [b, 1_000_000 + b]);

function bigEvents(n: number): void {
  for (let i = 0; i < n; i++) emitEvent({ t: Date.now(), id: "size-db", type: "leak_suspected", holderId: `h${i}`, heldMs: 1, stack: "s".repeat(20_000) });
}

async function hubAndAgent(hubOptions: ConstructorParameters<typeof FakeHub>[0], intervalMs = 50): Promise<{ hub: FakeHub; agent: Agent }> {
  const hub = await new FakeHub(hubOptions).start();
  cleanup.push(() => hub.stop());
  const agent = connect({ url: hub.url, service: "svc", intervalMs });
  cleanup.push(() => agent.close());
  await waitUntil(() => agent.connected, "connected");
  return { hub, agent };
}

describe("packet size", () => {
  it("splits an interval too big for one packet into several batches, each under 1 MiB", async () => {
    const { hub, agent } = await hubAndAgent({}, 200);
    for (let i = 0; i < 300; i++) agent.track(fakeTracked(`big-${i}`, 10, FULL_HIST));
    await waitUntil(() => new Set(hub.received("samples").filter((r) => (r.payload as SamplesBatch).items.length > 0).map((r) => (r.payload as SamplesBatch).t)).size >= 3, "three full intervals", 20_000);

    expect(hub.invalid).toEqual([]);
    expect(hub.connections).toBe(1);
    const batches = hub.received("samples").map((r) => r.payload as SamplesBatch);
    for (const b of batches) expect(Buffer.byteLength(JSON.stringify(b))).toBeLessThanOrEqual(1_000_000);
    const byT = new Map<number, SamplesBatch[]>();
    for (const b of batches) byT.set(b.t, [...(byT.get(b.t) ?? []), b]);
    const full = [...byT.values()].filter((group) => group.some((b) => b.items.length > 0)).slice(1, -1);
    expect(full.length).toBeGreaterThan(0);
    for (const group of full) {
      expect(group.length).toBeGreaterThanOrEqual(2);
      const ids = group.flatMap((b) => b.items.map((s) => s.id));
      expect(ids.length).toBe(300);
      expect(new Set(ids).size).toBe(300);
    }
    const seqs = hub.seqs(agent.agentId);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1] + 1);
    expect(LIMITS.maxPacketBytes).toBe(1024 * 1024);
  });

  it("drops a message whose packet the hub closed the connection over (close code 1009)", async () => {
    const { hub, agent } = await hubAndAgent({ maxHttpBufferSize: 64 * 1024 });
    bigEvents(10); // one `events` message of ~200 KB: over this hub's limit
    await waitUntil(() => agent.status().droppedEvents === 10, "the events to be dropped");
    await waitUntil(() => agent.connected, "reconnected");
    const seqBefore = agent.seq;
    await sleep(1500);
    // Not re-sent: one closed connection, then a steady one that keeps delivering samples.
    expect(hub.connections).toBe(2);
    expect(hub.events).toEqual([]);
    await waitUntil(() => (hub.seqs(agent.agentId).at(-1) ?? -1) >= seqBefore + 5, "samples to keep flowing");
    const seqs = hub.seqs(agent.agentId);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1] + 1);
    expect(agent.dropped).toBe(0);
    expect(hub.invalid).toEqual([]);
  });

  it("drops a big message after three connections died under it, when nothing says why", async () => {
    const { hub, agent } = await hubAndAgent({ closeTransportOver: 100 * 1024 });
    bigEvents(10);
    await waitUntil(() => agent.status().droppedEvents === 10, "the events to be dropped", 30_000);
    await waitUntil(() => agent.connected, "reconnected", 30_000);
    const closesAtDrop = hub.closedForSize;
    await sleep(1000);
    expect(closesAtDrop).toBe(3);
    expect(hub.closedForSize).toBe(3);
    const seqs = hub.seqs(agent.agentId);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1] + 1);
    expect(hub.invalid).toEqual([]);
  });
});
