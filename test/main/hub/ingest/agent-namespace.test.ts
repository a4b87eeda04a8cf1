// The /agent namespace against raw socket.io clients: hello first, refusals with short reasons
// and counted, dedupe by (agentId, seq), the per-agent limits, and a connection closed for size
// that leaves every other agent streaming.
import { afterEach, describe, expect, it } from "vitest";
import { semaphoreKey } from "../../../../shared/protocol/index.js";
import { agent, cleanupAll, client, getJson, hello, info, request, sample, sleep, startHub, T0, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const batch = (seq: number, items = [sample("db")], t = T0 + seq * 1000) => ({ seq, t, intervalMs: 1000, items });

describe("/agent messages", () => {
  it("answers hello with the hub's version and time, and refuses anything before hello", async () => {
    const hub = await startHub({ now: () => T0 + 5 });
    const s = await client(hub.url, "/agent");
    for (const [event, payload] of [
      ["register", { semaphores: [info("db")] }],
      ["samples", batch(0)],
      ["events", { items: [] }],
    ] as const) {
      expect(await request<AckAnswer>(s, event, payload)).toEqual({ ok: false, error: "hello first" });
    }
    const h = await request<AckAnswer>(s, "hello", hello("a1"));
    expect(h).toEqual({ ok: true, hubVersion: expect.any(String), serverTime: T0 + 5 });
    expect(await request<AckAnswer>(s, "register", { semaphores: [info("db")] })).toEqual({ ok: true });
    expect(await request<AckAnswer>(s, "samples", batch(0))).toEqual({ ok: true, seq: 0 });
    expect(hub.state().hub.rejected).toBe(3);
  });

  it("refuses invalid payloads with a short reason, counts them, and keeps going", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", [info("db")]);
    const bad: [string, unknown][] = [
      ["samples", null],
      ["samples", "x"],
      ["samples", { ...batch(0), items: [{ ...sample("db"), cap: -1 }] }],
      ["samples", { ...batch(0), intervalMs: 0 }],
      ["register", { semaphores: [info("db"), info("db")] }],
      ["events", { items: [{ t: 1, id: "db", type: "nope" }] }],
      ["events", { items: [{ t: 1, id: "db", type: "leak_suspected", detail: JSON.parse('{"__proto__":{"a":1}}') as object }] }],
      ["hello", { agentId: 5 }],
    ];
    for (const [event, payload] of bad) {
      const ack = await request<AckAnswer>(s, event, payload);
      expect(ack.ok, `${event} ${JSON.stringify(payload)}`).toBe(false);
      expect(typeof ack.error).toBe("string");
      expect((ack.error ?? "").length).toBeLessThanOrEqual(200);
    }
    const cap = await request<AckAnswer>(s, "samples", { ...batch(0), items: [{ ...sample("db"), cap: -1 }] });
    expect(cap.error).toBe("items.0.cap: must be finite and >= 0");
    const state = (await getJson<{ hub: { rejected: number } }>(hub, "/api/state")).body;
    expect(state.hub.rejected).toBe(bad.length + 1);
    // Still serving, and the valid batch still goes in.
    expect(await request<AckAnswer>(s, "samples", batch(0))).toEqual({ ok: true, seq: 0 });
    expect(hub.history.get(semaphoreKey("checkout", "web-1", "db"))?.latestT()).not.toBeNull();
  });

  it("counts unknown events and tolerates a missing ack", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", [info("db")]);
    expect(await request<AckAnswer>(s, "bogus", { a: 1 })).toEqual({ ok: false, error: "unknown event" });
    s.emit("bogus-no-ack", 1);
    s.emit("samples", batch(0)); // no ack callback
    s.emit("samples", { nonsense: true }); // refused, no ack callback
    await waitUntil(() => hub.state().hub.rejected === 3, "three refusals");
    expect(hub.history.get("checkout/web-1/db")?.latestT()).not.toBeNull();
    expect(await request<AckAnswer>(s, "samples", batch(1))).toEqual({ ok: true, seq: 1 });
  });

  it("acks a duplicate seq without storing it twice or counting it as rejected", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", [info("db")]);
    expect(await request<AckAnswer>(s, "samples", batch(0))).toEqual({ ok: true, seq: 0 });
    expect(await request<AckAnswer>(s, "samples", batch(1))).toEqual({ ok: true, seq: 1 });
    // The same seq again, even with a later t (a re-send is recognised by seq, not by content).
    expect(await request<AckAnswer>(s, "samples", batch(0, [sample("db", { inUse: 9 })], T0 + 99_000))).toEqual({ ok: true, seq: 0 });
    expect(await request<AckAnswer>(s, "samples", batch(1))).toEqual({ ok: true, seq: 1 });
    const h = hub.history.get("checkout/web-1/db")!;
    expect(h.window("1s", 0, Infinity).length).toBe(2);
    expect(h.window("1s", 0, Infinity).inUse.at(-1)).toBe(2);
    expect(hub.state().hub.rejected).toBe(0);
    // Across a reconnect the agent is resumed, its seqs remembered.
    s.disconnect();
    const again = await agent(hub, "a1");
    expect(await request<AckAnswer>(again, "samples", batch(1))).toEqual({ ok: true, seq: 1 });
    expect(await request<AckAnswer>(again, "samples", batch(2))).toEqual({ ok: true, seq: 2 });
    // Read through the hub: a batch is acknowledged before it is stored (HubCore.defer), and what
    // reads through the hub stores what waits first; a history held from before is not such a read.
    expect(hub.history.get("checkout/web-1/db")!.window("1s", 0, Infinity).length).toBe(3);
    expect(hub.state().semaphores.map((x) => x.key)).toEqual(["checkout/web-1/db"]);
  });

  it("resumes a known agentId: its semaphores stay until the next register, and it is connected again", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", [info("db"), info("cache")]);
    s.disconnect();
    await waitUntil(() => hub.state().agents[0]?.connected === false, "the disconnect");
    expect(hub.state().alerts.map((a) => a.rule)).toEqual(["agent_down"]);
    await agent(hub, "a1");
    expect(hub.state().agents).toEqual([expect.objectContaining({ agentId: "a1", connected: true })]);
    expect(hub.state().semaphores.map((x) => x.id)).toEqual(["db", "cache"]);
    expect(hub.state().alerts).toEqual([]);
  });

  it("holds an agent to 1000 semaphores, registered or not", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", Array.from({ length: 999 }, (_, i) => info(`s${i}`)));
    const two = await request<AckAnswer>(s, "samples", batch(0, [sample("new1"), sample("new2")]));
    expect(two).toEqual({ ok: false, error: "too many semaphores: an agent may report at most 1000 (10000 with the \"many_semaphores\" feature)" });
    expect(await request<AckAnswer>(s, "samples", batch(0, [sample("new1"), sample("s0")]))).toEqual({ ok: true, seq: 0 });
    const ev = await request<AckAnswer>(s, "events", { items: [{ t: T0, id: "new3", type: "double_release" }] });
    expect(ev.ok).toBe(false);
    expect(hub.state().semaphores.length).toBe(1000);
  });

  it("refuses messages over the per-connection rate, and counts them", async () => {
    const hub = await startHub({ agentRate: { perSecond: 5, burst: 10 } });
    const s = await agent(hub, "a1", [info("db")]); // 2 messages
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => request<AckAnswer>(s, "samples", batch(i))));
    const refused = answers.filter((a) => !a.ok);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    expect(refused.every((a) => a.error === "rate limit exceeded")).toBe(true);
    expect(hub.state().hub.rejected).toBe(refused.length);
    await sleep(400);
    expect((await request<AckAnswer>(s, "samples", batch(100))).ok).toBe(true);
  });

  it("closes only the connection that sent a packet over 1 MiB, counts it, and another agent keeps streaming", async () => {
    const hub = await startHub();
    const big = await agent(hub, "big", [info("db")]);
    const other = await agent(hub, "other", [info("db")], { instance: "web-2" });
    let seq = 0;
    const stream = setInterval(() => other.emit("samples", batch(seq++)), 20);
    try {
      const closed = new Promise<string>((resolve) => big.once("disconnect", (reason) => resolve(reason)));
      big.emit("samples", { ...batch(0), junk: "x".repeat(1024 * 1024 + 10) }, () => undefined);
      expect(await closed).toMatch(/transport/);
      const before = seq;
      await waitUntil(() => seq > before + 10, "the other agent to keep sending");
      await waitUntil(() => (hub.history.get("checkout/web-2/db")?.window("1s", 0, Infinity).length ?? 0) >= before + 5, "its samples to be stored");
    } finally {
      clearInterval(stream);
    }
    expect(other.connected).toBe(true);
    expect(await request<AckAnswer>(other, "samples", batch(10_000))).toEqual({ ok: true, seq: 10_000 });
    expect(hub.state().hub.rejected).toBe(1);
    const agents = hub.state().agents;
    expect(agents.find((a) => a.agentId === "big")?.connected).toBe(false);
    expect(agents.find((a) => a.agentId === "other")?.connected).toBe(true);
    expect(hub.history.get("checkout/web-1/db")).toBeUndefined();
  });

  it("counts a polling connection closed for size (HTTP 413) the same way", async () => {
    const hub = await startHub();
    const s = await client(hub.url, "/agent", { transports: ["polling"] });
    expect((await request<AckAnswer>(s, "hello", hello("p1"))).ok).toBe(true);
    const closed = new Promise<string>((resolve) => s.once("disconnect", (reason) => resolve(reason)));
    s.emit("samples", { ...batch(0), junk: "x".repeat(1024 * 1024 + 10) });
    expect(await closed).toMatch(/transport/);
    await waitUntil(() => hub.state().hub.rejected === 1, "the close to be counted");
    await waitUntil(() => hub.state().agents[0]?.connected === false, "the agent to be down");
  });

  it("counts a connection closed for a packet socket.io cannot decode", async () => {
    const hub = await startHub();
    const s = await agent(hub, "raw", [info("db")]);
    const closed = new Promise<string>((resolve) => s.once("disconnect", (reason) => resolve(reason)));
    (s.io.engine as unknown as { write(data: string): void }).write("9 not a socket.io packet");
    await closed;
    await waitUntil(() => hub.state().hub.rejected === 1, "the close to be counted");
    expect(hub.state().agents[0].connected).toBe(false);
  });
});
