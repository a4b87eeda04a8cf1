// Deferred stores (store-pipeline.ts StorePipeline.defer): a small samples batch is acknowledged at once and
// stored a little later, with the others that arrive meanwhile. Nothing may tell: the engine and
// the history end exactly as if every batch were stored as it came, whatever the flushes, because
// every other input (events, the tick, more of the same service) and every read through the hub
// stores what waits first.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { SLICE_ITEMS } from "../../../../main/hub/ingest/agent-scheduler.js";
import type { Ack } from "../../../../shared/protocol/index.js";
import { AgentSession, isJob, type Job } from "../../../../main/hub/ingest/agent-session.js";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { MAX_DEFERRED_JOBS } from "../../../../main/hub/core/store-pipeline.js";
import type { Alert, Sample } from "../../../../shared/protocol/index.js";
import { agent, cleanupAll, dashboard, getJson, hello, info, request, sample, startHub, summaryOf, T0, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const RATE = { perSecond: 1e9, burst: 1e9 };
const batch = (seq: number, list: Sample[], t = T0 + seq * 1000) => ({ seq, t, intervalMs: 1000, items: list });

/** Runs one samples message as the scheduler does (agent-scheduler.ts runOne): a slice, the early answer, the rest. */
function send(session: AgentSession, payload: unknown): Ack {
  const r = session.process("samples", payload);
  if (!isJob(r)) return r;
  const job: Job = r;
  let answer = job.step(SLICE_ITEMS);
  if (answer === undefined && job.early !== undefined) answer = job.step(SLICE_ITEMS);
  while (answer === undefined) answer = job.step(SLICE_ITEMS);
  return answer;
}

type Input = { kind: "samples"; agent: number; items: Sample[] } | { kind: "events"; agent: number } | { kind: "tick" };

/**
 * Three agents (two of service "sx", one of "sy") send `inputs` in order; with `flushes` given,
 * stores are deferred and flushed only after the inputs where it says true. Returns what the
 * engine and the history hold at the end, read the way every reader does (through settled()).
 */
function run(inputs: readonly Input[], flushes?: readonly boolean[]): { alerts: Alert[]; windows: unknown[]; semaphores: unknown[]; deferred: number } {
  let clock = T0;
  let deferred = 0;
  const core = new HubCore({
    now: () => clock,
    version: "t",
    thresholds: {},
    maxHistories: 100,
    forgetAfterMs: 0,
    recorder: undefined,
    deferStores: flushes === undefined ? undefined : () => undefined,
  });
  const sessions = [
    { s: new AgentSession(core, 1, RATE), h: hello("x1", { service: "sx", instance: "x1" }) },
    { s: new AgentSession(core, 2, RATE), h: hello("x2", { service: "sx", instance: "x2" }) },
    { s: new AgentSession(core, 3, RATE), h: hello("y1", { service: "sy", instance: "y1" }) },
  ];
  for (const { s, h } of sessions) {
    expect(s.handle("hello", h).ok).toBe(true);
    expect(s.handle("register", { semaphores: [info("db", { cap: 10, budget: 15 }), info("api", { cap: 10 })] }).ok).toBe(true);
  }
  const seqs = [0, 0, 0];
  for (const [i, input] of inputs.entries()) {
    clock += 250;
    if (input.kind === "tick") core.tick();
    else if (input.kind === "events") {
      expect(sessions[input.agent].s.process("events", { items: [{ t: clock, id: "db", type: "double_release", holderId: "db#1" }] })).toEqual({ ok: true });
    } else {
      const seq = seqs[input.agent]++;
      const { h } = sessions[input.agent];
      // Read without settling: was it stored, or put off?
      const stored = () => ["db", "api", "cache"].map((id) => core.history.get(`${h.service}/${h.instance}/${id}`)?.latestT() ?? null).join();
      const before = stored();
      expect(send(sessions[input.agent].s, batch(seq, input.items, T0 + (seq + 1) * 1000))).toEqual({ ok: true, seq });
      if (stored() === before) deferred++;
    }
    if (flushes?.[i] === true) core.ingest.flush();
  }
  core.ingest.settled();
  const keys = ["sx/x1/db", "sx/x2/db", "sy/y1/api"];
  return {
    alerts: core.engine.allAlerts().sort((a, b) => a.id.localeCompare(b.id)),
    windows: keys.map((k) => core.history.get(k)?.window("1s", -Infinity, Infinity)),
    // Each semaphore's latest sample and status: a deferred batch's items are stored from reused
    // objects (sample-arena.ts), and a store that kept one would show another's numbers here.
    semaphores: core.registry.semaphores(),
    deferred,
  };
}

const convoy = (id: string): Sample =>
  sample(id, { inUse: 10, available: 0, waiters: 4, oldestWaitMs: 6000, acquired: 20, released: 20, timeouts: 9, waitMs: summaryOf(...Array<number>(20).fill(400)), holdMs: summaryOf(50) });
const calm = (id: string): Sample => sample(id, { inUse: 1, available: 9 });

// "cache" is never registered: the engine knows it by the id its samples carry.
const inputArb: fc.Arbitrary<Input> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("samples" as const), agent: fc.integer({ min: 0, max: 2 }), items: fc.subarray(["db", "api", "cache"], { minLength: 1 }).chain((ids) => fc.tuple(...ids.map((id) => fc.constantFrom(convoy(id), calm(id))))) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("events" as const), agent: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "tick" as const }) },
);

