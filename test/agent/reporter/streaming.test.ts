// The agent against a real socket.io hub: order of messages, seq, acks, re-registration,
// events and refusals. Every payload is validated by the fake hub with the protocol's schemas.
import { afterEach, describe, expect, it } from "vitest";
import { connect, Semaphore, type Agent, type Tracked } from "../../../agent/src/index.js";
import pkg from "../../../agent/package.json" with { type: "json" };
import { emitEvent } from "../../../agent/src/registry.js";
import type { Hello, Register, SamplesBatch } from "../../../shared/protocol/index.js";
import { fakeTracked } from "./fake-tracked.js";
import { FakeHub, waitUntil } from "./fake-hub.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

async function startHub(options?: ConstructorParameters<typeof FakeHub>[0]): Promise<FakeHub> {
  const hub = await new FakeHub(options).start();
  cleanup.push(() => hub.stop());
  return hub;
}

function start(hub: FakeHub, extra: Parameters<typeof connect>[0] = {}): Agent {
  const agent = connect({ url: hub.url, service: "checkout", instance: "test-1", intervalMs: 50, ...extra });
  cleanup.push(() => agent.close());
  return agent;
}

function semaphore(name: string, permits = 2): Semaphore {
  const s = new Semaphore({ name, permits });
  cleanup.push(() => s.close());
  return s;
}

function expectContiguous(seqs: number[]): void {
  expect(seqs.length).toBeGreaterThan(0);
  for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1] + 1);
}

