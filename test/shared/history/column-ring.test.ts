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

  it("starts up to a quarter larger by its spread, so rings started together do not all grow at once", () => {
    const sizesAt = (spread: number) => {
      const ring = new ColumnRing(schema, 1000, 64, spread);
      const out: number[] = [];
      for (let i = 0; i < 700; i++) {
        ring.append();
        out.push(ring.bytes() / 12);
      }
      return out;
    };
    // Spread 0: 64 rows, doubled when full, as before.
    expect(sizesAt(0).indexOf(128)).toBe(64);
    // The first growth of 100 rings spread over [0, 1) falls on 16 different appends: the 65th to the 80th.
    const firstGrowth = Array.from({ length: 100 }, (_, k) => sizesAt(k / 100).findIndex((rows, i) => i > 0 && rows > sizesAt(k / 100)[0]));
    expect(Math.min(...firstGrowth)).toBe(64);
    expect(Math.max(...firstGrowth)).toBe(79);
    expect(new Set(firstGrowth).size).toBe(16);
    // It doubles from there, when full, and never past maxPoints.
    const late = sizesAt(0.999);
    expect(late[0]).toBe(79);
    expect(late.indexOf(158)).toBe(79);
    expect(late.indexOf(316)).toBe(158);
    expect(late.indexOf(632)).toBe(316);
    expect(late.indexOf(1000)).toBe(632);
    expect(Math.max(...late)).toBe(1000);
    expect(() => new ColumnRing(schema, 10, 4, 1)).toThrow(RangeError);
    expect(() => new ColumnRing(schema, 10, 4, Number.NaN)).toThrow(RangeError);
  });
});
