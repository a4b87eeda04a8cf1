// The adaptive cap's window and ceiling: what a replica budget's share does to the limit.
import { describe, expect, it } from "vitest";
import { AdaptiveCap } from "../../../agent/src/adaptive/adaptive-cap.js";

function feed(cap: AdaptiveCap, holdMs: number, windows: number, at: { now: number }, inFlight = (): number => cap.cap): void {
  for (let w = 0; w < windows; w++) {
    for (let i = 0; i < 6; i++) cap.sample(holdMs, inFlight(), (at.now += 20));
  }
}

describe("AdaptiveCap", () => {
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
