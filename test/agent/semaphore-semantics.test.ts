// The semantic suite against our own Semaphore, with every capability.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Semaphore, type SemaphoreOptions } from "../../agent/src/index.js";
import { EVERY_CAPABILITY, FAKE_TIMERS, firstUserFrame, here, semaphoreSemantics } from "./semantic-suite.js";

semaphoreSemantics("Semaphore", (options) => new Semaphore(options), EVERY_CAPABILITY);

// What only our Semaphore promises beyond the shared suite.
describe("Semaphore specifics", () => {
  let made: Semaphore[] = [];
  let seq = 0;
  const make = (options: Omit<SemaphoreOptions, "name">): Semaphore => {
    const s = new Semaphore({ ...options, name: `specifics-${++seq}-${Math.random().toString(36).slice(2, 8)}` });
    made.push(s);
    return s;
  };
  beforeEach(() => {
    vi.useFakeTimers(FAKE_TIMERS);
  });
  afterEach(async () => {
    for (const s of made) await s.close();
    made = [];
    vi.clearAllTimers();
    vi.useRealTimers();
  });

  it("watching leases and leaks keeps one timer, however many expiries admit waiters", async () => {
    const s = make({ permits: 2, leaseTimeoutMs: 10, leakThresholdMs: 5 });
    await s.acquire();
    await vi.advanceTimersByTimeAsync(5);
    await s.acquire();
    const timers: number[] = [];
    for (let i = 0; i < 40; i++) {
      // Every 5 ms a lease expires and its permit goes straight to the waiter queued here.
      void s.acquire();
      await vi.advanceTimersByTimeAsync(5);
      timers.push(vi.getTimerCount());
    }
    expect(Math.max(...timers), `timer counts: ${timers.join(",")}`).toBeLessThanOrEqual(1);
    expect(s.counters().leaseExpiries).toBeGreaterThanOrEqual(38);
  });

  it("holders carry their acquisition stack only when leakThresholdMs is set", async () => {
    const plain = make({ permits: 1 });
    const watched = make({ permits: 1, leakThresholdMs: 1000 });
    const p = await plain.acquire();
    const at = here(); const q = await watched.acquire();
    expect(plain.snapshot().holders[0].stack).toBeUndefined();
    expect(firstUserFrame(watched.snapshot().holders[0].stack)).toEqual(at);
    p.release();
    q.release();
  });

  it("counters() are cumulative while sample() starts over each interval", async () => {
    const s = make({ permits: 1 });
    (await s.acquire()).release();
    expect(s.sample(Date.now())).toMatchObject({ acquired: 1, released: 1 });
    (await s.acquire()).release();
    expect(s.sample(Date.now())).toMatchObject({ acquired: 1, released: 1 });
    expect(s.counters()).toMatchObject({ acquired: 2, released: 2 });
  });
});