describe("deferred stores", () => {
  it("end with the engine and the history exactly as stores made at once, wherever the flushes fall", () => {
    fc.assert(
      fc.property(fc.array(inputArb, { minLength: 1, maxLength: 40 }).chain((inputs) => fc.tuple(fc.constant(inputs), fc.array(fc.boolean(), { minLength: inputs.length, maxLength: inputs.length }))), ([inputs, flushes]) => {
        const now = run(inputs);
        const later = run(inputs, flushes);
        expect(now.deferred).toBe(0);
        expect(later.alerts).toEqual(now.alerts);
        expect(later.windows).toEqual(now.windows);
        expect(later.semaphores).toEqual(now.semaphores);
      }),
      { numRuns: 60 },
    );
  });

  it("are put off only where asked, and raise the alerts a fixed stream raises", () => {
    const inputs: Input[] = [];
    for (let k = 0; k < 12; k++) for (const a of [0, 1, 2]) inputs.push({ kind: "samples", agent: a, items: [k < 8 ? convoy("db") : calm("db"), calm("api")] });
    inputs.push({ kind: "events", agent: 0 });
    const later = run(inputs, inputs.map((_, i) => i % 7 === 6));
    // Every batch was put off (none read stored right after its ack): the property above is not empty.
    expect(later.deferred).toBe(36);
    expect(later.alerts.map((a) => `${a.rule} ${a.key}`)).toEqual(expect.arrayContaining(["convoy sx/x1/db", "convoy sy/y1/db", "double_release sx/x1/db"]));
    expect(later).toEqual({ ...run(inputs), deferred: 36 });
  });

  it("ask for a flush when the first is put off, and at once when MAX_DEFERRED_JOBS wait", () => {
    const calls: boolean[] = [];
    const core = new HubCore({ now: () => T0, version: "t", thresholds: {}, maxHistories: 10, forgetAfterMs: 0, recorder: undefined, deferStores: (urgent) => calls.push(urgent) });
    const session = new AgentSession(core, 1, RATE);
    session.handle("hello", hello("a"));
    for (let seq = 0; seq < MAX_DEFERRED_JOBS; seq++) send(session, batch(seq, [calm("db")]));
    expect(calls).toEqual([false, true]);
    expect(core.history.get("checkout/web-1/db")).toBeUndefined();
    core.ingest.flush();
    expect(core.history.get("checkout/web-1/db")?.window("1s", -Infinity, Infinity).length).toBe(MAX_DEFERRED_JOBS);
    // The next one asks again.
    send(session, batch(MAX_DEFERRED_JOBS, [calm("db")]));
    expect(calls).toEqual([false, true, false]);
    // handle() stores a message whole, as it says: the one put off before it too.
    expect(session.handle("samples", batch(MAX_DEFERRED_JOBS + 1, [calm("db")]))).toEqual({ ok: true, seq: MAX_DEFERRED_JOBS + 1 });
    expect(core.history.get("checkout/web-1/db")?.window("1s", -Infinity, Infinity).length).toBe(MAX_DEFERRED_JOBS + 2);
  });

  it("are stored before a big batch of their service is stored in slices", () => {
    const core = new HubCore({ now: () => T0, version: "t", thresholds: {}, maxHistories: 2000, forgetAfterMs: 0, recorder: undefined, deferStores: () => undefined });
    const small = new AgentSession(core, 1, RATE);
    const big = new AgentSession(core, 2, RATE);
    small.handle("hello", hello("small", { service: "sx", instance: "a" }));
    big.handle("hello", hello("big", { service: "sx", instance: "b" }));
    send(small, batch(0, [calm("db")]));
    send(small, batch(1, [calm("db")]));
    expect(core.history.get("sx/a/db")).toBeUndefined();
    const job = big.process("samples", batch(0, Array.from({ length: 500 }, (_, i) => calm(`s${i}`))));
    if (!isJob(job)) throw new Error("not a job");
    // Checked a slice at a time, then stored a slice at a time: up to its first stored slice.
    while (core.history.get("sx/b/s0") === undefined) expect(job.step(SLICE_ITEMS)).toBeUndefined();
    expect(job.early).toBeUndefined();
    expect(core.history.get("sx/b/s499")).toBeUndefined();
    // The two batches accepted before it were stored first.
    expect(core.history.get("sx/a/db")?.window("1s", -Infinity, Infinity).length).toBe(2);
    expect(core.ingest.busy("sx")).toBe(true);
  });
});

