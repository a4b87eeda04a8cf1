// LatestSample (shared/protocol/latest-sample.ts) holds each semaphore's latest sample as numbers
// in one array, and what it gives back is what /api/state, /ui, /metrics and the fleet views show:
// the sample written, exactly, whatever the sizes of the histograms written before it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LatestSample } from "../../shared/protocol/latest-sample.js";
import { makeSample } from "../fixtures/protocol.js";
import { sampleArb } from "../fixtures/protocol-arbitraries.js";

const sample = sampleArb(true);

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
          // Without histograms (what dashboards are sent): the same sample, the same order, no pairs.
          const { hist: _w, ...waitMs } = s.waitMs;
          const { hist: _h, ...holdMs } = s.holdMs;
          expect(JSON.stringify(latest.figures())).toBe(JSON.stringify({ ...s, waitMs, holdMs }));
          // Built fresh for every reader: nothing built is kept (or shared with the next reader).
          expect(latest.get()).not.toBe(got);
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
    expect(latest.figures()).toBeNull();
  });

  it("keeps an adaptive limit's changes, one per change however many samples repeat it, the latest 64, across clear()", () => {
    const base = makeSample({});
    const latest = new LatestSample(base.id);
    const limit = (t: number, from?: number) => ({ min: 1, max: 100, limit: (from ?? 9) + 1, t, reason: `change at ${t}`, ...(from !== undefined ? { from } : {}) });
    // The first block ("initial limit", no `from`) is not a change; each later one comes in every sample until the next.
    latest.set({ ...base, limit: limit(1) });
    expect(latest.limitChanges).toEqual([]);
    for (let t = 2; t <= 80; t++) {
      latest.set({ ...base, limit: limit(t, t) });
      latest.set({ ...base, limit: limit(t, t) });
    }
    // A late or replayed sample with an older change adds nothing.
    latest.set({ ...base, limit: limit(40, 40) });
    latest.clear();
    const kept = latest.limitChanges;
    expect(kept.length).toBe(64);
    expect(kept.map((c) => c.t)).toEqual(Array.from({ length: 64 }, (_, i) => 17 + i));
    expect(kept[63].reason).toBe("change at 80");
    // A fixed cap's samples have none.
    const fixed = new LatestSample(base.id);
    fixed.set(base);
    expect(fixed.limitChanges).toEqual([]);
  });
});
