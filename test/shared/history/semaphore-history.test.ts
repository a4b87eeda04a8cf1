import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bucketOfMs } from "../../../shared/histogram.js";
import { HISTORY_FULL_BYTES, historyFullBytes, pickTier } from "../../../shared/history/history-options.js";
import { SemaphoreHistory } from "../../../shared/history/semaphore-history.js";
import { T0, bruteQuantile, sample, summaryOf } from "./helpers.js";

const SEC = 1000;
const MIN = 60_000;

describe("the 1s tier", () => {
  it("keeps exactly the newest 900 samples, in order, once it wraps", () => {
    const h = new SemaphoreHistory();
    for (let i = 0; i < 1000; i++) h.push(sample({ inUse: i % 7, acquired: i }), T0 + i * SEC, SEC);
    const w = h.window("1s", -Infinity, Infinity);
    expect(w.length).toBe(900);
    expect(Array.from(w.t)).toEqual(Array.from({ length: 900 }, (_, j) => T0 + (100 + j) * SEC));
    expect(Array.from(w.inUse)).toEqual(Array.from({ length: 900 }, (_, j) => (100 + j) % 7));
    expect(Array.from(w.acquiredPerSec)).toEqual(Array.from({ length: 900 }, (_, j) => 100 + j));
  });

  it("reads every column of every row back, across chunks and after wrapping, for any range", () => {
    // Rings of a few chunks (secondPoints 20–200 → chunks of ~64 rows or fewer), filled short of,
    // up to, and well past wrapping; every value distinct per row and the interval varying, so a
    // row read from the wrong place or a rate from the wrong interval shows.
    const f32 = Math.fround;
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 200 }), fc.integer({ min: 1, max: 500 }), fc.integer({ min: -20, max: 520 }), fc.integer({ min: 0, max: 520 }), (points, pushes, from, span) => {
        const h = new SemaphoreHistory({ secondPoints: points, minutePoints: 5 });
        const intervalOf = (i: number) => [1000, 500, 2000][i % 3];
        let t = T0;
        const ts: number[] = [];
        for (let i = 0; i < pushes; i++) {
          t += 1000;
          ts.push(t);
          h.push(
            sample({
              cap: 1000 + i, inUse: i % 97, available: 5 + (i % 13), waiters: i % 11, oldestWaitMs: 1.5 * i, longestHoldMs: 2.25 * i,
              acquired: 3 * i, released: 3 * i + 1, timeouts: i % 5, rejections: i % 3, aborts: i % 2, doubleReleases: i % 4, leaseExpiries: i % 6,
              waitMs: { count: i, p50: i + 0.1, p90: i + 0.2, p99: i + 0.3, max: i + 0.4, hist: [] },
              holdMs: { count: 2 * i, p50: i + 0.5, p90: i + 0.6, p99: i + 0.7, max: i + 0.8, hist: [] },
            }),
            t,
            intervalOf(i),
          );
        }
        const fromT = T0 + from * 1000;
        const toT = fromT + span * 1000;
        const kept = ts.map((x, i) => [x, i] as const).slice(-points).filter(([x]) => x >= fromT && x <= toT);
        const w = h.window("1s", fromT, toT);
        expect(w.length).toBe(kept.length);
        kept.forEach(([x, i], j) => {
          const perSec = 1000 / intervalOf(i);
          const row = [w.t[j], w.intervalMs[j], w.cap[j], w.inUse[j], w.inUseMax[j], w.available[j], w.waiters[j], w.waitersMax[j], w.oldestWaitMs[j], w.longestHoldMs[j]];
          expect(row).toEqual([x, intervalOf(i), 1000 + i, i % 97, i % 97, 5 + (i % 13), i % 11, i % 11, f32(1.5 * i), f32(2.25 * i)]);
          const rates = [w.acquiredPerSec[j], w.releasedPerSec[j], w.timeoutsPerSec[j], w.rejectionsPerSec[j], w.abortsPerSec[j], w.doubleReleasesPerSec[j], w.leaseExpiriesPerSec[j]];
          expect(rates).toEqual([3 * i, 3 * i + 1, i % 5, i % 3, i % 2, i % 4, i % 6].map((c) => c * perSec));
          const summaries = [w.waitCount[j], w.waitP50[j], w.waitP90[j], w.waitP99[j], w.waitMax[j], w.holdCount[j], w.holdP50[j], w.holdP90[j], w.holdP99[j], w.holdMax[j]];
          expect(summaries).toEqual([i, i + 0.1, i + 0.2, i + 0.3, i + 0.4, 2 * i, i + 0.5, i + 0.6, i + 0.7, i + 0.8].map(f32));
        });
      }),
      { numRuns: 200 },
    );
  });

  it("returns the points with from ≤ t ≤ to, both ends included", () => {
    const h = new SemaphoreHistory();
    for (let i = 0; i < 10; i++) h.push(sample({ inUse: i }), T0 + i * SEC, SEC);
    const inUse = (from: number, to: number) => Array.from(h.window("1s", from, to).inUse);
    expect(inUse(T0 + 2 * SEC, T0 + 5 * SEC)).toEqual([2, 3, 4, 5]);
    expect(inUse(T0 + 2.5 * SEC, T0 + 5.5 * SEC)).toEqual([3, 4, 5]);
    expect(inUse(T0 + 5 * SEC, T0 + 5 * SEC)).toEqual([5]);
    expect(inUse(T0 + 6 * SEC, T0 + 2 * SEC)).toEqual([]);
    expect(inUse(T0 - 9 * SEC, T0 - SEC)).toEqual([]);
    expect(inUse(T0 + 10 * SEC, T0 + 20 * SEC)).toEqual([]);
    expect(inUse(-Infinity, Infinity)).toHaveLength(10);
  });

  it("returns fresh arrays that later pushes do not change", () => {
    const h = new SemaphoreHistory({ secondPoints: 3 });
    for (let i = 0; i < 3; i++) h.push(sample({ inUse: i }), T0 + i * SEC, SEC);
    const w = h.window("1s", -Infinity, Infinity);
    for (let i = 3; i < 6; i++) h.push(sample({ inUse: i }), T0 + i * SEC, SEC);
    expect(Array.from(w.inUse)).toEqual([0, 1, 2]);
  });

  it("turns per-interval counts into per-second rates with the sample's own interval", () => {
    const h = new SemaphoreHistory();
    h.push(sample({ acquired: 3, released: 2, timeouts: 1, rejections: 4 }), T0, 500);
    h.push(sample({ acquired: 30 }), T0 + 10 * SEC, 10 * SEC);
    const w = h.window("1s", -Infinity, Infinity);
    expect([w.acquiredPerSec[0], w.releasedPerSec[0], w.timeoutsPerSec[0], w.rejectionsPerSec[0]]).toEqual([6, 4, 2, 8]);
    expect(w.acquiredPerSec[1]).toBe(3);
    expect(Array.from(w.intervalMs)).toEqual([500, 10 * SEC]);
  });

  it("keeps the agent's own percentiles, gauges and ages", () => {
    const h = new SemaphoreHistory();
    const waitMs = { count: 5, p50: 1.5, p90: 7.25, p99: 12.5, max: 13, hist: [[90, 5]] as [number, number][] };
    h.push(sample({ cap: 8, inUse: 8, available: 0, waiters: 3, oldestWaitMs: 4200, longestHoldMs: 90_000, waitMs }), T0, SEC);
    const w = h.window("1s", T0, T0);
    expect([w.cap[0], w.inUse[0], w.inUseMax[0], w.available[0], w.waiters[0], w.waitersMax[0]]).toEqual([8, 8, 8, 0, 3, 3]);
    expect([w.oldestWaitMs[0], w.longestHoldMs[0]]).toEqual([4200, 90_000]);
    expect([w.waitCount[0], w.waitP50[0], w.waitP90[0], w.waitP99[0], w.waitMax[0]]).toEqual([5, 1.5, 7.25, 12.5, 13]);
  });
});

