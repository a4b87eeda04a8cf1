// An adaptive Semaphore on the virtual clock: callers whose holds last as long as a downstream
// takes; the cap follows that latency and every change is carried on the sample with its reason.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Semaphore } from "../../../agent/src/index.js";
import { FAKE_TIMERS } from "../semantic-suite.js";

let sems: Semaphore[] = [];
beforeEach(() => {
  vi.useFakeTimers(FAKE_TIMERS);
});
afterEach(async () => {
  for (const s of sems) await s.close();
  sems = [];
  vi.useRealTimers();
});

/** `callers` loops, each holding a permit for latency() ms, until stopped. */
function drive(sem: Semaphore, callers: number, latency: () => number): () => void {
  let on = true;
  const loop = async (): Promise<void> => {
    while (on) {
      await sem.use(() => new Promise<void>((r) => setTimeout(r, latency())));
    }
  };
  for (let i = 0; i < callers; i++) void loop().catch(() => undefined);
  return () => {
    on = false;
  };
}

describe("permits: { adaptive }", () => {
  it("raises the cap while latency stays flat, lowers it when latency rises, and says why on the sample", async () => {
    const sem = new Semaphore({ name: "adaptive-a", permits: { adaptive: { min: 2, max: 40, initial: 4 } } });
    sems.push(sem);
    expect(sem.permits).toBe(4);
    let latencyMs = 10;
    const stop = drive(sem, 60, () => latencyMs);
    await vi.advanceTimersByTimeAsync(5000);
    const risen = sem.permits;
    expect(risen).toBeGreaterThan(20);
    expect(sem.sample(Date.now()).limit).toMatchObject({ min: 2, max: 40, limit: risen });
    expect(sem.adaptiveLimit?.reason).toMatch(/latency flat at 10 ms .*probing up/);

    latencyMs = 40;
    await vi.advanceTimersByTimeAsync(1500);
    expect(sem.permits).toBeLessThan(risen);
    const s = sem.sample(Date.now());
    expect(s.cap).toBe(sem.permits);
    expect(s.limit?.reason).toMatch(/^latency rose from 1\d ms to 40 ms at in-flight \d+$/);
    expect(s.limit?.from).toBeGreaterThan(s.limit?.limit ?? Infinity);
    stop();
    await vi.advanceTimersByTimeAsync(100);
  });

  it("never takes back a held permit when it lowers the cap", async () => {
    const sem = new Semaphore({ name: "adaptive-b", permits: { adaptive: { min: 1, max: 30, initial: 30 } } });
    sems.push(sem);
    // 25 long holders, then short holds that turn slow: the cap falls under what the long ones hold.
    const long = await Promise.all(Array.from({ length: 25 }, () => sem.acquire()));
    let latencyMs = 5;
    const stop = drive(sem, 20, () => latencyMs);
    await vi.advanceTimersByTimeAsync(300);
    latencyMs = 60;
    await vi.advanceTimersByTimeAsync(1500);
    expect(sem.permits).toBeLessThan(25);
    expect(sem.inUse).toBeGreaterThanOrEqual(25);
    expect(sem.available).toBeLessThan(0);
    for (const p of long) p.release();
    stop();
    await vi.advanceTimersByTimeAsync(200);
    expect(sem.inUse).toBeLessThanOrEqual(sem.permits);
  });

  it("refuses bad bounds at construction, naming them, and keeps a number working", () => {
    const bad: unknown[] = [
      { adaptive: { min: 0, max: 4 } },
      { adaptive: { min: 5, max: 4 } },
      { adaptive: { min: 1, max: 4, initial: 9 } },
      { adaptive: { min: 1, max: 4, tolerance: 1 } },
      { adaptive: "fast" },
      {},
    ];
    for (const permits of bad) {
      expect(() => new Semaphore({ name: "adaptive-bad", permits } as never)).toThrow(/permits/);
    }
    const plain = new Semaphore({ name: "adaptive-bad", permits: 3 });
    sems.push(plain);
    expect(plain.permits).toBe(3);
    expect(plain.adaptiveLimit).toBeUndefined();
    expect(plain.sample(Date.now()).limit).toBeUndefined();
  });
});
