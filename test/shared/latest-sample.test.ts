// LatestSample (shared/protocol/latest-sample.ts) holds each semaphore's latest sample as numbers
// in one array, and what it gives back is what /api/state, /ui, /metrics and the fleet views show:
// the sample written, exactly, whatever the sizes of the histograms written before it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LatestSample } from "../../shared/protocol/latest-sample.js";
import type { Sample } from "../../shared/protocol/index.js";
import { makeSample } from "../fixtures/protocol.js";

const amount = fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), fc.maxSafeNat());
// Up to 64 pairs: past the 8 each summary has room for at first, so growth is exercised.
const pairs = (size: "small" | "max") =>
  fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.oneof(fc.nat(), fc.maxSafeNat())), { selector: (p) => p[0], maxLength: 64, size });
const hist = fc.oneof(pairs("small"), pairs("max")).map((p) => p.sort((a, b) => a[0] - b[0]));
const summary = fc.record({ count: amount, p50: amount, p90: amount, p99: amount, max: amount, hist });
const sample: fc.Arbitrary<Sample> = fc.record(
  {
    id: fc.string({ maxLength: 12 }),
    cap: amount,
    inUse: amount,
    available: fc.double({ noNaN: true, noDefaultInfinity: true }),
    waiters: amount,
    oldestWaitMs: amount,
    acquired: amount,
    released: amount,
    timeouts: amount,
    rejections: amount,
    aborts: amount,
    doubleReleases: amount,
    leaseExpiries: amount,
    waitMs: summary,
    holdMs: summary,
    longestHoldMs: amount,
    global: fc.record({ inUse: amount, holders: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }), own: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }) }),
  },
  { requiredKeys: ["id", "cap", "inUse", "available", "waiters", "oldestWaitMs", "acquired", "released", "timeouts", "rejections", "aborts", "doubleReleases", "leaseExpiries", "waitMs", "holdMs", "longestHoldMs"] },
);

describe("LatestSample", () => {
  it("gives back exactly the last sample set, in schema order, after any sequence of samples", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.array(sample, { minLength: 1, maxLength: 6 }), (id, generated) => {
        // One semaphore's samples: each carries its id (the property replaces it in place, so the
        // schema order of the keys is kept).
        const samples = generated.map((s) => ({ ...s, id }));
        const latest = new LatestSample(id);
        for (const s of samples) {
          latest.set(s);
          const got = latest.get();
          expect(got).toEqual(s);
          // Schema order: what JSON readers (the HTTP API, recordings) see.
          expect(JSON.stringify(got)).toBe(JSON.stringify(s));
          expect([latest.cap, latest.inUse, latest.waiters]).toEqual([s.cap, s.inUse, s.waiters]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("holds nothing before the first sample and after clear()", () => {
    const latest = new LatestSample(makeSample({}).id);
    expect(latest.present).toBe(false);
    expect(latest.get()).toBeNull();
    const s = makeSample({
      inUse: 4,
      cap: 4,
      waiters: 2,
      oldestWaitMs: 30,
      acquired: 10,
      released: 9,
      waitMs: { count: 3, p50: 1, p90: 2, p99: 2, max: 2.5, hist: [[10, 2], [12, 1]] },
      holdMs: { count: 9, p50: 5, p90: 8, p99: 9, max: 9.5, hist: [[20, 9]] },
      longestHoldMs: 40,
    });
    latest.set(s);
    expect(latest.present).toBe(true);
    expect(latest.get()).toStrictEqual(s);
    latest.clear();
    expect(latest.present).toBe(false);
    expect(latest.get()).toBeNull();
  });
});
