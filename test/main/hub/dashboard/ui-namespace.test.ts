// The /ui namespace: a snapshot first, then deltas no more than 4 a second, requests with acks,
// and a dashboard that stops reading is dropped rather than buffered.
import { afterEach, describe, expect, it } from "vitest";
import type { UiDelta, UiSnapshot } from "../../../../shared/ui-protocol/index.js";
import { agent, cleanupAll, client, dashboard, getJson, info, request, sample, sleep, startHub, T0, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

function stream(s: { emit: (e: string, p: unknown) => unknown }, everyMs: number, id = "db"): () => void {
  let seq = 0;
  const timer = setInterval(() => {
    s.emit("samples", { seq, t: T0 + seq * 1000, intervalMs: 1000, items: [sample(id, { inUse: seq % 10 })] });
    seq++;
  }, everyMs);
  return () => clearInterval(timer);
}

describe("/ui", () => {
  it("sends a snapshot with state, fleet, thresholds and bounded sparklines first", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [info("db")]);
    for (let i = 0; i < 80; i++) await request(a, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [sample("db", { inUse: i % 10, waiters: i % 3 })] });
    const { socket: ui, snapshot: snap } = await dashboard(hub.url);
    const asked = await request<{ ok: boolean; snapshot: UiSnapshot }>(ui, "snapshot:get", {});
    for (const s of [snap, asked.snapshot]) {
      expect(s.state.hub.version).toBeTypeOf("string");
      expect(s.state.agents.map((x) => x.agentId)).toEqual(["a1"]);
      expect(s.state.semaphores[0]).toMatchObject({ key: "checkout/web-1/db", t: T0 + 79_000 });
      expect(s.fleet.map((f) => f.key)).toEqual(["checkout/db"]);
      expect(s.thresholds.convoy.windowMs).toBe(5000);
      const spark = s.sparklines["checkout/web-1/db"];
      expect(spark.t.length).toBe(60);
      expect(spark.t.at(-1)).toBe(T0 + 79_000);
      expect(spark.inUse.at(-1)).toBe(79 % 10);
      expect(spark.waiters.at(-1)).toBe(79 % 3);
      expect(s.limits).toEqual({ deltaIntervalMs: 250, sparklinePoints: 60 });
    }
  });

  it("sends the snapshot before any delta, then deltas at most 4 a second with the changed samples", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [info("db")]);
    const stop = stream(a, 5);
    try {
      const { io } = await import("socket.io-client");
      const ui = io(`${hub.url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
      const order: string[] = [];
      let snapshot: UiSnapshot | undefined;
      const deltas: UiDelta[] = [];
      ui.on("snapshot", (s: UiSnapshot) => {
        order.push("snapshot");
        snapshot = s;
      });
      ui.on("delta", (d: UiDelta) => {
        order.push("delta");
        deltas.push(d);
      });
      await waitUntil(() => deltas.length > 0, "a first delta");
      // The ticks of a 250 ms timer in this process, where the hub's timer runs too: how many
      // delta intervals the machine's load let by while the deltas below came.
      let ticks = 0;
      const ref = setInterval(() => ticks++, 250);
      const from = deltas.length;
      const N = 9;
      try {
        await waitUntil(() => deltas.length >= from + N, `${N} more deltas`, 20_000);
      } finally {
        clearInterval(ref);
      }
      const window = deltas.slice(from, from + N);
      ui.disconnect();
      expect(order[0]).toBe("snapshot");
      // At most 4 a second, on the hub's clock: N deltas span at least N - 2 intervals (one of
      // slack: each is stamped as its build starts, a moment after its timer's tick).
      expect((window.at(-1) as UiDelta).serverTime - window[0].serverTime).toBeGreaterThanOrEqual((N - 2) * 250);
      // And one every interval or so while samples flow: no more than two ticks of that timer each.
      expect(ticks).toBeLessThanOrEqual(2 * N);
      for (let i = 1; i < deltas.length; i++) expect(deltas[i].seq).toBe(deltas[i - 1].seq + 1);
      const withSample = window.find((d) => d.semaphores !== undefined) as UiDelta;
      expect(withSample.semaphores?.[0]).toMatchObject({ key: "checkout/web-1/db", t: expect.any(Number), last: expect.objectContaining({ id: "db" }) });
      expect(withSample.agents?.[0]).toMatchObject({ agentId: "a1", connected: true });
      // The fleet entry comes in every delta whose sample moved inUse from the fleet's that
      // dashboards hold (two deltas apart the sample may carry the same inUse again: then none).
      let held = snapshot?.fleet.find((f) => f.key === "checkout/db")?.inUse;
      let moved = 0;
      for (const d of deltas) {
        const now = d.semaphores?.find((s) => s.key === "checkout/web-1/db")?.last?.inUse;
        if (now !== undefined && now !== held) {
          expect(d.fleet?.[0], `delta ${d.seq}`).toMatchObject({ key: "checkout/db" });
          if (window.includes(d)) moved++;
        }
        held = d.fleet?.find((f) => f.key === "checkout/db")?.inUse ?? held;
      }
      expect(moved).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });

  it("sends a fleet entry in a delta only when it changed, and the key of one gone", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [info("db"), info("cache")]);
    await request(a, "samples", { seq: 0, t: T0, intervalMs: 1000, items: [sample("db", { inUse: 1 }), sample("cache", { inUse: 1 })] });
    const ui = await client(hub.url, "/ui");
    const deltas: UiDelta[] = [];
    ui.on("delta", (d: UiDelta) => deltas.push(d));
    // Only db moves: its fleet entry comes, cache's does not.
    await request(a, "samples", { seq: 1, t: T0 + 1000, intervalMs: 1000, items: [sample("db", { inUse: 2 })] });
    await waitUntil(() => deltas.some((d) => d.fleet !== undefined), "a delta with a fleet entry");
    const fleet = deltas.flatMap((d) => d.fleet ?? []);
    expect(fleet.map((f) => f.key)).toEqual(["checkout/db"]);
    expect(fleet[0].inUse).toBe(2);
    // cache unregistered: its group has no replica left.
    await request(a, "register", { semaphores: [info("db")] });
    await waitUntil(() => deltas.some((d) => d.removedFleet !== undefined), "a delta with a fleet removal");
    expect(deltas.flatMap((d) => d.removedFleet ?? [])).toEqual(["checkout/cache"]);
  });

  it("answers snapshot:get with a fleet holding every sample acknowledged before it was asked, between two deltas", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [info("db")]);
    const { socket: ui, deltas } = await dashboard(hub.url);
    for (let i = 0; i < 5; i++) {
      // A delta computes the fleet; the next sample is stored before the following delta (250 ms on).
      await request(a, "samples", { seq: 2 * i, t: T0 + 2 * i * 1000, intervalMs: 1000, items: [sample("db", { inUse: 1 })] });
      await waitUntil(() => deltas.some((d) => d.fleet?.some((f) => f.inUse === 1)), `the delta of round ${i}`);
      deltas.length = 0;
      await request(a, "samples", { seq: 2 * i + 1, t: T0 + (2 * i + 1) * 1000, intervalMs: 1000, items: [sample("db", { inUse: 7 })] });
      const snap = (await request<{ ok: boolean; snapshot: UiSnapshot }>(ui, "snapshot:get", {})).snapshot;
      expect(snap.state.semaphores[0].last?.inUse, `round ${i}`).toBe(7);
      expect(snap.fleet.find((f) => f.key === "checkout/db")?.inUse, `round ${i}`).toBe(7);
    }
  });

  it("sends a semaphore's identity in the first delta to mention it and after it changes, never in between", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [info("db")]);
    const ui = await client(hub.url, "/ui");
    const deltas: UiDelta[] = [];
    ui.on("delta", (d: UiDelta) => deltas.push(d));
    const entries = () => deltas.flatMap((d) => d.semaphores ?? []).filter((s) => s.key === "checkout/web-1/db");
    for (let i = 0; i < 3; i++) {
      await request(a, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [sample("db", { inUse: i + 1 })] });
      await waitUntil(() => entries().some((s) => s.last?.inUse === i + 1), `the delta with sample ${i}`);
    }
    expect(entries()[0]).toMatchObject({ agentId: "a1", service: "checkout", instance: "web-1", id: "db", name: "db" });
    for (const later of entries().slice(1)) {
      expect(later).not.toHaveProperty("agentId");
      expect(later).not.toHaveProperty("inUse");
    }
    // Another process takes the instance over: its agentId comes again, once.
    a.disconnect();
    const b = await agent(hub, "a2", [info("db")]);
    await request(b, "samples", { seq: 0, t: T0 + 5000, intervalMs: 1000, items: [sample("db", { inUse: 7 })] });
    await waitUntil(() => entries().some((s) => s.last?.inUse === 7), "the new agent's sample");
    expect(entries().filter((s) => s.agentId === "a2")).toHaveLength(1);
  });

  it("carries alert changes and removals in deltas", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [info("db"), info("gone")]);
    const ui = await client(hub.url, "/ui");
    const deltas: UiDelta[] = [];
    ui.on("delta", (d: UiDelta) => deltas.push(d));
    await request(a, "samples", { seq: 0, t: T0, intervalMs: 1000, items: [sample("db", { inUse: 5, available: 1 })] });
    await request(a, "register", { semaphores: [info("db")] });
    await waitUntil(() => deltas.some((d) => d.removed !== undefined) && deltas.some((d) => d.alerts !== undefined), "alert and removal deltas");
    const raised = deltas.flatMap((d) => d.alerts ?? []).find((c) => c.alert.rule === "leak");
    expect(raised?.kind).toBe("raised");
    expect(deltas.flatMap((d) => d.removed ?? [])).toEqual(["checkout/web-1/gone"]);
    expect(deltas.flatMap((d) => d.semaphores ?? []).find((s) => s.key === "checkout/web-1/db")?.status).toBe("leak");
  });

  it("answers history:get, fleet:get, fleet:history, alerts:get, alert:ack and thresholds:set, refusing bad requests", async () => {
    const hub = await startHub();
    const a = await agent(hub, "a1", [info("db")]);
    for (let i = 0; i < 5; i++) await request(a, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [sample("db", { inUse: i })] });
    await request(a, "samples", { seq: 5, t: T0 + 5000, intervalMs: 1000, items: [sample("db", { inUse: 5, available: 0 })] });
    const ui = await client(hub.url, "/ui");

    const h = await request<{ ok: boolean; window: Record<string, unknown> }>(ui, "history:get", { key: "checkout/web-1/db", columns: ["inUse"] });
    expect(h).toEqual({ ok: true, key: "checkout/web-1/db", window: { tier: "1s", length: 6, partialLast: false, t: [0, 1, 2, 3, 4, 5].map((i) => T0 + i * 1000), inUse: [0, 1, 2, 3, 4, 5] } });
    const m = await request<{ ok: boolean; window: { tier: string } }>(ui, "history:get", { key: "checkout/web-1/db", tier: "1m", from: T0 - 3_600_000, to: T0 + 10_000 });
    expect(m.window.tier).toBe("1m");
    expect(await request(ui, "history:get", { key: "nope" })).toEqual({ ok: false, error: "no history for nope" });
    expect(await request(ui, "history:get", { key: 5 })).toEqual({ ok: false, error: "key: must be a string" });

    const fleet = await request<{ ok: boolean; fleet: { key: string }[] }>(ui, "fleet:get", {});
    expect(fleet.fleet.map((f) => f.key)).toEqual(["checkout/db"]);
    const fh = await request<{ ok: boolean; window: { replicas: number[] } }>(ui, "fleet:history", { service: "checkout", name: "db" });
    expect(fh.window.replicas.length).toBe(6);

    const alerts = await request<{ ok: boolean; alerts: { id: string; rule: string }[] }>(ui, "alerts:get", {});
    const leak = alerts.alerts.find((x) => x.rule === "leak")!;
    const acked = await request<{ ok: boolean; alert: { acknowledged: boolean } }>(ui, "alert:ack", { id: leak.id });
    expect(acked.alert.acknowledged).toBe(true);
    expect(await request(ui, "alert:ack", { id: "nope" })).toEqual({ ok: false, error: "no such alert" });

    const th = await request<{ ok: boolean; thresholds: { starvation: { minWaitMs: number } } }>(ui, "thresholds:set", { patch: { starvation: { minWaitMs: 9000 } } });
    expect(th.thresholds.starvation.minWaitMs).toBe(9000);
    const badTh = await request<AckAnswer>(ui, "thresholds:set", { patch: { starvation: { minWaitMs: -1 } } });
    expect(badTh.ok).toBe(false);
    expect(badTh.error).toMatch(/starvation\.minWaitMs/);
    expect((await request<AckAnswer>(ui, "nope:nope", {})).error).toBe("unknown event");
    expect(hub.state().hub.rejected).toBe(5);
  });

  it("drops a dashboard that stops reading, and keeps serving the others", async () => {
    const hub = await startHub({ ui: { maxBufferedPackets: 4 } });
    const a = await agent(hub, "a1", [info("db")]);
    const healthy = await client(hub.url, "/ui");
    let healthyDeltas = 0;
    healthy.on("delta", () => healthyDeltas++);

    // A raw engine.io polling client: opens a session, joins /ui, then never polls again, so
    // everything the hub sends it piles up in the hub's write buffer.
    const base = `${hub.url}/socket.io/?EIO=4&transport=polling`;
    const open = await (await fetch(base)).text();
    const sid = (JSON.parse(open.slice(1)) as { sid: string }).sid;
    const joined = await fetch(`${base}&sid=${sid}`, { method: "POST", body: '40/ui,{"protocol":1}', headers: { "Content-Type": "text/plain;charset=UTF-8" } });
    expect(await joined.text()).toBe("ok");
    await waitUntil(async () => (await getJson<{ uiClients: number }>(hub, "/api/stats")).body.uiClients === 2, "the stalled dashboard to join");

    const stop = stream(a, 20);
    try {
      await waitUntil(async () => (await getJson<{ uiDropped: number }>(hub, "/api/stats")).body.uiDropped === 1, "the stalled dashboard to be dropped", 10_000);
      const before = healthyDeltas;
      await sleep(600);
      expect(healthyDeltas).toBeGreaterThan(before);
    } finally {
      stop();
    }
    expect(healthy.connected).toBe(true);
    expect((await getJson<{ uiClients: number }>(hub, "/api/stats")).body.uiClients).toBe(1);
    // Its session is gone: a late poll is refused.
    const late = await fetch(`${base}&sid=${sid}`);
    expect(late.status).toBe(400);
  });
});
