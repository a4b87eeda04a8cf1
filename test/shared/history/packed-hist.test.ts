import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BUCKETS, DenseHist, type SparseHist } from "../../../shared/histogram.js";
import { HistAccumulator, quantileBucket } from "../../../shared/history/hist-accumulator.js";
import {
  MAX_CODED_COUNT,
  decodeCount,
  encodeCount,
  packDense,
  packSparse,
  rankGrid,
  unpackDense,
} from "../../../shared/history/packed-hist.js";

function roundTrip(hist: SparseHist, size: number, weight = mass(hist)): Float64Array {
  const slot = new Uint8Array(size);
  packSparse(hist, slot, 0, size);
  return unpackDense(slot, 0, size, weight);
}

function mass(h: SparseHist): number {
  return h.reduce((n, [, c]) => n + c, 0);
}

function denseOf(h: SparseHist): Float64Array {
  const d = new Float64Array(BUCKETS);
  for (const [b, c] of h) d[b] += c;
  return d;
}

/** A wire histogram: distinct ascending buckets in [lo, 255] with positive integer counts. */
const histArb = (maxBuckets: number, maxCount: number, lo = 0) =>
  fc
    .uniqueArray(fc.integer({ min: lo, max: BUCKETS - 1 }), { minLength: 1, maxLength: maxBuckets })
    .chain((bs) =>
      fc
        .array(fc.integer({ min: 1, max: maxCount }), { minLength: bs.length, maxLength: bs.length })
        .map((cs) => bs.sort((a, b) => a - b).map((b, i): [number, number] => [b, cs[i]])),
    );

// A seeded generator, so the accuracy figures below are reproducible.
function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
}

function logNormalMinute(rand: () => number, median: number, sigma: number, zeroShare: number, n: number): DenseHist {
  const d = new DenseHist();
  for (let i = 0; i < n; i++) {
    if (rand() < zeroShare) d.recordZero();
    else d.record(median * Math.exp(sigma * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand())));
  }
  return d;
}

describe("count codes", () => {
  it("keep 0..31 exact and larger counts within 1/32", () => {
    for (let v = 0; v < 32; v++) expect(decodeCount(encodeCount(v))).toBe(v);
    fc.assert(
      fc.property(fc.integer({ min: 32, max: MAX_CODED_COUNT }), (v) => {
        expect(Math.abs(decodeCount(encodeCount(v)) - v)).toBeLessThanOrEqual(v / 32);
      }),
    );
  });

  it("never code a non-empty bucket as empty", () => {
    expect(encodeCount(0.2)).toBeGreaterThan(0);
    expect(encodeCount(0)).toBe(0);
  });
});

