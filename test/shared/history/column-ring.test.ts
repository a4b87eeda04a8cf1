import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkRowsFor, ColumnRing, RowPool } from "../../../shared/history/column-ring.js";

const schema = { t: [Float64Array, 1], pair: [Uint16Array, 2] } as const;
const ROW = 8 + 4;

function write(ring: ColumnRing<typeof schema>, v: number): void {
  const p = ring.append();
  const cols = ring.at;
  cols.t[p] = v * 10;
  cols.pair[2 * p] = v;
  cols.pair[2 * p + 1] = v + 1;
  // The newest row is found where append() put it, by locating it or as the newest.
  expect(ring.locate(ring.length - 1)).toBe(p);
  expect(ring.at).toBe(cols);
  expect(ring.newestTime()).toBe(v * 10);
  ring.locate(0);
  expect(ring.newest()).toBe(p);
  expect(ring.at).toBe(cols);
}

function rows(ring: ColumnRing<typeof schema>): number[][] {
  return Array.from({ length: ring.length }, (_, i) => {
    const p = ring.locate(i);
    return [ring.at.t[p], ring.at.pair[2 * p], ring.at.pair[2 * p + 1]];
  });
}

describe("ColumnRing", () => {
  it("keeps exactly the newest maxPoints rows of each ring in order, with rings sharing a pool, growing, wrapping and being dropped", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        // Slabs of 1 to 4 chunks: rings' chunks interleave across slabs.
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom("append", "append", "append", "drop")), { maxLength: 300 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (max, target, chunksPerSlab, ops, spread) => {
          const chunk = chunkRowsFor(max, target);
          const pool = new RowPool(schema, chunk, chunksPerSlab * chunk * ROW);
          const rings = [0, 1, 2, 3].map(() => new ColumnRing(pool, max, spread));
          const appended = [0, 0, 0, 0];
          // Each ring writes values of its own (base + count), so a row of another ring shows.
          const base = [0, 1000, 2000, 3000];
          let made = 4;
          for (const [k, op] of ops) {
            if (op === "drop") {
              rings[k].release();
              expect(rings[k].length).toBe(0);
              rings[k] = new ColumnRing(pool, max, spread);
              appended[k] = 0;
              base[k] = 1000 * made++;
            } else {
              write(rings[k], base[k] + appended[k]);
              appended[k]++;
            }
          }
          for (let k = 0; k < 4; k++) {
            const ring = rings[k];
            const n = appended[k];
            const kept = Math.min(n, max);
            expect(ring.length).toBe(kept);
            const first = base[k] + n - kept;
            // Consecutive values, the newest last: no row lost, moved or written by another ring.
            // (The Uint16 column keeps the low 16 bits.)
            expect(rows(ring)).toEqual(Array.from({ length: kept }, (_, i) => [(first + i) * 10, (first + i) & 0xffff, (first + i + 1) & 0xffff]));
            // search agrees with a linear scan, for values on and between rows
            for (let x = first * 10 - 15; x <= (first + kept) * 10 + 5; x += 5) {
              let ge = 0;
              while (ge < kept && ring.timeAt(ge) < x) ge++;
              let gt = 0;
              while (gt < kept && ring.timeAt(gt) <= x) gt++;
              expect(ring.search(x, false)).toBe(ge);
              expect(ring.search(x, true)).toBe(gt);
            }
            expect(ring.bytes()).toBeLessThanOrEqual(Math.ceil(max / chunk) * chunk * ROW);
          }
          // Chunks given back are handed out again before a new slab is allocated.
          const live = rings.reduce((sum, r) => sum + r.bytes(), 0) / (chunk * ROW);
          expect(pool.held).toBe(live);
          expect(pool.bytes()).toBeLessThanOrEqual(Math.ceil((4 * Math.ceil(max / chunk)) / pool.chunksPerSlab) * pool.chunksPerSlab * chunk * ROW);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("grows a chunk at a time up to maxPoints, and never moves a row it holds", () => {
    const pool = new RowPool(schema, 4, 0);
    const ring = new ColumnRing(pool, 10, 0);
    expect(ring.bytes()).toBe(4 * ROW);
    const where: { cols: unknown; p: number }[] = [];
    for (let v = 0; v < 10; v++) {
      write(ring, v);
      where.push({ cols: ring.at, p: ring.locate(v) });
    }
    // 4 + 4 + 2 (capped at maxPoints): the last chunk's rows past 10 are never used.
    expect(ring.bytes()).toBe(12 * ROW);
    for (let v = 0; v < 10; v++) {
      const p = ring.locate(v);
      expect(ring.at).toBe(where[v].cols);
      expect(p).toBe(where[v].p);
      expect(ring.at.pair[2 * p]).toBe(v);
    }
    write(ring, 10);
    expect(ring.bytes()).toBe(12 * ROW);
    expect(rows(ring).map((r) => r[1])).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("keeps each ring's rows apart when rings filled in turn hold alternate chunks of a slab, through wrap-around", () => {
    const pool = new RowPool(schema, 4, 64 * 4 * ROW);
    const rings = [0, 1, 2].map(() => new ColumnRing(pool, 10));
    for (let v = 0; v < 25; v++) rings.forEach((ring, k) => write(ring, 100 * k + v));
    rings.forEach((ring, k) => expect(rows(ring).map((r) => r[1])).toEqual(Array.from({ length: 10 }, (_, i) => 100 * k + 15 + i)));
  });

  it("takes its next chunk up to a chunk early by its spread, so rings started together do not all take one at once", () => {
    const chunkAt = (spread: number) => {
      const ring = new ColumnRing(new RowPool(schema, 60, 0), 900, spread);
      const out: number[] = [];
      for (let i = 0; i < 200; i++) {
        write(ring, i);
        out.push(ring.bytes() / ROW);
      }
      return out;
    };
    // Spread 0: the second chunk when the first is full (after the 60th row), the third after the 120th.
    expect(chunkAt(0).indexOf(120)).toBe(59);
    expect(chunkAt(0).indexOf(180)).toBe(119);
    // 100 rings spread over [0, 1) take their second chunk on 60 different appends, never later than needed.
    const second = Array.from({ length: 100 }, (_, k) => chunkAt(k / 100).indexOf(120));
    expect(Math.max(...second)).toBe(59);
    expect(Math.min(...second)).toBe(0);
    expect(new Set(second).size).toBe(60);
    expect(() => new ColumnRing(new RowPool(schema, 4), 10, 1)).toThrow(RangeError);
    expect(() => new ColumnRing(new RowPool(schema, 4), 10, Number.NaN)).toThrow(RangeError);
  });

  it("holds nothing once released: no rows read, appending throws, its chunks go to the next ring", () => {
    const pool = new RowPool(schema, 8);
    const a = new ColumnRing(pool, 20);
    for (let v = 0; v < 20; v++) write(a, v);
    const slabBytes = pool.bytes();
    a.release();
    expect(a.length).toBe(0);
    expect(a.bytes()).toBe(0);
    expect(pool.held).toBe(0);
    expect(() => a.append()).toThrow(/released/);
    const b = new ColumnRing(pool, 20);
    for (let v = 100; v < 120; v++) write(b, v);
    expect(pool.bytes()).toBe(slabBytes);
    expect(rows(b).map((r) => r[1])).toEqual(Array.from({ length: 20 }, (_, i) => 100 + i));
  });

  it("sizes chunks to divide a ring into equal parts near the target", () => {
    expect(chunkRowsFor(900, 64)).toBe(60);
    expect(chunkRowsFor(1440, 16)).toBe(16);
    expect(chunkRowsFor(3, 64)).toBe(3);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 512 }), (max, target) => {
        const rows = chunkRowsFor(max, target);
        const chunks = Math.ceil(max / rows);
        expect(rows).toBeLessThanOrEqual(Math.max(target, 1));
        expect(chunks * rows - max).toBeLessThan(chunks);
      }),
    );
  });
});
