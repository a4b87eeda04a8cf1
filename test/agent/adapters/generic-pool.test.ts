// generic-pool under instrument(): the pool's own counts, its results and errors unchanged, leak
// stacks at the borrowing line, double releases counted while the pool's rejection stays its own,
// untrack() puts the prototype's methods back, other versions refused.
import { createPool, type Factory, type Options, type Pool } from "generic-pool";
import { describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { firstUserFrame, here } from "../semantic-suite.js";
import { eventsOf, flush, rejectionOf, thrownBy, tracked, uniqueName, until } from "./helpers.js";

interface Conn {
  id: number;
}

function pool(options: Options, factory: Partial<Factory<Conn>> = {}): Pool<Conn> {
  let n = 0;
  return createPool<Conn>({ create: () => Promise.resolve({ id: ++n }), destroy: () => Promise.resolve(), ...factory }, options);
}

describe("generic-pool adapter", () => {
  it("reports the pool's own counts (max, borrowed, pending) and counts every loan", async () => {
    const p = pool({ max: 3 });
    const h = tracked(instrument(p, { name: uniqueName("gp") }));
    const agree = () => {
      const s = h.snapshot();
      expect({ cap: s.cap, inUse: s.inUse, waiters: s.waiters }).toEqual({ cap: p.max, inUse: p.borrowed, waiters: p.pending });
      expect(s.available + s.inUse).toBe(s.cap);
    };
    const held = [await p.acquire(), await p.acquire(), await p.acquire()];
    agree();
    const waiting = [p.acquire(), p.acquire()];
    await flush();
    agree();
    expect(h.snapshot().waiters).toBe(2);
    await p.release(held[0]);
    await p.destroy(held[1]);
    const got = await Promise.all(waiting);
    agree();
    for (const r of [held[2], ...got]) await p.release(r);
    agree();
    expect(h.sample(Date.now())).toMatchObject({ cap: 3, inUse: 0, acquired: 5, released: 5, waiters: 0 });
    await p.drain();
    await p.clear();
  });

  it("passes resources, results and errors through unchanged; use() goes through the adapter", async () => {
    const p = pool({ max: 1 });
    const h = tracked(instrument(p, { name: uniqueName("gp") }));
    expect(await p.use((c) => Promise.resolve(`conn ${c.id}`))).toBe("conn 1");
    const boom = new Error("boom");
    expect(await rejectionOf(p.use(() => Promise.reject(boom)))).toBe(boom);
    expect(h.counters()).toMatchObject({ acquired: 2, released: 2 });
    // A resource the pool never lent: the pool's own rejection, and no double release counted.
    const foreign = await rejectionOf(p.release({ id: 99 }));
    expect((foreign as Error).message).toBe("Resource not currently part of this pool");
    expect(h.counters().doubleReleases).toBe(0);
  });

  it("counts acquire timeouts and refused waiters as the pool reports them", async () => {
    const p = pool({ max: 1, acquireTimeoutMillis: 30, maxWaitingClients: 1 });
    const h = tracked(instrument(p, { name: uniqueName("gp") }));
    expect(h.describe()).toMatchObject({ acquireTimeoutMs: 30, maxWaiters: 1, queue: "fifo", kind: "generic-pool" });
    const r = await p.acquire();
    const timedOut = p.acquire();
    const refused = await rejectionOf(p.acquire());
    expect((refused as Error).message).toBe("max waitingClients count exceeded");
    expect((await rejectionOf(timedOut)) as Error).toHaveProperty("name", "TimeoutError");
    expect(h.sample(Date.now())).toMatchObject({ acquired: 1, timeouts: 1, rejections: 1 });
    await p.release(r);
  });

  it("a second release is counted with the caller's line; the pool's own rejection comes through", async () => {
    const p = pool({ max: 2 });
    const h = tracked(instrument(p, { name: uniqueName("gp") }));
    const r = await p.acquire();
    await p.release(r);
    const at = here(); const second = p.release(r);
    expect(((await rejectionOf(second)) as Error).message).toBe("Resource not currently part of this pool");
    const ev = eventsOf(h, "double_release");
    expect(ev).toHaveLength(1);
    expect(firstUserFrame(ev[0].stack)).toEqual(at);
    expect(h.sample(Date.now())).toMatchObject({ doubleReleases: 1, released: 1, inUse: 0 });
  });

  it("a resource borrowed and never returned raises leak_suspected at the borrowing line", async () => {
    const p = pool({ max: 2 });
    const h = tracked(instrument(p, { name: uniqueName("gp"), leakThresholdMs: 30 }));
    const at = here(); const r = await p.acquire();
    const leak = await until(() => eventsOf(h, "leak_suspected")[0], "leak_suspected");
    expect(firstUserFrame(leak.stack)).toEqual(at);
    expect(h.snapshot().holders).toHaveLength(1);
    await p.release(r);
    expect(eventsOf(h, "leak_resolved")).toHaveLength(1);
  });

  it("untrack() puts the prototype's methods back by identity", async () => {
    const p = pool({ max: 2 });
    const proto = Object.getPrototypeOf(p) as Record<string, unknown>;
    const h = instrument(p, { name: uniqueName("gp") });
    for (const m of ["acquire", "release", "destroy"]) expect(Object.prototype.hasOwnProperty.call(p, m)).toBe(true);
    const r = await p.acquire();
    h.untrack();
    for (const m of ["acquire", "release", "destroy"]) {
      expect(Object.prototype.hasOwnProperty.call(p, m)).toBe(false);
      expect((p as unknown as Record<string, unknown>)[m]).toBe(proto[m]);
    }
    await p.release(r);
    expect(p.borrowed).toBe(0);
    expect(h.tracking).toBe(false);
  });

  it("refuses a generic-pool 2.x shaped pool, naming what it understands", () => {
    // 2.x: acquire(callback), release(resource), no borrowed/pending getters nor isBorrowedResource.
    const v2 = { acquire() {}, release() {}, destroy() {}, drain() {}, use() {}, spareResourceCapacity: 1, max: 1 };
    const err = thrownBy(() => instrument(v2, { name: uniqueName("gp") }));
    expect(err).toBeInstanceOf(SemscopeAdapterError);
    expect((err as Error).message).toMatch(/generic-pool 3\.x/);
  });
});
