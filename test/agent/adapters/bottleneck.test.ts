// bottleneck under instrument(): the limiter's own counts as gauges, every job's wait and hold
// through schedule(), submit() and wrap(), a job that never finishes reported as a leak at the
// caller's line, drops counted as rejections and an expired job as a lease expiry, untrack()
// putting the methods back; and a Redis-clustered limiter (a real redis-server this file starts)
// reported with scope "global" and the cluster's running weight and clients in `global`.
// Not run through the shared semantic suite: bottleneck moves every job through setTimeout(0)
// (its datastore's yieldLoop), which the suite's virtual clock holds back: a zero-delay timer set
// while fake timers run is given 1 ms, so no flush reaches it without moving the clock the suite
// measures waits with.
import Bottleneck from "bottleneck";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { startRedis, type RedisServer } from "../../../scripts/support/redis.js";
import { here } from "../semantic-suite.js";
import { eventsOf, rejectionOf, sleep, thrownBy, tracked, uniqueName, until } from "./helpers.js";

/** Jobs that each wait on a gate of their own, opened oldest first. */
function gated(): { task: <T>(v: T) => () => Promise<T>; open: () => void; readonly count: number } {
  const gates: (() => void)[] = [];
  return {
    task: (v) => () => new Promise((r) => gates.push(() => r(v))),
    open: () => gates.shift()?.(),
    get count() {
      return gates.length;
    },
  };
}

const firstFrame = (stack: string | undefined): string => (stack ?? "").split("\n").find((l) => /^\s*at /.test(l)) ?? "";

