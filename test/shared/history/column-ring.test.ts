import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ColumnRing } from "../../../shared/history/column-ring.js";

const schema = { t: [Float64Array, 1], pair: [Uint16Array, 2] } as const;

describe("ColumnRing", () => {
  it("keeps exactly the newest maxPoints rows in order, through growth and wrap-around", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 150 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (max, initial, n, spread) => {
          const ring = new ColumnRing(schema, max, initial, spread);
          for (let i = 0; i < n; i++) {
            const p = ring.append();
            ring.cols.t[p] = i * 10;
            ring.cols.pair[2 * p] = i;
            ring.cols.pair[2 * p + 1] = i + 1;
          }
          const kept = Math.min(n, max);
          expect(ring.length).toBe(kept);
          for (let i = 0; i < kept; i++) {
            const v = n - kept + i;
            const p = ring.phys(i);
            expect(ring.timeAt(i)).toBe(v * 10);
            expect([ring.cols.pair[2 * p], ring.cols.pair[2 * p + 1]]).toEqual([v, v + 1]);
          }
          // search agrees with a linear scan, for values on and between rows
          for (let x = (n - kept) * 10 - 15; x <= n * 10 + 5; x += 5) {
            let ge = 0;
            while (ge < kept && ring.timeAt(ge) < x) ge++;
            let gt = 0;
            while (gt < kept && ring.timeAt(gt) <= x) gt++;
            expect(ring.search(x, false)).toBe(ge);
            expect(ring.search(x, true)).toBe(gt);
          }
          expect(ring.bytes()).toBeLessThanOrEqual(max * (8 + 4));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("grows by doubling from the initial size, never past maxPoints", () => {
    const ring = new ColumnRing(schema, 100, 4);
    expect(ring.bytes()).toBe(4 * 12);
    for (let i = 0; i < 5; i++) ring.append();
    expect(ring.bytes()).toBe(8 * 12);
    for (let i = 0; i < 200; i++) ring.append();
    expect(ring.bytes()).toBe(100 * 12);
  });

  it("grows early by its spread, at most a quarter of its rows, so rings started together do not all grow at once", () => {
    const sizesAt = (spread: number) => {
      const ring = new ColumnRing(schema, 1000, 64, spread);
      const out: number[] = [];
      for (let i = 0; i < 600; i++) {
        ring.append();
        out.push(ring.bytes() / 12);
      }
      return out;
    };
    // Spread 0: when full, as before.
    expect(sizesAt(0).indexOf(128)).toBe(64);
    // The first growth of 100 rings spread over [0, 1) falls on 16 different appends: the 50th to the 65th.
    const firstGrowth = Array.from({ length: 100 }, (_, k) => sizesAt(k / 100).indexOf(128));
    expect(Math.min(...firstGrowth)).toBe(49);
    expect(Math.max(...firstGrowth)).toBe(64);
    expect(new Set(firstGrowth).size).toBe(16);
    // The doublings after it spread the same way, and never pass maxPoints.
    const half = sizesAt(0.999);
    expect(half.indexOf(256)).toBe(128 - 31);
    expect(half.indexOf(512)).toBe(256 - 63);
    expect(half.indexOf(1000)).toBe(512 - 127);
    expect(Math.max(...half)).toBe(1000);
    expect(() => new ColumnRing(schema, 10, 4, 1)).toThrow(RangeError);
    expect(() => new ColumnRing(schema, 10, 4, Number.NaN)).toThrow(RangeError);
  });
});
