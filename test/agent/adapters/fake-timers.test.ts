// A service's own tests often fake timers. The adapters' leak watch runs on the real timers taken
// when the agent loaded: the test's clock neither counts it as its own nor fires it early.
import { Semaphore as MutexSemaphore } from "async-mutex";
import { afterEach, describe, expect, it, vi } from "vitest";
import { instrument } from "../../../agent/src/index.js";
import { eventsOf, tracked, uniqueName } from "./helpers.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("adapters under a test's fake timers", () => {
  it("the leak watch is not one of the test's timers, and running them all reports no leak", async () => {
    const sem = new MutexSemaphore(2);
    const h = tracked(instrument(sem, { name: uniqueName("fake"), permits: 2, leakThresholdMs: 30_000 }));
    vi.useFakeTimers();
    const [, release] = await sem.acquire();
    expect(vi.getTimerCount()).toBe(0);
    // With the watch on the faked timers this would jump the faked clock 30 s and report the holder.
    vi.runAllTimers();
    await Promise.resolve();
    expect(eventsOf(h, "leak_suspected")).toEqual([]);
    release();
    expect(h.counters()).toMatchObject({ acquired: 1, released: 1 });
  });
});
