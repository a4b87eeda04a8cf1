// Reconnect delays as a pure function of the attempt and an injected random source.
import { describe, expect, it } from "vitest";
import { Backoff, backoffCeiling, backoffDelay, BACKOFF_BASE_MS, BACKOFF_CAP_MS } from "../../../agent/src/reporter/backoff.js";

/** A deterministic random source in [0, 1). */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("backoff", () => {
  it("grows the window exponentially from ~500 ms up to the ~30 s cap", () => {
    const ceilings = Array.from({ length: 10 }, (_, a) => backoffCeiling(a));
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
    expect(BACKOFF_BASE_MS).toBe(500);
    expect(BACKOFF_CAP_MS).toBe(30_000);
    expect(backoffCeiling(10_000)).toBe(30_000);
    expect(backoffCeiling(-3)).toBe(500);
  });

  it("draws each delay from the whole window (full jitter)", () => {
    expect(backoffDelay(3, () => 0)).toBe(0);
    expect(backoffDelay(3, () => 0.5)).toBe(2000);
    expect(backoffDelay(3, () => 0.999999)).toBe(3999);
    // A broken random source still gives a delay inside the window.
    expect(backoffDelay(3, () => 1)).toBeLessThan(4000);
    expect(backoffDelay(3, () => NaN)).toBe(0);
    expect(backoffDelay(3, () => -1)).toBe(0);
  });

  it("spreads a fleet that lost the hub together over the window, not in one wave", () => {
    const random = seeded(42);
    for (const attempt of [0, 2, 5, 9]) {
      const delays = Array.from({ length: 1000 }, () => backoffDelay(attempt, random));
      const ceiling = backoffCeiling(attempt);
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...delays)).toBeLessThan(ceiling);
      // Roughly uniform: each tenth of the window gets about a tenth of the fleet.
      const deciles = new Array<number>(10).fill(0);
      for (const d of delays) deciles[Math.floor((d / ceiling) * 10)]++;
      for (const n of deciles) expect(n).toBeGreaterThan(50);
    }
  });

  it("counts attempts until reset(), with delays that grow and are jittered", () => {
    const b = new Backoff(seeded(7));
    const delays = Array.from({ length: 8 }, () => b.next());
    delays.forEach((d, a) => {
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(backoffCeiling(a));
    });
    // Jittered: no two equal, and not simply the ceilings.
    expect(new Set(delays).size).toBe(delays.length);
    // Growing: with the same random draw, a later attempt waits longer (until the cap).
    const fixed = new Backoff(() => 0.75);
    expect(Array.from({ length: 8 }, () => fixed.next())).toEqual([375, 750, 1500, 3000, 6000, 12000, 22500, 22500]);
    fixed.reset();
    expect(fixed.next()).toBe(375);
  });
});
