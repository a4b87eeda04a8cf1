// async-mutex Semaphore under instrument(): same results and errors, the semaphore's own counts,
// double releases counted, untrack() puts the prototype's acquire back, other shapes refused.
import { E_CANCELED, Mutex, Semaphore as MutexSemaphore, withTimeout } from "async-mutex";
import { describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { firstUserFrame, here } from "../semantic-suite.js";
import { eventsOf, flush, rejectionOf, thrownBy, tracked, uniqueName, until } from "./helpers.js";

const make = (permits: number, extra: { leakThresholdMs?: number } = {}) => {
  const sem = new MutexSemaphore(permits);
  const h = tracked(instrument(sem, { name: uniqueName("mutex"), permits, ...extra }));
  return { sem, h };
};

describe("async-mutex adapter", () => {
  it("reports the semaphore's own counts, weights included, at every step", async () => {
    const { sem, h } = make(4);
    const agree = () => {
      const s = h.snapshot();
      expect(s.inUse).toBe(4 - sem.getValue());
      expect(s.available).toBe(sem.getValue());
      expect(s.available + s.inUse).toBe(4);
    };
    const [, r1] = await sem.acquire(3);
    agree();
    const heavy = sem.acquire(2);
    const light = sem.acquire(1);
    await flush();
    agree();
    expect(h.snapshot().waiters).toBe(2);
    r1();
    const [, r2] = await heavy;
    const [, r3] = await light;
    agree();
    expect(h.snapshot()).toMatchObject({ inUse: 3, waiters: 0 });
    r2();
    r3();
    agree();
    const s = h.sample(Date.now());
    expect(s).toMatchObject({ cap: 4, inUse: 0, available: 4, waiters: 0, acquired: 3, released: 3 });
    expect(s.waitMs.count).toBe(3);
    expect(s.holdMs.count).toBe(3);
  });

  it("passes values, results and errors through unchanged", async () => {
    const { sem } = make(2);
    const [value, release] = await sem.acquire();
    expect(value).toBe(2);
    release();
    expect(await sem.runExclusive((v) => `ran with ${v}`)).toBe("ran with 2");
    const boom = new Error("boom");
    expect(await rejectionOf(sem.runExclusive(() => Promise.reject(boom)))).toBe(boom);
    expect(sem.getValue()).toBe(2);
    // A bad weight still throws synchronously, with the library's own message.
    const plain = new MutexSemaphore(1);
    const expected = thrownBy(() => plain.acquire(0)) as Error;
    expect((thrownBy(() => sem.acquire(0)) as Error).message).toBe(expected.message);
    // cancel() rejects waiters with the library's own error object, counted as aborts.
    const [, held1] = await sem.acquire(2);
    const waiting = sem.acquire();
    await flush();
    sem.cancel();
    expect(await rejectionOf(waiting)).toBe(E_CANCELED);
    held1();
  });

  it("counts a second call of a releaser as a double release, with the caller's line, and changes no count", async () => {
    const { sem, h } = make(1);
    const [, release] = await sem.acquire();
    release();
    const at = here(); release();
    expect(sem.getValue()).toBe(1);
    const ev = eventsOf(h, "double_release");
    expect(ev).toHaveLength(1);
    expect(firstUserFrame(ev[0].stack)).toEqual(at);
    expect(h.sample(Date.now())).toMatchObject({ doubleReleases: 1, released: 1 });
  });

  it("keeps a flight recorder of its operations, as a Semaphore does (and none with flightRecorder: false)", async () => {
    const { sem, h } = make(1);
    const [, release] = await sem.acquire();
    const waiting = sem.acquire();
    release();
    const [, second] = await waiting;
    second();
    second();
    expect(h.flightRecorder?.ops().map((o) => o.op)).toEqual(["request", "grant", "request", "release", "grant", "release", "double_release"]);
    const off = new MutexSemaphore(1);
    expect(tracked(instrument(off, { name: uniqueName("mutex"), permits: 1, flightRecorder: false })).flightRecorder).toBeUndefined();
  });

  it("reports a holder kept past leakThresholdMs with the line that acquired it", async () => {
    const { sem, h } = make(2, { leakThresholdMs: 30 });
    const at = here(); const [, release] = await sem.acquire();
    const leak = await until(() => eventsOf(h, "leak_suspected")[0], "leak_suspected");
    expect(firstUserFrame(leak.stack)).toEqual(at);
    release();
    expect(eventsOf(h, "leak_resolved")).toHaveLength(1);
  });

  it("untrack() puts the prototype's acquire back and frees the name; releasers handed out still work", async () => {
    const { sem, h } = make(2);
    expect(Object.prototype.hasOwnProperty.call(sem, "acquire")).toBe(true);
    const [, release] = await sem.acquire();
    h.untrack();
    expect(Object.prototype.hasOwnProperty.call(sem, "acquire")).toBe(false);
    expect(sem.acquire).toBe(MutexSemaphore.prototype.acquire);
    release();
    expect(sem.getValue()).toBe(2);
    // The same semaphore can be instrumented again, under the same name.
    tracked(instrument(sem, { name: h.name, permits: 2 }));
  });

  it("refuses what it does not understand, saying what it understands", () => {
    const err = thrownBy(() => instrument(new Mutex(), { name: uniqueName("m") }));
    expect(err).toBeInstanceOf(SemscopeAdapterError);
    expect((err as Error).message).toMatch(/async-mutex.*Mutex.*Semaphore/);
    const timed = thrownBy(() => instrument(withTimeout(new MutexSemaphore(2), 100), { name: uniqueName("m"), permits: 2 }));
    expect(timed).toBeInstanceOf(SemscopeAdapterError);
    expect((timed as Error).message).toMatch(/async-mutex 0\.4–0\.5 Semaphore/);
    expect(() => instrument(new MutexSemaphore(2), { name: uniqueName("m") })).toThrow(/permits is required/);
    const unknown = thrownBy(() => instrument({ acquire() {} }, { name: uniqueName("m") }));
    expect(unknown).toBeInstanceOf(SemscopeAdapterError);
    expect((unknown as Error).message).toMatch(/supported: .*pg.*generic-pool.*p-limit.*p-queue.*async-mutex/);
    const { sem } = make(1);
    expect(() => instrument(sem, { name: uniqueName("m"), permits: 1 })).toThrow(/already instrumented/);
    // A frozen semaphore cannot take the wrapper: refused before anything is installed or registered.
    const frozen = Object.freeze(new MutexSemaphore(1));
    const name = uniqueName("m");
    expect(() => instrument(frozen, { name, permits: 1 })).toThrow(/cannot wrap "acquire"/);
    tracked(instrument(new MutexSemaphore(1), { name, permits: 1 }));
  });
});