describe("bottleneck adapter (local datastore)", () => {
  it("reports the limiter's own counts (maxConcurrent, running weight, received + queued) and times every job", async () => {
    const lim = new Bottleneck({ maxConcurrent: 2 });
    const h = tracked(instrument(lim, { name: uniqueName("bn") }));
    expect(h.describe()).toMatchObject({ kind: "bottleneck", cap: 2, queue: "priority", scope: "process" });
    const g = gated();
    const results = [1, 2, 3, 4, 5].map((i) => lim.schedule(g.task(i)));
    await until(() => g.count === 2, "two jobs running");
    const c = lim.counts();
    expect(h.snapshot()).toMatchObject({ cap: 2, inUse: await lim.running(), waiters: c.RECEIVED + c.QUEUED });
    expect(h.snapshot()).toMatchObject({ inUse: 2, waiters: 3 });
    for (let done = 0; done < 5; done++) {
      await until(() => g.count > 0, "a running job");
      g.open();
    }
    expect(await Promise.all(results)).toEqual([1, 2, 3, 4, 5]);
    await until(() => h.snapshot().inUse === 0, "all freed");
    const s = h.sample(Date.now());
    expect(s).toMatchObject({ acquired: 5, released: 5, inUse: 0, waiters: 0, rejections: 0 });
    expect(s.waitMs.count).toBe(5);
    expect(s.holdMs.count).toBe(5);
  });

  it("a weighted job holds its weight; submit() and wrap() are seen like schedule(), results and errors unchanged", async () => {
    const lim = new Bottleneck({ maxConcurrent: 3 });
    const h = tracked(instrument(lim, { name: uniqueName("bn") }));
    const g = gated();
    const heavy = lim.schedule({ weight: 2 }, g.task("heavy"));
    await until(() => g.count === 1, "the heavy job running");
    expect(h.snapshot()).toMatchObject({ inUse: 2, holders: [{ weight: 2 }] });
    g.open();
    expect(await heavy).toBe("heavy");
    const viaSubmit = await new Promise((resolve) => lim.submit((x: number, cb: (err: unknown, v?: number) => void) => cb(null, x * 2), 21, (_err: unknown, v?: number) => resolve(v)));
    expect(viaSubmit).toBe(42);
    const boom = new Error("boom");
    const wrapped = lim.wrap(async (x: number) => {
      if (x < 0) throw boom;
      return x + 1;
    });
    expect(await wrapped(1)).toBe(2);
    expect(await rejectionOf(wrapped(-1))).toBe(boom);
    await until(() => h.snapshot().inUse === 0, "all freed");
    expect(h.sample(Date.now())).toMatchObject({ acquired: 4, released: 4 });
  });

  it("a job that never finishes raises leak_suspected at the line that scheduled it (schedule() and a wrap()ped call)", async () => {
    const lim = new Bottleneck({ maxConcurrent: 4 });
    const h = tracked(instrument(lim, { name: uniqueName("bn"), leakThresholdMs: 60 }));
    const g = gated();
    const wrapped = lim.wrap(g.task("w"));
    const atSchedule = here(); const a = lim.schedule(g.task("s"));
    const atWrap = here(); const b = wrapped();
    const leaks = await until(() => (eventsOf(h, "leak_suspected").length === 2 ? eventsOf(h, "leak_suspected") : undefined), "two leak_suspected");
    expect(leaks.map((e) => firstFrame(e.stack))).toEqual([expect.stringContaining(`bottleneck.test.ts:${atSchedule.line}:`), expect.stringContaining(`bottleneck.test.ts:${atWrap.line}:`)]);
    g.open();
    g.open();
    await Promise.all([a, b]);
    await until(() => eventsOf(h, "leak_resolved").length === 2, "leak_resolved for both");
  });

  it("jobs dropped by the highWater strategy or by stop() are rejections; a job past its expiration is a lease expiry", async () => {
    const lim = new Bottleneck({ maxConcurrent: 1, highWater: 1, strategy: Bottleneck.strategy.OVERFLOW });
    const h = tracked(instrument(lim, { name: uniqueName("bn") }));
    expect(h.describe().maxWaiters).toBe(1);
    const g = gated();
    const running = lim.schedule(g.task("r"));
    await until(() => g.count === 1, "one running");
    const queued = lim.schedule(g.task("q"));
    const overflow = lim.schedule(g.task("o"));
    expect(((await rejectionOf(overflow)) as Error).message).toMatch(/dropped/);
    await until(() => h.counters().rejections === 1, "the overflow counted");
    g.open();
    await running;
    await until(() => g.count === 1, "the queued job running");
    g.open();
    await queued;

    const expiring = lim.schedule({ expiration: 30 }, () => sleep(200).then(() => "late"));
    expect(((await rejectionOf(expiring)) as Error).message).toMatch(/timed out after 30 ms/);
    expect(h.counters().leaseExpiries).toBe(1);
    expect(eventsOf(h, "lease_expired")).toHaveLength(1);

    const stopping = new Bottleneck({ maxConcurrent: 1 });
    const hs = tracked(instrument(stopping, { name: uniqueName("bn") }));
    const g2 = gated();
    const busy = stopping.schedule(g2.task(1));
    await until(() => g2.count === 1, "one running");
    const waiting = stopping.schedule(g2.task(2));
    const stopped = stopping.stop();
    expect(((await rejectionOf(waiting)) as Error).message).toMatch(/stopped/);
    g2.open();
    await Promise.all([busy, stopped]);
    expect(hs.counters()).toMatchObject({ acquired: 1, released: 1, rejections: 1 });
  });

  it("jobs held back by an empty reservoir wait, and are granted when it is refilled", async () => {
    const lim = new Bottleneck({ maxConcurrent: 5, reservoir: 1 });
    const h = tracked(instrument(lim, { name: uniqueName("bn") }));
    const first = lim.schedule(() => Promise.resolve("one"));
    const second = lim.schedule(() => Promise.resolve("two"));
    expect(await first).toBe("one");
    await sleep(30);
    expect(h.snapshot()).toMatchObject({ inUse: 0, waiters: 1 });
    await lim.incrementReservoir(1);
    expect(await second).toBe("two");
    const s = h.sample(Date.now());
    expect(s).toMatchObject({ acquired: 2, released: 2 });
    expect(s.waitMs.max).toBeGreaterThanOrEqual(25);
  });

  it("a cap changed by updateSettings() is read at the next sample; unset, the last one stands", async () => {
    const lim = new Bottleneck({ maxConcurrent: 2 });
    const h = tracked(instrument(lim, { name: uniqueName("bn") }));
    await lim.updateSettings({ maxConcurrent: 5 });
    expect(h.describe().cap).toBe(5);
    await lim.updateSettings({ maxConcurrent: null });
    expect(h.sample(Date.now())).toMatchObject({ cap: 5, available: 5 });
  });

  it("untrack() puts the prototype's methods back by identity", () => {
    const lim = new Bottleneck({ maxConcurrent: 1 });
    const h = instrument(lim, { name: uniqueName("bn") });
    h.untrack();
    for (const m of ["_receive", "_run", "_free"] as const) {
      expect(Object.prototype.hasOwnProperty.call(lim, m)).toBe(false);
      expect((lim as unknown as Record<string, unknown>)[m]).toBe((Bottleneck.prototype as unknown as Record<string, unknown>)[m]);
    }
  });

  it("refuses a limiter without maxConcurrent unless given permits, saying why", () => {
    const rateOnly = new Bottleneck({ minTime: 10 });
    const err = thrownBy(() => instrument(rateOnly, { name: uniqueName("bn") }));
    expect(err).toBeInstanceOf(SemscopeAdapterError);
    expect((err as Error).message).toMatch(/maxConcurrent is unset.*pass permits/);
    expect(tracked(instrument(rateOnly, { name: uniqueName("bn"), permits: 8 })).describe().cap).toBe(8);
    expect(() => instrument(new Bottleneck({ maxConcurrent: 2 }), { name: uniqueName("bn"), permits: 8 })).toThrow(/this one has maxConcurrent: 2/);
  });
});

