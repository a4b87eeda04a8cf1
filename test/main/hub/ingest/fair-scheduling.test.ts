// The hub's agent scheduler (main/hub/ingest/agent-scheduler.ts) and sliced storing (store-pipeline.ts
// StoreJob): a connection over its work budget is slowed, never refused (unless it polls); big
// batches do not hold up other agents; and a batch stored in slices, with another service's
// messages in between, leaves the engine exactly as the whole batch would (so replays still match).
import { afterEach, describe, expect, it } from "vitest";
import { AgentScheduler, Lane, SLICE_ITEMS, type Item } from "../../../../main/hub/ingest/agent-scheduler.js";
import type { Job } from "../../../../main/hub/ingest/agent-session.js";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { AddressBudgets, CombinedBudget } from "../../../../main/hub/ingest/rate-limit.js";
import { TokenBucket } from "../../../../main/hub/socket/token-bucket.js";
import type { Alert, SamplesBatch } from "../../../../shared/protocol/index.js";
import { agent, cleanupAll, client, hello, info, request, sample, startHub, summaryOf, T0, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const items = (n: number, over = {}) => Array.from({ length: n }, (_, i) => sample(`s${i}`, over));
const batch = (seq: number, list = items(1), t = T0 + seq * 1000) => ({ seq, t, intervalMs: 1000, items: list });

describe("the work budget", () => {
  it("slows a connection over it without refusing anything, and another agent meanwhile is answered at once", async () => {
    const hub = await startHub({ agentBudget: { itemsPerSecond: 4000, burst: 1000 } });
    const heavy = await agent(hub, "heavy", [], { instance: "heavy" });
    const light = await agent(hub, "light", [info("db")], { service: "other", instance: "light" });
    // 16 batches of 500 (each costs 501 of the budget, the semaphores' first batch more): an
    // honest agent's backlog, all sent at once.
    const started = performance.now();
    const answers = Promise.all(Array.from({ length: 16 }, (_, i) => request<AckAnswer>(heavy, "samples", batch(i, items(500)), 20_000)));
    const lightMs: number[] = [];
    let stop = false;
    const probing = (async () => {
      for (let seq = 0; !stop; seq++) {
        const t0 = performance.now();
        expect(await request<AckAnswer>(light, "samples", batch(seq))).toEqual({ ok: true, seq });
        lightMs.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const acks = await answers;
    const took = performance.now() - started;
    stop = true;
    await probing;
    expect(acks).toEqual(acks.map((_, seq) => ({ ok: true, seq })));
    // (16 × 501 − 1,000) / 4,000 per second ≈ 1.75 s at least.
    expect(took).toBeGreaterThan(1700);
    expect(hub.state().hub.rejected).toBe(0);
    // Waiting on its budget, the heavy connection holds up no one: the light agent, one request
    // at a time, was answered again and again meanwhile (how fast is bench:hub's business).
    expect(lightMs.length).toBeGreaterThan(10);
  });

  it("is shared by every connection from one address: more connections do not multiply it", async () => {
    // Alone, each connection could store its 4 batches in ~0.1 s; together they are paced as one.
    const hub = await startHub({ agentBudget: { itemsPerSecond: 10_000, burst: 1000 }, agentAddressBudget: { itemsPerSecond: 1000, burst: 500 } });
    const conns = await Promise.all([0, 1, 2, 3].map((i) => agent(hub, `multi-${i}`, [], { service: "multi", instance: `m${i}` })));
    const light = await agent(hub, "light", [info("db")], { service: "other", instance: "light" });
    const started = performance.now();
    // Each streams its 4 batches one after another, as an agent does.
    const stream = async (s: (typeof conns)[number]) => {
      const out: AckAnswer[] = [];
      for (let i = 0; i < 4; i++) out.push(await request<AckAnswer>(s, "samples", batch(i, items(250)), 30_000));
      return out;
    };
    const answers = Promise.all(conns.map(stream));
    // The budget is the address's: another connection from it waits its turn too, but is answered.
    expect(await request<AckAnswer>(light, "samples", batch(0), 30_000)).toEqual({ ok: true, seq: 0 });
    const acks = (await answers).flat();
    const took = performance.now() - started;
    expect(acks.every((a) => a.ok)).toBe(true);
    expect(hub.state().hub.rejected).toBe(0);
    // 16 batches of 251 from one address against 1,000 a second after a burst of 500. A message
    // is read only while the budget is not below zero, and then charged; the last one is read
    // after all but at most 4 (one per connection, read together when the budget came back).
    expect(took).toBeGreaterThan((16 - 4) * 251 - 500);
    expect(hub.history.get("multi/m3/s249")?.latestT()).not.toBeNull();
  }, 40_000);

  it("refuses, as over its rate, what a long-polling connection sends while over budget (it cannot be paused)", async () => {
    const hub = await startHub({ agentBudget: { itemsPerSecond: 100, burst: 600 } });
    const s = await client(hub.url, "/agent", { transports: ["polling"] });
    expect((await request<AckAnswer>(s, "hello", hello("p1"))).ok).toBe(true);
    const acks = await Promise.all(Array.from({ length: 4 }, (_, i) => request<AckAnswer>(s, "samples", batch(i, items(500)))));
    expect(acks[0]).toEqual({ ok: true, seq: 0 });
    expect(acks.slice(1).some((a) => a.ok === false && a.error === "rate limit exceeded")).toBe(true);
    expect(hub.state().hub.rejected).toBe(acks.filter((a) => !a.ok).length);
  });
});

describe("big batches in slices", () => {
  it("stores a 1,000-item batch whole, and a message from another service gets in while it is stored", async () => {
    const hub = await startHub();
    const big = await agent(hub, "big", [], { service: "bulk", instance: "b1" });
    const small = await agent(hub, "small", [info("db")], { service: "other", instance: "s1" });
    const order: string[] = [];
    const bigAck = request<AckAnswer>(big, "samples", batch(0, items(1000))).then((a) => (order.push("big"), a));
    const smallAck = request<AckAnswer>(small, "samples", batch(0)).then((a) => (order.push("small"), a));
    expect(await bigAck).toEqual({ ok: true, seq: 0 });
    expect(await smallAck).toEqual({ ok: true, seq: 0 });
    // The small one was sent second and answered first: it did not wait for the 1,000 items.
    expect(order).toEqual(["small", "big"]);
    expect(hub.state().semaphores.filter((s) => s.service === "bulk")).toHaveLength(1000);
    expect(hub.history.get("bulk/b1/s999")?.latestT()).not.toBeNull();
  });

  it("is answered in order per connection", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", [], { service: "bulk", instance: "b1" });
    const acks = Promise.all([request<AckAnswer>(s, "samples", batch(0, items(1000))), request<AckAnswer>(s, "samples", batch(1, items(3))), request<AckAnswer>(s, "events", { items: [] })]);
    expect(await acks).toEqual([{ ok: true, seq: 0 }, { ok: true, seq: 1 }, { ok: true }]);
  });
});

describe("AgentScheduler", () => {
  const hooks = (busy: (service?: string) => boolean = () => false) => ({ busy, guard: <T>(_w: string, _f: T, fn: () => T) => fn() });
  const transport = () => {
    const calls: string[] = [];
    return { calls, pausable: () => true, pause: () => void calls.push("pause"), resume: () => void calls.push("resume") };
  };
  /** A job of `steps` slices that logs each. */
  const job = (log: string[], name: string, steps: number): Job => {
    let done = 0;
    return {
      get work() {
        return done * SLICE_ITEMS;
      },
      step: () => {
        log.push(`${name}.${done}`);
        return ++done === steps ? { ok: true } : undefined;
      },
    };
  };
  const settled = () => new Promise((r) => setTimeout(r, 50));

  it("runs a lane's messages in order, its last (the disconnect) after everything it sent", async () => {
    const sched = new AgentScheduler(hooks());
    const lane = sched.add(new Lane({ service: "a" }, transport(), new TokenBucket(1e6, 1e6)));
    const log: string[] = [];
    const answers: unknown[] = [];
    sched.push(lane, { run: () => job(log, "big", 3), answer: (a) => answers.push(a) }, 1);
    sched.push(lane, { run: () => (log.push("small"), { ok: true, n: 2 }), answer: (a) => answers.push(a) }, 1);
    sched.end(lane, { run: () => (log.push("close"), { ok: true }), answer: () => undefined });
    await settled();
    expect(log).toEqual(["big.0", "big.1", "big.2", "small", "close"]);
    expect(answers).toEqual([{ ok: true }, { ok: true, n: 2 }]);
    expect(sched.push(lane, { run: () => ({ ok: true }), answer: () => undefined }, 1)).toBe(false);
  });

  it("answers a message at once when nothing else waits, and queues it behind what does", async () => {
    const sched = new AgentScheduler(hooks());
    const t = transport();
    const a = sched.add(new Lane({ service: "a" }, t, new TokenBucket(1e6, 1e6)));
    const b = sched.add(new Lane({ service: "b" }, transport(), new TokenBucket(1e6, 1e6)));
    const log: string[] = [];
    // Idle: answered inside push(), the socket never paused.
    sched.push(a, { run: () => (log.push("a1"), { ok: true }), answer: () => log.push("answer a1") }, 1);
    expect(log).toEqual(["a1", "answer a1"]);
    expect(t.calls).toEqual([]);
    // A big batch runs its first slice at once; the rest, and what arrives meanwhile, wait their turns.
    sched.push(a, { run: () => job(log, "big", 3), answer: () => log.push("answer big") }, 1);
    sched.push(b, { run: () => (log.push("b1"), { ok: true }), answer: () => log.push("answer b1") }, 1);
    expect(log).toEqual(["a1", "answer a1", "big.0"]);
    await settled();
    expect(log.slice(3)).toEqual(["b1", "answer b1", "big.1", "big.2", "answer big"]);
  });

  it("sends an answer known early before the rest of its work, and only once", () => {
    const sched = new AgentScheduler(hooks());
    const lane = sched.add(new Lane({ service: "a" }, transport(), new TokenBucket(1e6, 1e6)));
    const log: string[] = [];
    let steps = 0;
    const early: Job & { early?: { ok: true } } = {
      work: 0,
      step: () => {
        log.push(`step ${++steps}`);
        if (steps === 1) {
          early.early = { ok: true };
          return undefined;
        }
        return { ok: true };
      },
    };
    sched.push(lane, { run: () => early, answer: () => log.push("answer") }, 1);
    expect(log).toEqual(["step 1", "answer", "step 2"]);
  });

  it("lets a light lane in between the slices of a heavy one", async () => {
    const sched = new AgentScheduler(hooks());
    const heavy = sched.add(new Lane({ service: "h" }, transport(), new TokenBucket(1e6, 1e6)));
    const light = sched.add(new Lane({ service: "l" }, transport(), new TokenBucket(1e6, 1e6)));
    const log: string[] = [];
    sched.push(heavy, { run: () => job(log, "heavy", 6), answer: () => undefined }, 1);
    sched.push(light, { run: () => (log.push("light"), { ok: true }), answer: () => undefined }, 1);
    await settled();
    expect(log.indexOf("light")).toBeLessThan(log.indexOf("heavy.5"));
    expect(log.indexOf("light")).toBeLessThanOrEqual(2);
  });

  it("keeps a lane whose service has a batch half stored waiting (a hello claiming it too), not others", async () => {
    let storing: string | undefined = "s";
    const sched = new AgentScheduler(hooks((svc) => (svc === undefined ? storing !== undefined : svc === storing)));
    const log: string[] = [];
    const lane = (service: string | undefined) => sched.add(new Lane({ service }, transport(), new TokenBucket(1e6, 1e6)));
    const item = (name: string, claims?: string): Item => ({ run: () => (log.push(name), { ok: true }), claims, answer: () => undefined });
    sched.push(lane("s"), item("same"), 1);
    sched.push(lane(undefined), item("hello s", "s"), 1);
    sched.push(lane("o"), item("hello s on o", "s"), 1);
    sched.push(lane("o"), item("other"), 1);
    // Before hello, anything but a hello is refused without touching the engine: it may run.
    sched.push(lane(undefined), item("before hello"), 1);
    sched.push(lane(undefined), item("hello o", "o"), 1);
    await settled();
    expect(log.sort()).toEqual(["before hello", "hello o", "other"]);
    storing = undefined;
    sched.push(lane("o"), item("later"), 1);
    await settled();
    expect(log.slice(3).sort()).toEqual(["hello s", "hello s on o", "later", "same"]);
  });

  // Replicas of one service: one's big batch is stored in slices, and the others' messages, queued
  // meanwhile, must run as soon as it is done, not wait for some other message (or the next tick)
  // to wake the scheduler.
  it("runs lanes that waited for their service's half-stored batch as soon as it is stored, with nothing else arriving", async () => {
    let storing: string | undefined;
    const sched = new AgentScheduler(hooks((svc) => storing !== undefined && (svc === undefined || svc === storing)));
    const log: string[] = [];
    const lane = () => sched.add(new Lane({ service: "s" }, transport(), new TokenBucket(1e6, 1e6)));
    let left = 3;
    const big: Job = {
      work: 0,
      step: () => {
        log.push(`big.${3 - left}`);
        storing = --left > 0 ? "s" : undefined;
        return left > 0 ? undefined : { ok: true };
      },
    };
    sched.push(lane(), { run: () => big, answer: () => log.push("answer big") }, 1);
    for (const name of ["r1", "r2"]) sched.push(lane(), { run: () => (log.push(name), { ok: true }), answer: () => log.push(`answer ${name}`) }, 1);
    await settled();
    expect(log).toEqual(["big.0", "big.1", "big.2", "answer big", "r1", "answer r1", "r2", "answer r2"]);
  });

  it("stops reading a lane over its budget until the budget is back, and refuses nothing", async () => {
    const sched = new AgentScheduler(hooks());
    const t = transport();
    const lane = sched.add(new Lane({ service: "a" }, t, new TokenBucket(1000, 100)));
    let answered = 0;
    for (let i = 0; i < 3; i++) expect(sched.push(lane, { run: () => ({ ok: true }), answer: () => answered++ }, 100)).toBe(true);
    expect(t.calls).toEqual(["pause"]);
    await settled();
    expect(answered).toBe(3);
    // 300 charged against 100: back to zero 200 ms later.
    expect(t.calls).toEqual(["pause"]);
    await waitUntil(() => t.calls.length === 2, "the resume", 2000);
    expect(t.calls).toEqual(["pause", "resume"]);
  });
});

describe("budgets by address", () => {
  it("charge every connection from the address, and are forgotten with the last of them", () => {
    const budgets = new AddressBudgets(1000, 100);
    const a = new CombinedBudget([new TokenBucket(1e6, 1e6), budgets.acquire("10.0.0.1")]);
    const b = new CombinedBudget([new TokenBucket(1e6, 1e6), budgets.acquire("10.0.0.1")]);
    const other = new CombinedBudget([new TokenBucket(1e6, 1e6), budgets.acquire("10.0.0.2")]);
    const own = new CombinedBudget([new TokenBucket(10, 10), budgets.acquire("10.0.0.2")]);
    const now = performance.now();
    a.charge(150, now);
    // 50 over a budget refilling at 1 a millisecond: b waits 50 ms for what a did; the other address not at all.
    expect(b.waitMs(now)).toBeCloseTo(50, 6);
    expect(other.waitMs(now)).toBe(0);
    // Its own budget counts too: the longer wait wins.
    own.charge(20, now);
    expect(own.waitMs(now)).toBeCloseTo(1000, 6);
    expect(budgets.size).toBe(2);
    budgets.release("10.0.0.2");
    budgets.release("10.0.0.2");
    budgets.release("10.0.0.1");
    budgets.release("10.0.0.1");
    expect(budgets.size).toBe(0);
    expect(budgets.acquire("10.0.0.1").waitMs()).toBe(0);
  });
});

describe("a batch stored in slices", () => {
  /** Two agents of different services; agent "x"'s batches go in slices of `slice`, with "y"'s messages after each slice. */
  function run(slice: number | "whole"): { alerts: Alert[]; latest: unknown } {
    let clock = T0;
    const core = new HubCore({ now: () => clock, version: "t", thresholds: {}, maxHistories: 100, forgetAfterMs: 0, recorder: undefined });
    const x = core.hello(1, hello("x", { service: "sx", instance: "x1" }));
    const y = core.hello(2, hello("y", { service: "sy", instance: "y1" }));
    core.register(x, { semaphores: Array.from({ length: 12 }, (_, i) => info(`s${i}`, { cap: 10, budget: 15 })) });
    const convoy = { inUse: 10, available: 0, waiters: 4, oldestWaitMs: 6000, acquired: 20, released: 20, timeouts: 9, waitMs: summaryOf(...Array<number>(20).fill(400)), holdMs: summaryOf(50) };
    let ySeq = 0;
    for (let seq = 0; seq < 12; seq++) {
      clock += 1000;
      const list = items(12, seq < 8 ? convoy : { inUse: 1, available: 9 });
      list[seq % 12] = sample(`s${seq % 12}`, { inUse: 11, available: 0, doubleReleases: 1 });
      const b: SamplesBatch = batch(seq, list);
      const start = core.startSamples(x, b);
      if (!start.ok || start.duplicate) throw new Error("not started");
      for (;;) {
        if (start.job.step(slice === "whole" ? Infinity : slice)) break;
        // Another service's input between two slices.
        clock += 1;
        core.samples(y, batch(ySeq++, [sample("db", { inUse: 10, waiters: ySeq % 3, doubleReleases: ySeq % 5 === 0 ? 1 : 0 })], T0 + ySeq * 500));
      }
      if (slice === "whole") {
        for (let k = 0; k < 3; k++) {
          clock += 1;
          core.samples(y, batch(ySeq++, [sample("db", { inUse: 10, waiters: ySeq % 3, doubleReleases: ySeq % 5 === 0 ? 1 : 0 })], T0 + ySeq * 500));
        }
      }
    }
    return { alerts: core.engine.allAlerts().filter((a) => a.service === "sx").sort((a, b) => a.id.localeCompare(b.id)), latest: core.history.get("sx/x1/s3")?.window("1s", -Infinity, Infinity) };
  }

  it("leaves the engine and the history exactly as the whole batch does", () => {
    const whole = run("whole");
    expect(whole.alerts.map((a) => a.rule)).toEqual(expect.arrayContaining(["convoy", "double_release", "leak"]));
    for (const slice of [1, 5]) expect(run(slice)).toEqual(whole);
  });

  it("is finished first by anything that could see it half done (the tick, a person's change, the same service)", () => {
    const core = new HubCore({ now: () => T0, version: "t", thresholds: {}, maxHistories: 2000, forgetAfterMs: 0, recorder: undefined });
    const x = core.hello(1, hello("x", { service: "sx", instance: "x1" }));
    const x2 = core.hello(2, hello("x2", { service: "sx", instance: "x2" }));
    const settles = [
      () => core.tick(),
      () => core.setThresholds({}),
      () => core.touch(x2),
      () => core.hello(3, hello("z", { service: "sx" })),
      // A resumed agent leaving the service.
      () => core.hello(4, hello("x2", { service: "elsewhere" })),
    ];
    for (const [seq, settle] of settles.entries()) {
      const start = core.startSamples(x, batch(seq, items(100)));
      if (!start.ok || start.duplicate) throw new Error("not started");
      start.job.step(10);
      expect(core.ingest.busy("sx")).toBe(true);
      settle();
      expect(start.job.done).toBe(true);
      expect(core.ingest.busy()).toBe(false);
    }
  });
});
