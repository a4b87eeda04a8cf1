// p-limit under instrument(): gauges from the limit itself, full counts and times for calls made
// through handle.limit, results and errors unchanged, blind fields declared, old versions refused.
import pLimit from "p-limit";
import { describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { flush, gatedTasks, rejectionOf, thrownBy, tracked, uniqueName } from "./helpers.js";

describe("p-limit adapter", () => {
  it("reads the limit's own gauges, whichever function the calls go through", async () => {
    const limit = pLimit(2);
    const h = tracked(instrument(limit, { name: uniqueName("pl") }));
    const { task, drain } = gatedTasks();
    const agree = () => {
      const s = h.snapshot();
      expect({ cap: s.cap, inUse: s.inUse, waiters: s.waiters }).toEqual({ cap: limit.concurrency, inUse: limit.activeCount, waiters: limit.pendingCount });
      expect(s.available + s.inUse).toBe(s.cap);
    };
    const runs = [limit(task), h.limit(task), limit(task), h.limit(task)];
    await flush();
    agree();
    expect(h.snapshot()).toMatchObject({ inUse: 2, waiters: 2 });
    await drain(agree);
    await Promise.all(runs);
    agree();
    // Only the two calls through handle.limit are counted: the others are what `blind` declares.
    expect(h.sample(Date.now())).toMatchObject({ inUse: 0, waiters: 0, acquired: 2, released: 2 });
    expect(h.blind).toEqual(expect.arrayContaining(["acquired", "released", "waitMs", "holdMs"]));
    expect(h.describe().blind).toBe(h.blind);
  });

  it("handle.limit returns what the limit returns, rejects with the same error, passes arguments", async () => {
    const limit = pLimit(1);
    const h = tracked(instrument(limit, { name: uniqueName("pl") }));
    expect(await h.limit((a: number, b: number) => a + b, 2, 3)).toBe(5);
    const boom = new Error("boom");
    expect(await rejectionOf(h.limit(() => Promise.reject(boom)))).toBe(boom);
    expect(await rejectionOf(h.limit(() => { throw boom; }))).toBe(boom);
    expect(await h.limit.map([1, 2, 3], (v, i) => v * 10 + i)).toEqual([10, 21, 32]);
    h.limit.concurrency = 3;
    expect(limit.concurrency).toBe(3);
    expect(h.counters()).toMatchObject({ acquired: 6, released: 6 });
  });

  it("untrack() stops reporting; the limit was never modified", async () => {
    const limit = pLimit(1);
    const before = Object.getOwnPropertyDescriptors(limit);
    const h = instrument(limit, { name: uniqueName("pl") });
    h.untrack();
    expect(Object.getOwnPropertyDescriptors(limit)).toEqual(before);
    expect(await h.limit(() => 7)).toBe(7);
    expect(h.counters().acquired).toBe(0);
  });

  it("refuses a p-limit older than 7 (no concurrency, no clearQueue), naming the version it understands", () => {
    const v3 = Object.assign(() => Promise.resolve(), { activeCount: 0, pendingCount: 0 });
    const err = thrownBy(() => instrument(v3, { name: uniqueName("pl") }));
    expect(err).toBeInstanceOf(SemscopeAdapterError);
    expect((err as Error).message).toMatch(/p-limit 7\.x/);
  });
});

describe("p-limit adapter: handle.limit.map as p-limit's own map", () => {
  /** The reasons of the rejections nobody handled while `run` went on (and a turn after). */
  async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
    const seen: unknown[] = [];
    const on = (reason: unknown) => seen.push(reason);
    process.on("unhandledRejection", on);
    try {
      await run();
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off("unhandledRejection", on);
    }
    return seen;
  }

  const badIterable = (err: Error, rejection: Error): Iterable<() => Promise<never>> => ({
    *[Symbol.iterator]() {
      yield () => Promise.reject(rejection);
      throw err;
    },
  });

  it("returns a rejected promise for a non-iterable, as p-limit does, instead of throwing", async () => {
    const h = tracked(instrument(pLimit(2), { name: uniqueName("pl") }));
    const bare = pLimit(2);
    let result: Promise<unknown> | undefined;
    expect(() => {
      result = h.limit.map(null as unknown as Iterable<number>, (v) => v);
    }).not.toThrow();
    const ours = await rejectionOf(result!);
    const theirs = await rejectionOf(bare.map(null as unknown as Iterable<number>, (v) => v));
    expect(ours).toBeInstanceOf(TypeError);
    expect((ours as Error).constructor).toBe((theirs as Error).constructor);
  });

  it("an iterable that throws part-way rejects with its error and leaves no unhandled rejection", async () => {
    const h = tracked(instrument(pLimit(2), { name: uniqueName("pl") }));
    const err = new Error("iterable broke");
    const rejection = new Error("task failed");
    let got: unknown;
    const unhandled = await unhandledDuring(async () => {
      got = await rejectionOf(h.limit.map(badIterable(err, rejection), (task) => task()));
    });
    expect(got).toBe(err);
    expect(unhandled).toEqual([]);
    expect(h.counters()).toMatchObject({ acquired: 1, released: 1 });
  });
});