describe("late and duplicate samples", () => {
  it("are ignored by both tiers, counted, and reported by push()", () => {
    const h = new SemaphoreHistory();
    expect(h.push(sample({ acquired: 1, inUse: 1 }), T0 + 1 * SEC, SEC)).toBe(true);
    expect(h.push(sample({ acquired: 2, inUse: 2 }), T0 + 2 * SEC, SEC)).toBe(true);
    expect(h.push(sample({ acquired: 100, inUse: 50 }), T0 + 2 * SEC, SEC)).toBe(false); // duplicate t
    expect(h.push(sample({ acquired: 100, inUse: 50 }), T0 + 1.5 * SEC, SEC)).toBe(false); // late, same minute
    expect(h.ignored).toBe(2);
    expect(h.window("1s", T0 + 2 * SEC, T0 + 2 * SEC).acquiredPerSec[0]).toBe(2);
    expect(h.latestT()).toBe(T0 + 2 * SEC);
    expect(Array.from(h.window("1s", -Infinity, Infinity).t)).toEqual([T0 + SEC, T0 + 2 * SEC]);
    h.push(sample(), T0 + MIN, SEC); // closes the first minute
    const m = h.window("1m", T0, T0);
    expect(m.acquiredPerSec[0] * 2).toBe(3); // 1 + 2 over the 2 s the accepted samples cover
    expect(m.inUseMax[0]).toBe(2);
  });

  it("are rejected with a RangeError when t or the interval is not a usable number", () => {
    const h = new SemaphoreHistory();
    expect(() => h.push(sample(), NaN, SEC)).toThrow(RangeError);
    expect(() => h.push(sample(), T0, 0)).toThrow(RangeError);
    expect(() => h.push(sample(), T0, Infinity)).toThrow(RangeError);
    expect(h.latestT()).toBeNull();
  });
});