describe("deferred stores in a running hub", () => {
  it("are in what HTTP, a dashboard and the hub's own API read right after the ack, and stored within moments anyway", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", [info("db")]);
    expect(await request<AckAnswer>(s, "samples", batch(0, [sample("db", { inUse: 7, available: 3 })]))).toEqual({ ok: true, seq: 0 });
    expect((await getJson<{ histories: number }>(hub, "/api/stats")).body.histories).toBe(1);
    const state = await getJson<{ semaphores: { key: string; inUse: number }[] }>(hub, "/api/state");
    expect(state.body.semaphores).toEqual([expect.objectContaining({ key: "checkout/web-1/db", inUse: 7 })]);

    expect(await request<AckAnswer>(s, "samples", batch(1, [sample("db", { inUse: 8, available: 2 })]))).toEqual({ ok: true, seq: 1 });
    const ui = await dashboard(hub.url);
    expect(ui.snapshot.state.semaphores.map((x) => [x.key, x.inUse])).toEqual([["checkout/web-1/db", 8]]);

    expect(await request<AckAnswer>(s, "samples", batch(2, [sample("db", { inUse: 9, available: 1 })]))).toEqual({ ok: true, seq: 2 });
    expect(hub.state().semaphores.map((x) => x.inUse)).toEqual([9]);

    // Held from before (not a read through the hub): stored by the hub's own flush, soon after.
    const h = hub.history.get("checkout/web-1/db")!;
    expect(await request<AckAnswer>(s, "samples", batch(3, [sample("db", { inUse: 1, available: 9 })]))).toEqual({ ok: true, seq: 3 });
    await waitUntil(() => h.latestT() === T0 + 3000, "the deferred store", 1000);
  });
});