describe("bottleneck adapter (Redis datastore, a cluster of limiters)", () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("is reported as global: cap = the cluster's maxConcurrent, global = the cluster's running weight and clients, own = this limiter", async () => {
    const id = uniqueName("cluster");
    const make = (clearDatastore: boolean) => new Bottleneck({ id, maxConcurrent: 3, datastore: "ioredis", clearDatastore, clientOptions: { port: server.port } });
    const a = make(true);
    await a.ready();
    const b = make(false);
    await b.ready();
    try {
      const h = tracked(instrument(a, { name: uniqueName("bn"), pollIntervalMs: 20 }));
      expect(h.describe()).toMatchObject({ scope: "global", cap: 3 });
      const g = gated();
      const jobs = [a.schedule(g.task(1)), b.schedule(g.task(2)), b.schedule(g.task(3)), a.schedule(g.task(4))];
      await until(() => g.count === 3, "three jobs running across the cluster");
      // The fourth waits for a cluster-wide slot, whichever limiter holds it.
      await until(() => h.sample(Date.now()).global?.inUse === 3, "the cluster's running weight read");
      const s = h.sample(Date.now());
      const aClient = (a as unknown as { _store: { clientId: string } })._store.clientId;
      const bClient = (b as unknown as { _store: { clientId: string } })._store.clientId;
      expect(s.global!.holders.sort()).toEqual([aClient, bClient].sort());
      // inUse is this limiter's share (one or two of the three, as the cluster's race went).
      expect(s.inUse).toBe(h.snapshot().holders.length);
      expect(s.inUse).toBeGreaterThanOrEqual(1);
      expect(s.global!.own).toEqual([aClient]);
      for (let done = 0; done < 4; done++) {
        await until(() => g.count > 0, "a running job");
        g.open();
      }
      expect(await Promise.all(jobs)).toEqual([1, 2, 3, 4]);
      await until(() => h.sample(Date.now()).global?.inUse === 0, "the cluster idle");
      expect(h.counters()).toMatchObject({ acquired: 2, released: 2 });
    } finally {
      await Promise.all([a.disconnect(), b.disconnect()]);
    }
  });
});