describe("the 1m tier", () => {
  it("keeps exactly the newest 1440 closed minutes in order, then the open minute", () => {
    const h = new SemaphoreHistory();
    for (let m = 0; m < 1500; m++) h.push(sample({ inUse: m % 13, acquired: m }), T0 + m * MIN + 500, SEC);
    const w = h.window("1m", -Infinity, Infinity);
    expect(w.length).toBe(1441);
    expect(w.partialLast).toBe(true);
    expect(Array.from(w.t)).toEqual(Array.from({ length: 1441 }, (_, j) => T0 + (59 + j) * MIN));
    expect(Array.from(w.inUseMax)).toEqual(Array.from({ length: 1441 }, (_, j) => (59 + j) % 13));
    expect(w.acquiredPerSec[1440]).toBe(1499); // one 1 s sample of 1499 acquisitions
  });

  it("rolls a minute up: counter sums, time-weighted means, maxima, min available, last cap", () => {
    const h = new SemaphoreHistory();
    const rows = [
      { at: 1, iv: 1000, s: { cap: 10, inUse: 2, available: 8, waiters: 0, acquired: 5, timeouts: 1, oldestWaitMs: 0, longestHoldMs: 30 } },
      { at: 2, iv: 1000, s: { cap: 10, inUse: 10, available: 0, waiters: 4, acquired: 7, timeouts: 0, oldestWaitMs: 900, longestHoldMs: 10 } },
      { at: 4, iv: 2000, s: { cap: 12, inUse: 6, available: 6, waiters: 1, acquired: 9, timeouts: 2, oldestWaitMs: 300, longestHoldMs: 20 } },
    ];
    for (const r of rows) h.push(sample(r.s), T0 + r.at * SEC, r.iv);
    h.push(sample(), T0 + MIN, SEC);
    const w = h.window("1m", T0, T0);
    expect(w.length).toBe(1);
    expect(w.partialLast).toBe(false);
    expect(w.intervalMs[0]).toBe(MIN);
    expect(w.cap[0]).toBe(12);
    expect(w.inUse[0]).toBeCloseTo((2 * 1 + 10 * 1 + 6 * 2) / 4, 6);
    expect(w.inUseMax[0]).toBe(10);
    expect(w.available[0]).toBe(0);
    expect(w.waiters[0]).toBeCloseTo((0 + 4 + 1 * 2) / 4, 6);
    expect(w.waitersMax[0]).toBe(4);
    expect(w.oldestWaitMs[0]).toBe(900);
    expect(w.longestHoldMs[0]).toBe(30);
    expect(w.acquiredPerSec[0]).toBeCloseTo(21 / 4, 6);
    expect(w.timeoutsPerSec[0]).toBeCloseTo(3 / 4, 6);
  });

  it("takes a minute's percentiles from its merged histogram, not from averaged percentiles", () => {
    const h = new SemaphoreHistory();
    // 59 quiet seconds with one fast grant each, one second with 3 slow grants: a merged p99 is
    // slow (rank 62 of 62), an average of per-second p99s would be fast.
    const fast = summaryOf([[40, 1]], 0.2);
    const slow = summaryOf([[130, 3]], 85);
    for (let i = 1; i <= 60; i++) h.push(sample({ waitMs: i === 30 ? slow : fast }), T0 + i * SEC - 1, SEC);
    h.push(sample(), T0 + MIN, SEC);
    const w = h.window("1m", T0, T0);
    const hists = [...Array<[number, number][]>(59).fill(fast.hist), slow.hist];
    expect(w.waitP99[0]).toBeCloseTo(bruteQuantile(hists, 85, 0.99), 4);
    expect(w.waitP50[0]).toBeCloseTo(bruteQuantile(hists, 85, 0.5), 6);
    expect(w.waitP99[0]).toBeGreaterThan(50);
    expect(w.waitCount[0]).toBe(62);
    expect(w.waitMax[0]).toBe(85);
  });

  it("shows the open minute as a provisional last point that follows new samples", () => {
    const h = new SemaphoreHistory();
    h.push(sample({ inUse: 3 }), T0 + 10 * SEC, SEC);
    let w = h.window("1m", -Infinity, Infinity);
    expect([w.length, w.partialLast, w.inUseMax[0]]).toEqual([1, true, 3]);
    h.push(sample({ inUse: 9 }), T0 + 20 * SEC, SEC);
    w = h.window("1m", -Infinity, Infinity);
    expect([w.length, w.partialLast, w.inUseMax[0]]).toEqual([1, true, 9]);
    h.push(sample({ inUse: 1 }), T0 + MIN + 5 * SEC, SEC);
    w = h.window("1m", -Infinity, Infinity);
    expect([w.length, w.partialLast, w.inUseMax[0], w.inUseMax[1]]).toEqual([2, true, 9, 1]);
    expect(h.window("1m", T0, T0 + 30 * SEC).partialLast).toBe(false);
  });
});

