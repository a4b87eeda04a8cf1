// The 1m roll-up against a brute-force computation from the raw samples.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BUCKETS, bucketLowerMs, type SparseHist } from "../../../shared/histogram.js";
import type { Sample } from "../../../shared/protocol/types.js";
import { SemaphoreHistory } from "../../../shared/history/semaphore-history.js";
import { T0, bruteQuantile, close, sample, summaryOf } from "./helpers.js";

const MIN = 60_000;

/** Up to 6 buckets with counts ≤ 31: what a quiet second sends, and what a 1s row keeps exactly. */
const histArb: fc.Arbitrary<SparseHist> = fc
  .uniqueArray(fc.integer({ min: 0, max: BUCKETS - 1 }), { maxLength: 6 })
  .chain((bs) =>
    fc
      .array(fc.integer({ min: 1, max: 31 }), { minLength: bs.length, maxLength: bs.length })
      .map((cs) => bs.sort((a, b) => a - b).map((b, i): [number, number] => [b, cs[i]])),
  );

const summaryArb = fc
  .tuple(histArb, fc.double({ min: 1, max: 1.09, noNaN: true }))
  .map(([hist, f]) => summaryOf(hist, hist.length === 0 ? 0 : bucketLowerMs(hist[hist.length - 1][0]) * f + 0.0005));

const rowArb = fc.record({
  gapMs: fc.integer({ min: 1, max: 2500 }),
  intervalMs: fc.constantFrom(250, 1000, 2000),
  cap: fc.integer({ min: 1, max: 100 }),
  inUse: fc.integer({ min: 0, max: 100 }),
  waiters: fc.integer({ min: 0, max: 50 }),
  oldestWaitMs: fc.double({ min: 0, max: 1e5, noNaN: true }),
  longestHoldMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
  acquired: fc.integer({ min: 0, max: 5000 }),
  released: fc.integer({ min: 0, max: 5000 }),
  timeouts: fc.integer({ min: 0, max: 50 }),
  rejections: fc.integer({ min: 0, max: 50 }),
  aborts: fc.integer({ min: 0, max: 50 }),
  doubleReleases: fc.integer({ min: 0, max: 5 }),
  leaseExpiries: fc.integer({ min: 0, max: 5 }),
  waitMs: summaryArb,
  holdMs: summaryArb,
});

describe("the minute roll-up", () => {
  it("equals sums, time-weighted means, maxima and merged-histogram percentiles of the raw samples", () => {
    fc.assert(
      fc.property(fc.array(rowArb, { minLength: 1, maxLength: 60 }), (rows) => {
        const h = new SemaphoreHistory();
        const pushed: { s: Sample; iv: number }[] = [];
        let t = T0;
        for (const r of rows) {
          t += r.gapMs;
          if (t >= T0 + MIN) break;
          const s = sample({ ...r, available: r.cap - r.inUse });
          h.push(s, t, r.intervalMs);
          pushed.push({ s, iv: r.intervalMs });
        }
        fc.pre(pushed.length > 0);
        h.push(sample(), T0 + MIN, 1000); // closes the minute
        const w = h.window("1m", T0, T0);
        expect(w.length).toBe(1);

        const covered = pushed.reduce((n, p) => n + p.iv, 0);
        const sum = (f: (s: Sample) => number) => pushed.reduce((n, p) => n + f(p.s), 0);
        const max = (f: (s: Sample) => number) => Math.max(...pushed.map((p) => f(p.s)));
        const mean = (f: (s: Sample) => number) => pushed.reduce((n, p) => n + f(p.s) * p.iv, 0) / covered;
        const expected: Record<string, number> = {
          cap: pushed[pushed.length - 1].s.cap,
          inUse: mean((s) => s.inUse),
          inUseMax: max((s) => s.inUse),
          available: Math.min(...pushed.map((p) => p.s.available)),
          waiters: mean((s) => s.waiters),
          waitersMax: max((s) => s.waiters),
          oldestWaitMs: max((s) => s.oldestWaitMs),
          longestHoldMs: max((s) => s.longestHoldMs),
          acquiredPerSec: sum((s) => s.acquired) / (covered / 1000),
          releasedPerSec: sum((s) => s.released) / (covered / 1000),
          timeoutsPerSec: sum((s) => s.timeouts) / (covered / 1000),
          rejectionsPerSec: sum((s) => s.rejections) / (covered / 1000),
          abortsPerSec: sum((s) => s.aborts) / (covered / 1000),
          doubleReleasesPerSec: sum((s) => s.doubleReleases) / (covered / 1000),
          leaseExpiriesPerSec: sum((s) => s.leaseExpiries) / (covered / 1000),
        };
        for (const kind of ["wait", "hold"] as const) {
          const summaries = pushed.map((p) => (kind === "wait" ? p.s.waitMs : p.s.holdMs));
          const hists = summaries.map((s) => s.hist);
          const top = Math.max(...summaries.map((s) => s.max));
          expected[`${kind}Count`] = summaries.reduce((n, s) => n + s.count, 0);
          expected[`${kind}Max`] = top;
          expected[`${kind}P50`] = bruteQuantile(hists, top, 0.5);
          expected[`${kind}P90`] = bruteQuantile(hists, top, 0.9);
          expected[`${kind}P99`] = bruteQuantile(hists, top, 0.99);

          // Over the same span, mergedSummary merges the 1s rows, which hold these histograms exactly.
          const merged = h.mergedSummary(T0, T0 + MIN - 1, kind);
          expect(merged.count).toBe(expected[`${kind}Count`]);
          expect(close(merged.p99, expected[`${kind}P99`])).toBe(true);
          expect(close(merged.p50, expected[`${kind}P50`])).toBe(true);
        }
        for (const [name, value] of Object.entries(expected)) {
          const got = (w as unknown as Record<string, Float64Array>)[name][0];
          if (!close(got, value)) expect.fail(`${name}: got ${got}, expected ${value}`);
        }
      }),
      { numRuns: 200 },
    );
  });
});