describe("packed histograms", () => {
  it("packs a wire histogram exactly as its dense counts would be packed, sorted or not, malformed pairs skipped", () => {
    // packSparse takes an ascending histogram's pairs as they are; anything else goes through dense counts.
    const pair = fc.tuple(fc.oneof(fc.integer({ min: 0, max: BUCKETS - 1 }), fc.constantFrom(-1, 256, 1.5, NaN)), fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.constantFrom(-1, 0, Infinity, NaN, 0.5)));
    const anyHist = fc.oneof(histArb(12, 5000), fc.array(pair, { maxLength: 14 }));
    fc.assert(
      fc.property(anyHist, fc.integer({ min: 5, max: 32 }), (hist, size) => {
        const fast = new Uint8Array(size + 4).fill(7);
        packSparse(hist as SparseHist, fast, 2, size);
        const dense = new Float64Array(BUCKETS);
        for (const [b, c] of hist) if (Number.isInteger(b) && b >= 0 && b < BUCKETS && c > 0 && Number.isFinite(c)) dense[b] += c;
        const ref = new Uint8Array(size + 4).fill(7);
        packDense(dense, ref, 2, size);
        expect([...fast]).toEqual([...ref]);
      }),
      { numRuns: 2000 },
    );
  });

  it("hold a histogram with few buckets exactly (small counts) and its shape within 1/32 (any counts)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 5, max: 32 }), histArb(15, 31), (size, hist) => {
        fc.pre(hist.length <= (size - 1) >> 1);
        expect(Array.from(roundTrip(hist, size))).toEqual(Array.from(denseOf(hist)));
      }),
    );
    // Counts past one code are scaled together; a thin bucket then rounds up to one code unit
    // (40 M / 507 904 ≈ 79 here), a rounding of 2e-6 of the mass, rather than vanishing.
    const big: SparseHist = [[0, 40_000_000], [90, 70_000], [130, 3]];
    const got = roundTrip(big, 13);
    const unit = 40_000_000 / MAX_CODED_COUNT;
    for (const [b, c] of big) expect(Math.abs(got[b] - c)).toBeLessThanOrEqual(c / 32 + unit);
    expect(got[130]).toBeGreaterThan(0);
  });

  it("sketch a wide histogram: mass kept, nothing outside its range, percentiles in the right buckets", () => {
    fc.assert(
      fc.property(fc.integer({ min: 5, max: 32 }), histArb(BUCKETS, 1000, 1), (size, hist) => {
        fc.pre(hist.length > (size - 1) >> 1);
        const w = mass(hist);
        const got = roundTrip(hist, size);
        const lo = hist[0][0];
        const hi = hist[hist.length - 1][0];
        let sum = 0;
        got.forEach((c, b) => {
          if (b < lo || b > hi) expect(c).toBe(0);
          sum += c;
        });
        expect(sum).toBeCloseTo(w, 6);
        // The decoded q-quantile lies between the true buckets of the sketched ranks around q:
        // the last one ≤ q, and the first one nearest-rank rounding (1/w) cannot pass. With the
        // default sizes p50, p90 and p99 are sketched ranks themselves.
        const exact = denseOf(hist);
        const grid = Array.from(rankGrid(size - 3));
        for (const q of [0.5, 0.9, 0.99]) {
          const prev = grid.filter((r) => r <= q).pop() ?? 0;
          const next = grid.find((r) => r >= q + 1 / w) ?? 1;
          const b = quantileBucket(got, sum, q);
          expect(b).toBeGreaterThanOrEqual(quantileBucket(exact, w, prev));
          expect(b).toBeLessThanOrEqual(next === 1 ? hi : quantileBucket(exact, w, next));
        }
      }),
    );
  });

  it("sketch p50, p90 and p99 as ranks of their own at the default sizes", () => {
    for (const bytes of [13, 17]) {
      const grid = Array.from(rankGrid(bytes - 3));
      expect(grid).toHaveLength(bytes - 3);
      for (const q of [0, 0.5, 0.9, 0.99, 0.999, 1]) expect(grid).toContain(q);
    }
  });

  it("keep immediate grants (bucket 0) apart from a sketched millisecond body", () => {
    const hist: SparseHist = [[0, 7000]];
    for (let b = 80; b < 120; b++) hist.push([b, 75]);
    const got = roundTrip(hist, 17);
    expect(got[0]).toBeCloseTo(7000, 0);
    for (let b = 1; b < 80; b++) expect(got[b]).toBe(0);
  });

  it("weight a slot by the row's count, and treat an empty slot as no mass", () => {
    const got = roundTrip([[10, 1], [20, 3]], 13, 400);
    expect([got[10], got[20]]).toEqual([100, 300]);
    const slot = new Uint8Array(13);
    packDense(new Float64Array(BUCKETS), slot, 0, 13);
    expect(unpackDense(slot, 0, 13, 50).every((c) => c === 0)).toBe(true);
  });

  it("merge 60 log-normal minutes (a 1 h p99) and 3 replicas (a fleet p99) within one bucket", () => {
    const rand = rng(11);
    for (const [count, sigma, zeroShare] of [[60, 1, 0], [60, 1.5, 0.3], [3, 1, 0.8], [3, 0.5, 0]] as const) {
      const parts: DenseHist[] = [];
      for (let i = 0; i < count; i++) {
        parts.push(logNormalMinute(rand, 20 * Math.exp(0.5 * (rand() - 0.5)), sigma, zeroShare, 500 + Math.floor(rand() * 4000)));
      }
      const exact = new DenseHist();
      const merged = new HistAccumulator();
      for (const d of parts) {
        exact.addDense(d);
        const slot = new Uint8Array(17);
        packDense(d.counts, slot, 0, 17);
        merged.addPacked(slot, 0, 17, d.count, d.max);
      }
      for (const q of [0.5, 0.9, 0.99]) {
        const e = exact.quantile(q);
        expect(Math.abs(merged.quantile(q) - e)).toBeLessThanOrEqual(0.1 * e);
      }
    }
  });
});