describe("mergedSummary", () => {
  const hists: [number, number][][] = [[[10, 2], [60, 1]], [[70, 4]], [[0, 3], [120, 1]]];

  it("merges the histograms of the 1s points in range while the 1s tier reaches back that far", () => {
    const h = new SemaphoreHistory();
    hists.forEach((hist, i) => h.push(sample({ holdMs: summaryOf(hist, 5 + i) }), T0 + (i + 1) * SEC, SEC));
    const s = h.mergedSummary(T0 + 2 * SEC, T0 + 3 * SEC, "hold");
    const inRange = hists.slice(1);
    expect(s.count).toBe(8);
    expect(s.max).toBe(7);
    expect(s.hist).toEqual([[0, 3], [70, 4], [120, 1]]);
    for (const q of [0.5, 0.9, 0.99] as const) {
      const key = q === 0.5 ? "p50" : q === 0.9 ? "p90" : "p99";
      expect(s[key]).toBeCloseTo(bruteQuantile(inRange, 7, q), 6);
    }
    expect(h.mergedSummary(T0 + 5 * SEC, T0 + 9 * SEC, "hold").count).toBe(0);
  });

  it("falls back to whole minutes of the 1m tier for a range older than the 1s tier (a 1 h p99)", () => {
    const h = new SemaphoreHistory({ secondPoints: 30 });
    // 62 minutes, one sample each: minute m had 10 grants that waited 2^(m mod 4) ms.
    const hists: [number, number][][] = [];
    for (let m = 0; m <= 61; m++) {
      const ms = 2 ** (m % 4);
      hists.push([[bucketOfMs(ms), 10]]);
      h.push(sample({ waitMs: summaryOf(hists[m], ms) }), T0 + m * MIN + SEC, SEC);
    }
    const hour = h.mergedSummary(T0, T0 + 59 * MIN, "wait"); // the 60 minutes that start in the hour
    const inHour = hists.slice(0, 60);
    expect(hour.count).toBe(600);
    expect(hour.max).toBe(8);
    expect(hour.hist).toEqual([1, 2, 4, 8].map((ms) => [bucketOfMs(ms), 150]));
    expect(hour.p50).toBeCloseTo(bruteQuantile(inHour, 8, 0.5), 6);
    expect(hour.p90).toBeCloseTo(bruteQuantile(inHour, 8, 0.9), 6);
    expect(hour.p99).toBeCloseTo(bruteQuantile(inHour, 8, 0.99), 6);
  });
});