describe("streaming to a hub", () => {
  it("says hello, registers, then streams contiguous batches the hub acks", async () => {
    const hub = await startHub();
    const db = semaphore("stream-db", 3);
    const agent = start(hub);
    const firstSeq = agent.seq;

    for (let i = 0; i < 5; i++) (await db.acquire()).release();
    await waitUntil(() => hub.seqs(agent.agentId).length >= 6, "six batches");
    await waitUntil(() => agent.connected && agent.bufferedBatches <= 1, "acks to empty the buffer");

    expect(hub.invalid).toEqual([]);
    const first = hub.log.filter((r) => r.socketId === hub.log[0].socketId).slice(0, 3);
    expect(first.map((r) => r.event)).toEqual(["hello", "register", "samples"]);

    const hello = first[0].payload as Hello;
    expect(hello).toMatchObject({ agentId: agent.agentId, service: "checkout", instance: "test-1", pid: process.pid, agentVersion: pkg.version });
    expect(hello.runtime).toBe(`node ${process.version}`);
    expect(hello.agentId).toMatch(/^[0-9a-f-]{36}$/);
    expect((first[1].payload as Register).semaphores.map((s) => s.id)).toContain("stream-db");

    const seqs = hub.seqs(agent.agentId);
    expect(seqs[0]).toBe(firstSeq);
    expectContiguous(seqs);
    const batches = seqs.map((q) => hub.batches.get(agent.agentId)?.get(q) as SamplesBatch);
    expect(batches.every((b) => b.intervalMs === 50 && b.dropped === undefined)).toBe(true);
    const acquired = batches.flatMap((b) => b.items).filter((s) => s.id === "stream-db").reduce((n, s) => n + s.acquired, 0);
    expect(acquired).toBe(5);
    expect(hub.duplicates).toBe(0);
    expect(agent.status()).toMatchObject({ dropped: 0, rejected: 0, lastError: null });
  });

  it("registers again, with the full list, whenever the set of semaphores changes", async () => {
    const hub = await startHub();
    semaphore("reg-a");
    const agent = start(hub);
    await waitUntil(() => hub.registers.length >= 1 && agent.connected, "first register");
    const later = new Semaphore({ name: "reg-b", permits: 1 });
    await waitUntil(() => hub.registers.some((r) => r.semaphores.some((s) => s.id === "reg-b")), "register with reg-b");
    expect(hub.registers.at(-1)?.semaphores.map((s) => s.id)).toEqual(expect.arrayContaining(["reg-a", "reg-b"]));
    await later.close();
    await waitUntil(() => !(hub.registers.at(-1)?.semaphores ?? []).some((s) => s.id === "reg-b"), "register without reg-b");
    // A sample never names a semaphore the hub was not told about first.
    const registeredBefore = new Set<string>();
    for (const r of hub.log) {
      if (r.event === "register") (r.payload as Register).semaphores.forEach((s) => registeredBefore.add(s.id));
      if (r.event === "samples") for (const s of (r.payload as SamplesBatch).items) expect(registeredBefore.has(s.id)).toBe(true);
    }
    expect(hub.invalid).toEqual([]);
  });

  it("sends events within ~100 ms, cut to the protocol's limits", async () => {
    const hub = await startHub();
    const db = semaphore("events-db");
    const agent = start(hub);
    await waitUntil(() => agent.connected, "connected");

    const p = await db.acquire();
    p.release();
    p.release(); // a double release: counted, and reported with the second call's stack
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 12; i++) at = at[`level${i}`] = {};
    emitEvent({
      t: Date.now(),
      id: "events-db",
      type: "leak_suspected",
      holderId: "h".repeat(300),
      heldMs: 12_000,
      stack: "x".repeat(20_000),
      detail: { long: "y".repeat(1000), ["k".repeat(300)]: 1, deep, nan: NaN, constructor: "x", many: Array.from({ length: 5000 }, (_, i) => i) },
    });
    await waitUntil(() => hub.events.length >= 2, "two events");
    expect(hub.invalid).toEqual([]);
    const double = hub.events.find((e) => e.type === "double_release");
    expect(double?.id).toBe("events-db");
    const leak = hub.events.find((e) => e.type === "leak_suspected");
    expect(leak?.stack?.length).toBe(16_384);
    expect(leak?.holderId?.length).toBe(256);
    expect((leak?.detail?.long as string).length).toBe(256);
    expect(leak?.detail?.nan).toBeNull();
    expect(Object.keys(leak?.detail ?? {})).not.toContain("constructor");
    // Cut to the hub's 1,000 values in all, not refused whole.
    expect((leak?.detail?.many as number[]).length).toBeLessThan(1000);
  });

  it("drops and counts a batch the hub refuses (ok:false), and carries on", async () => {
    const hub = await startHub({ refuse: (event, payload) => (event === "samples" && (payload as SamplesBatch).seq % 3 === 0 ? "refused for the test" : undefined) });
    semaphore("refused-db");
    const agent = start(hub);
    await waitUntil(() => agent.status().rejected >= 3, "three refusals");
    await waitUntil(() => agent.bufferedBatches <= 1, "buffer drained");
    const status = agent.status();
    expect(status.dropped).toBe(0);
    expect(status.lastError).toContain("refused for the test");
    // Refused batches are never retried: each seq divisible by 3 was sent exactly once.
    const refusedSends = hub.received("samples").filter((r) => (r.payload as SamplesBatch).seq % 3 === 0);
    expect(new Set(refusedSends.map((r) => (r.payload as SamplesBatch).seq)).size).toBe(refusedSends.length);
  });

  it("reports track()ed items alongside the registry's, and forgets them on untrack", async () => {
    const hub = await startHub();
    const custom = fakeTracked("custom-pool", 7);
    const agent = start(hub);
    const untrack = agent.track(custom);
    await waitUntil(() => hub.received("samples").some((r) => (r.payload as SamplesBatch).items.some((s) => s.id === "custom-pool" && s.cap === 7)), "custom sample");
    expect(hub.registers.at(-1)?.semaphores.find((s) => s.id === "custom-pool")?.kind).toBe("generic-pool");
    untrack();
    await waitUntil(() => !(hub.registers.at(-1)?.semaphores ?? []).some((s) => s.id === "custom-pool"), "register without it");
    expect(() => agent.track({} as Tracked)).toThrow(TypeError);
  });

  it("keeps going when an adapter's sample() or describe() throws", async () => {
    const hub = await startHub();
    semaphore("healthy-db");
    const agent = start(hub);
    const broken: Tracked = { ...fakeTracked("broken", 1), sample: () => { throw new Error("adapter bug"); } };
    agent.track(broken);
    await waitUntil(() => hub.seqs(agent.agentId).length >= 5, "batches keep flowing");
    expect(hub.invalid).toEqual([]);
    const last = hub.received("samples").at(-1)?.payload as SamplesBatch;
    expect(last.items.map((s) => s.id)).toContain("healthy-db");
    expect(last.items.map((s) => s.id)).not.toContain("broken");
  });

  it("sends the token in the handshake, and keeps retrying, with the reason, when it is wrong", async () => {
    const hub = await startHub({ token: "s3cret" });
    const good = start(hub, { token: "s3cret" });
    await waitUntil(() => good.connected, "connected with the right token");
    await good.close();
    const bad = start(hub, { token: "wrong" });
    await waitUntil(() => hub.handshakeErrors >= 2, "a retry after the refusal", 15_000);
    expect(bad.connected).toBe(false);
    expect(bad.status().lastError).toBe("unauthorized");
  });

  it("does not stream to a hub that refuses its hello, and retries later", async () => {
    const hub = await startHub({ refuse: (event) => (event === "hello" ? "go away" : undefined) });
    const agent = start(hub);
    await waitUntil(() => hub.connections >= 2, "a second attempt", 15_000);
    // Its first samples are taken 50 ms in; a retry with little jitter can come sooner on a loaded
    // machine (CI saw 0 buffered at the second attempt): what must hold is that they are kept.
    await waitUntil(() => agent.bufferedBatches > 0, "samples kept while refused", 15_000);
    expect(agent.connected).toBe(false);
    expect(agent.status().lastError).toBe("hello refused: go away");
    expect(hub.received("samples")).toEqual([]);
    expect(agent.bufferedBatches).toBeGreaterThan(0);
  });

  it("refuses a second connect() while one runs, and allows one after close()", async () => {
    const hub = await startHub();
    const agent = connect({ url: hub.url, service: "x", intervalMs: 50 });
    expect(() => connect({ url: hub.url })).toThrow(/already running/);
    await agent.close();
    const again = connect({ url: hub.url, service: "x", intervalMs: 50 });
    expect(again.agentId).toBe(agent.agentId);
    await again.close();
  });
});
