// p-queue under instrument(): the queue's own counts, results and errors unchanged, aborts while
// queued and task timeouts (lease expiries) counted, clear() forgets the dropped waits, untrack()
// puts the prototype's methods back, an 8.x-shaped queue refused.
import PQueue from "p-queue";
import { describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { eventsOf, flush, gatedTasks, rejectionOf, sleep, thrownBy, tracked, uniqueName } from "./helpers.js";

describe("p-queue adapter", () => {
  it("reports the queue's own counts (concurrency, pending, size) and counts every task", async () => {
    const queue = new PQueue({ concurrency: 2 });
    const h = tracked(instrument(queue, { name: uniqueName("pq") }));
    const { task, drain } = gatedTasks();
    const agree = () => {
      const s = h.snapshot();
      expect({ cap: s.cap, inUse: s.inUse, waiters: s.waiters }).toEqual({ cap: queue.concurrency, inUse: queue.pending, waiters: queue.size });
    };
    const runs = [queue.add(task), queue.add(task), queue.addAll([task, task])];
    await flush();
    agree();
    expect(h.snapshot()).toMatchObject({ inUse: 2, waiters: 2 });
    await drain(agree);
    await Promise.all(runs);
    await queue.onIdle();
    agree();
    expect(h.sample(Date.now())).toMatchObject({ cap: 2, inUse: 0, waiters: 0, acquired: 4, released: 4 });
  });

  it("passes results and errors through unchanged", async () => {
    const queue = new PQueue({ concurrency: 1 });
    tracked(instrument(queue, { name: uniqueName("pq") }));
    expect(await queue.add(() => 42)).toBe(42);
    const boom = new Error("boom");
    expect(await rejectionOf(queue.add(() => Promise.reject(boom)))).toBe(boom);
    const completed: unknown[] = [];
    queue.on("completed", (v) => completed.push(v));
    await queue.add(async () => "x");
    expect(completed).toEqual(["x"]);
  });

  it("an abort while queued is an abort; a task past the queue's timeout is a lease expiry", async () => {
    const queue = new PQueue({ concurrency: 1, timeout: 20 });
    const h = tracked(instrument(queue, { name: uniqueName("pq") }));
    expect(h.describe()).toMatchObject({ leaseTimeoutMs: 20, queue: "priority" });
    let release: () => void = () => undefined;
    const slow = queue.add(() => new Promise<void>((r) => (release = r)));
    const ac = new AbortController();
    const queued = queue.add(() => "never", { signal: ac.signal });
    await flush();
    const reason = new Error("gone");
    ac.abort(reason);
    expect(await rejectionOf(queued)).toBe(reason);
    const timeout = (await rejectionOf(slow)) as Error;
    expect(timeout.name).toBe("TimeoutError");
    release();
    expect(h.sample(Date.now())).toMatchObject({ aborts: 1, leaseExpiries: 1, acquired: 1, released: 0 });
    expect(eventsOf(h, "lease_expired")).toHaveLength(1);
  });

  it("clear() drops queued tasks: their waits are no longer counted as waiting", async () => {
    const queue = new PQueue({ concurrency: 1 });
    const h = tracked(instrument(queue, { name: uniqueName("pq") }));
    let release: () => void = () => undefined;
    void queue.add(() => new Promise<void>((r) => (release = r)));
    void queue.add(() => undefined);
    await sleep(5);
    expect(h.snapshot().oldestWaitMs).toBeGreaterThan(0);
    queue.clear();
    const dropped = queue.add(() => undefined);
    await flush();
    // The one waiter now is the new task, not the cleared one.
    expect(h.snapshot().waiters).toBe(1);
    release();
    await dropped;
    expect(h.snapshot().oldestWaitMs).toBe(0);
  });

  it("untrack() puts the prototype's add and clear back by identity", () => {
    const queue = new PQueue({ concurrency: 1 });
    const h = instrument(queue, { name: uniqueName("pq") });
    h.untrack();
    expect(Object.prototype.hasOwnProperty.call(queue, "add")).toBe(false);
    expect(Object.prototype.hasOwnProperty.call(queue, "clear")).toBe(false);
    expect(queue.add).toBe(PQueue.prototype.add);
    expect(queue.clear).toBe(PQueue.prototype.clear);
  });

  it("refuses an 8.x-shaped queue and an unbounded one, saying why", () => {
    const v8 = { add() {}, addAll() {}, onIdle() {}, clear() {}, concurrency: 2, pending: 0, size: 0 };
    const err = thrownBy(() => instrument(v8, { name: uniqueName("pq") }));
    expect(err).toBeInstanceOf(SemscopeAdapterError);
    expect((err as Error).message).toMatch(/no boolean "isSaturated".*p-queue 9\.x/);
    expect(() => instrument(new PQueue(), { name: uniqueName("pq") })).toThrow(/unbounded queue has no cap/);
  });
});