describe("memory", () => {
  it("stays at the stated figure (≤ 300 KiB) once both tiers are full, and grows to it from little", () => {
    const h = new SemaphoreHistory();
    expect(h.bytes()).toBeLessThan(16 * 1024);
    for (let i = 0; i < 300; i++) h.push(sample(), T0 + i * SEC, SEC);
    expect(h.bytes()).toBeLessThan(80 * 1024);
    for (let m = 5; m <= 1445; m++) h.push(sample(), T0 + m * MIN, SEC);
    expect(h.bytes()).toBe(HISTORY_FULL_BYTES);
    expect(HISTORY_FULL_BYTES).toBe(305_416);
    expect(HISTORY_FULL_BYTES).toBeLessThanOrEqual(300 * 1024);
    for (let m = 1446; m <= 1500; m++) h.push(sample(), T0 + m * MIN, SEC);
    expect(h.bytes()).toBe(HISTORY_FULL_BYTES);
  });

  it("matches historyFullBytes for other shapes", () => {
    const opts = { secondPoints: 10, minutePoints: 5, secondHistBytes: 5, minuteHistBytes: 32 };
    const h = new SemaphoreHistory(opts);
    for (let m = 0; m < 20; m++) h.push(sample(), T0 + m * MIN, SEC);
    expect(h.bytes()).toBe(historyFullBytes(opts));
    expect(() => new SemaphoreHistory({ minuteHistBytes: 4 })).toThrow(RangeError);
    expect(() => new SemaphoreHistory({ secondPoints: 0 })).toThrow(RangeError);
  });
});

describe("pickTier", () => {
  it("reads 1s points for 1, 5 and 15 minute views and 1m points for 1 h and 24 h", () => {
    expect(pickTier(1 * MIN)).toBe("1s");
    expect(pickTier(5 * MIN)).toBe("1s");
    expect(pickTier(15 * MIN)).toBe("1s");
    expect(pickTier(15 * MIN + 1)).toBe("1m");
    expect(pickTier(60 * MIN)).toBe("1m");
    expect(pickTier(24 * 60 * MIN)).toBe("1m");
    expect(pickTier(30 * MIN, 2 * SEC)).toBe("1s"); // 900 points of 2 s cover 30 minutes
  });
});
