// piscina under instrument(), with real worker threads running fixtures/piscina-task.mjs (each task
// waits for its gate, a slot of a SharedArrayBuffer this file opens): the pool's own queue size and
// the tasks on its threads as gauges, each task's wait for a thread and run time, a task that never
// ends reported as a leak at the line that ran it, aborts and a full queue counted, results and
// errors unchanged, untrack() putting run back.
// Not run through the shared semantic suite: a task's hand-off goes through a worker thread's
// message port, which the suite's virtual clock and microtask flushes do not reach.
import { Piscina } from "piscina";
import { describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { here } from "../semantic-suite.js";
import { eventsOf, rejectionOf, thrownBy, tracked, uniqueName, until } from "./helpers.js";

const TASK = new URL("./fixtures/piscina-task.mjs", import.meta.url).href;

/** Gates for n tasks (the layout is in the fixture); `running()` lists the slots on a thread and not yet let go. */
function gates(n: number): { buf: SharedArrayBuffer; open: (slot: number) => void; running: () => number[] } {
  const buf = new SharedArrayBuffer(8 * n);
  const g = new Int32Array(buf);
  return {
    buf,
    open: (slot) => {
      Atomics.store(g, 2 * slot, 1);
      Atomics.notify(g, 2 * slot);
    },
    running: () => [...Array(n).keys()].filter((i) => Atomics.load(g, 2 * i + 1) === 1 && Atomics.load(g, 2 * i) === 0),
  };
}

function pool(threads: number, extra: Partial<ConstructorParameters<typeof Piscina>[0]> = {}): Piscina {
  return new Piscina({ filename: TASK, minThreads: threads, maxThreads: threads, ...extra });
}

const firstFrame = (stack: string | undefined): string => (stack ?? "").split("\n").find((l) => /^\s*at /.test(l)) ?? "";

describe("piscina adapter", () => {
  it("reports the queue size and the tasks on threads, and times each task's wait for a thread and its run", async () => {
    const p = pool(2);
    try {
      const h = tracked(instrument(p, { name: uniqueName("px") }));
      expect(h.describe()).toMatchObject({ kind: "piscina", cap: 2, queue: "fifo" });
      const g = gates(5);
      const results = [0, 1, 2, 3, 4].map((slot) => p.run({ gates: g.buf, slot, value: slot * 10 }));
      await until(() => p.threads.length - p.idleThreads === 2 && p.queueSize === 3, "two threads busy, three tasks queued");
      expect(h.snapshot()).toMatchObject({ cap: 2, inUse: 2, available: 0, waiters: 3 });
      expect(h.snapshot().waiters).toBe(p.queueSize);
      // Piscina picks the next task itself (not always the oldest): let go whichever runs.
      for (let left = 5; left > 0; left--) {
        const slot = (await until(() => g.running()[0], "a task on a thread")) as number;
        g.open(slot);
        expect(await results[slot]).toBe(slot * 10);
        // The task that took the freed thread is counted on it as soon as this one's end is seen.
        expect(h.snapshot()).toMatchObject({ inUse: Math.min(2, left - 1), waiters: Math.max(0, left - 3) });
        expect(h.snapshot().inUse).toBe(p.threads.length - p.idleThreads);
      }
      await until(() => p.queueSize === 0 && h.snapshot().inUse === 0, "all done");
      const s = h.sample(Date.now());
      expect(s).toMatchObject({ acquired: 5, released: 5, inUse: 0, waiters: 0 });
      expect(s.waitMs.count).toBe(5);
      expect(s.holdMs.count).toBe(5);
      expect(s.waitMs.max).toBeGreaterThan(0);
    } finally {
      await p.destroy();
    }
  });

  it("passes results and a task's own errors through unchanged", async () => {
    const p = pool(1);
    try {
      const h = tracked(instrument(p, { name: uniqueName("px") }));
      const g = gates(2);
      g.open(0);
      g.open(1);
      expect(await p.run({ gates: g.buf, slot: 0, value: { a: [1, 2] } })).toEqual({ a: [1, 2] });
      const err = (await rejectionOf(p.run({ gates: g.buf, slot: 1, fail: "boom" }))) as Error;
      expect(err.message).toBe("boom");
      expect(((await rejectionOf(p.run({}, { filename: 42 as unknown as string }))) as Error).message).toBe("filename argument must be a string");
      expect(h.sample(Date.now())).toMatchObject({ acquired: 2, released: 2, inUse: 0 });
    } finally {
      await p.destroy();
    }
  });

  it("a task that never ends raises leak_suspected at the line that ran it", async () => {
    const p = pool(2);
    try {
      const h = tracked(instrument(p, { name: uniqueName("px"), leakThresholdMs: 80 }));
      const g = gates(1);
      const at = here(); const stuck = p.run({ gates: g.buf, slot: 0, value: "late" });
      const leak = await until(() => eventsOf(h, "leak_suspected")[0], "leak_suspected");
      expect(firstFrame(leak.stack)).toContain(`piscina.test.ts:${at.line}:`);
      expect(h.snapshot()).toMatchObject({ inUse: 1, holders: [{ weight: 1 }] });
      g.open(0);
      expect(await stuck).toBe("late");
      await until(() => eventsOf(h, "leak_resolved").length === 1, "leak_resolved");
    } finally {
      await p.destroy();
    }
  });

  it("an abort while queued is an abort; a task beyond maxQueue is a rejection", async () => {
    const p = pool(1, { maxQueue: 1 });
    try {
      const h = tracked(instrument(p, { name: uniqueName("px") }));
      expect(h.describe().maxWaiters).toBe(1);
      const g = gates(4);
      const first = p.run({ gates: g.buf, slot: 0, value: 0 });
      await until(() => g.running().length === 1, "the thread busy");
      const queued = p.run({ gates: g.buf, slot: 1, value: 1 });
      const full = (await rejectionOf(p.run({ gates: g.buf, slot: 2, value: 2 }))) as Error;
      expect(full.message).toBe("Task queue is at limit");
      g.open(0);
      expect(await first).toBe(0);
      await until(() => g.running()[0] === 1, "the queued task on the thread");
      const ac = new AbortController();
      const abortable = p.run({ gates: g.buf, slot: 3, value: 3 }, { signal: ac.signal });
      ac.abort();
      expect(((await rejectionOf(abortable)) as Error).name).toBe("AbortError");
      g.open(1);
      expect(await queued).toBe(1);
      expect(h.sample(Date.now())).toMatchObject({ acquired: 2, released: 2, aborts: 1, rejections: 1, inUse: 0, waiters: 0 });
    } finally {
      await p.destroy();
    }
  });

  it("untrack() puts the prototype's run back by identity", async () => {
    const p = pool(1);
    try {
      const h = instrument(p, { name: uniqueName("px") });
      expect(Object.prototype.hasOwnProperty.call(p, "run")).toBe(true);
      h.untrack();
      expect(Object.prototype.hasOwnProperty.call(p, "run")).toBe(false);
      expect(p.run).toBe(Piscina.prototype.run);
    } finally {
      await p.destroy();
    }
  });

  it("refuses a pool-like object that lacks what piscina 5 has, naming it", () => {
    const lookalike = { run() {}, close() {}, destroy() {}, queueSize: 0, threads: [], utilization: 0, maxThreads: 2, completed: 0, options: { maxThreads: 2, concurrentTasksPerWorker: 1 } };
    const err = thrownBy(() => instrument(lookalike, { name: uniqueName("px") }));
    expect(err).toBeInstanceOf(SemscopeAdapterError);
    expect((err as Error).message).toMatch(/no boolean "needsDrain".*piscina 5\.x/);
  });
});
