// The adaptive cap's window and ceiling: what a replica budget's share does to the limit.
import { describe, expect, it } from "vitest";
import { AdaptiveCap, PROBE_EVERY_MS } from "../../../agent/src/adaptive/adaptive-cap.js";

function feed(cap: AdaptiveCap, holdMs: number, windows: number, at: { now: number }, inFlight = (): number => cap.cap): void {
  for (let w = 0; w < windows; w++) {
    for (let i = 0; i < 6; i++) cap.sample(holdMs, inFlight(), (at.now += 20));
  }
}

interface Downstream {
  workers: number;
  serviceMs: number;
}

/**
 * A saturating caller against a worker pool, on a fake clock in 10 ms steps: in-flight is the cap,
 * completions come at min(cap, workers) / service per ms, each held service × max(1, cap / workers).
 * Appends every cap applied, and every reason recorded when given a list for them.
 */
function drive(cap: AdaptiveCap, d: Downstream, at: { now: number }, forMs: number, applied: number[], reasons: string[] = []): void {
  let due = 0;
  for (const end = at.now + forMs; at.now < end; at.now += 10) {
    const c = cap.cap;
    due += (10 * Math.min(c, d.workers)) / d.serviceMs;
    for (; due >= 1; due--) cap.sample(d.serviceMs * Math.max(1, c / d.workers), c, at.now);
    if (applied.at(-1) !== cap.cap) applied.push(cap.cap);
    if (reasons.at(-1) !== cap.lastChange.reason) reasons.push(cap.lastChange.reason);
  }
}

describe("AdaptiveCap", () => {
  it("re-measures the baseline at low concurrency after its first window: a start far above the downstream's workers settles just above them", () => {
    const applied: number[] = [];
    const cap = new AdaptiveCap({ min: 1, max: 200, initial: 40, tolerance: 1.5 }, { setCap: () => undefined });
    const at = { now: 0 };
    const d = { workers: 8, serviceMs: 20 };
    drive(cap, d, at, 1000, applied);
    // The first window queued (40 in flight, 8 served): the cap fell to 3 to measure, then rose.
    expect(applied.slice(0, 2)).toEqual([40, 3]);
    expect(applied[2]).toBeGreaterThan(3);
    expect(cap.limiter.baselineMs).toBe(20);
    drive(cap, d, at, 5000, applied);
    expect(cap.probing).toBe(false);
    expect(cap.cap).toBeGreaterThanOrEqual(8);
    expect(cap.cap).toBeLessThanOrEqual(8 + 2 * Math.sqrt(8) + 2);
  });

  it("re-measures every 30 s: a downstream that slowed for good gets its limit back to its workers, and the reason says what was measured", () => {
    const applied: number[] = [];
    const cap = new AdaptiveCap({ min: 1, max: 200, initial: 4, tolerance: 1.5 }, { setCap: () => undefined });
    const at = { now: 0 };
    drive(cap, { workers: 8, serviceMs: 20 }, at, 5000, applied);
    expect(cap.limiter.baselineMs).toBe(20);
    const slow = { workers: 8, serviceMs: 40 };
    drive(cap, slow, at, 5000, applied);
    // Judged against the old baseline, twice the latency reads as a queue: the limit sits under the workers.
    expect(cap.cap).toBeLessThan(8);
    const from = applied.length;
    const reasons: string[] = [];
    drive(cap, slow, at, PROBE_EVERY_MS, applied, reasons);
    expect(cap.limiter.baselineMs).toBe(40);
    expect(Math.min(...applied.slice(from))).toBeLessThanOrEqual(3);
    expect(reasons).toContainEqual(expect.stringMatching(/^re-measuring the no-load latency at cap [1-3] \(baseline 20 ms\)$/));
    expect(reasons).toContainEqual(expect.stringMatching(/^no-load latency re-measured at in-flight [1-3]: 20 ms → 40 ms$/));
    drive(cap, slow, at, 3000, applied);
    expect(cap.cap).toBeGreaterThanOrEqual(8);
  });

  it("a ceiling of 0 (a replica waiting for its turn) sets the cap to 0, and the limit comes back with the ceiling", () => {
    const set: number[] = [];
    const cap = new AdaptiveCap({ min: 2, max: 50, initial: 10, tolerance: 1.5 }, { setCap: (n) => set.push(n) });
    cap.setCeiling(0);
    expect(set).toEqual([0]);
    cap.setCeiling(1);
    cap.setCeiling(Infinity);
    expect(set).toEqual([0, 1, 10]);
  });

  it("with a replica budget, never sets the cap above the share, and follows the share when it grows", () => {
    const set: number[] = [];
    const cap = new AdaptiveCap({ min: 1, max: 50, initial: 4, tolerance: 1.5 }, { setCap: (n) => set.push(n) });
    cap.setCeiling(6);
    const at = { now: 0 };
    feed(cap, 10, 200, at);
    // The limit probes above the share only until the share's permits are under half of it.
    expect(cap.limiter.limit).toBeGreaterThan(6);
    expect(cap.limiter.limit).toBeLessThanOrEqual(13);
    expect(Math.max(...set)).toBe(6);
    expect(cap.cap).toBe(6);
    cap.setCeiling(20);
    expect(set.at(-1)).toBe(cap.limiter.limit);
    feed(cap, 10, 200, at);
    expect(cap.cap).toBe(20);
    cap.setCeiling(3);
    expect(set.at(-1)).toBe(3);
  });

  it("decides at most once per window: a burst of holds in one instant changes nothing", () => {
    const set: number[] = [];
    const cap = new AdaptiveCap({ min: 1, max: 50, initial: 10, tolerance: 1.5 }, { setCap: (n) => set.push(n) });
    for (let i = 0; i < 10_000; i++) cap.sample(i < 5000 ? 10 : 100, 10, 1);
    expect(set).toEqual([]);
    expect(cap.lastChange.reason).toBe("initial limit");
  });
});
