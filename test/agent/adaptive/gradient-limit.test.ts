// The adaptive limit's algorithm on its own: properties over random bounds and latency series.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GradientLimit } from "../../../agent/src/adaptive/gradient-limit.js";

const bounds = fc
  .tuple(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 0, max: 300 }), fc.double({ min: 0, max: 1, noNaN: true }))
  .map(([min, extra, at]) => ({ min, max: min + extra, initial: Math.round(min + extra * at) }));

describe("GradientLimit", () => {
  it("stays an integer within [min, max] whatever latency and in-flight it is fed", () => {
    fc.assert(
      fc.property(
        bounds,
        fc.array(fc.tuple(fc.oneof(fc.double({ min: 0, max: 1e5 }), fc.constantFrom(0, -1, Infinity)), fc.integer({ min: 0, max: 1000 })), { maxLength: 200 }),
        (b, series) => {
          const g = new GradientLimit(b);
          for (const [rtt, inFlight] of series) {
            const u = g.update(rtt, inFlight);
            expect(Number.isInteger(u.to)).toBe(true);
            expect(u.to).toBeGreaterThanOrEqual(b.min);
            expect(u.to).toBeLessThanOrEqual(b.max);
            expect(g.limit).toBe(u.to);
          }
        },
      ),
    );
  });

  it("rises when latency stays flat and in-flight is at the limit, until max", () => {
    fc.assert(
      fc.property(bounds, fc.double({ min: 0.1, max: 5000, noNaN: true }), (b, rtt) => {
        const g = new GradientLimit(b);
        const start = g.limit;
        for (let i = 0; i < 400; i++) g.update(rtt, g.limit);
        if (start < b.max) expect(g.limit).toBeGreaterThan(start);
        expect(g.limit).toBe(b.max);
      }),
    );
  });

  it("keeps the limit while the caller uses under half of it (app-limited)", () => {
    fc.assert(
      fc.property(bounds, fc.double({ min: 0.1, max: 5000, noNaN: true }), fc.double({ min: 1, max: 50, noNaN: true }), (b, rtt, k) => {
        const g = new GradientLimit(b);
        const start = g.limit;
        for (let i = 0; i < 20; i++) g.update(rtt * (i % 2 === 0 ? 1 : k), Math.floor((g.limit - 1) / 2));
        expect(g.limit).toBe(start);
      }),
    );
  });

  it("falls when latency rises at the limit, and says so with the figures", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 30, max: 300 }),
        fc.double({ min: 0.5, max: 2000, noNaN: true }),
        fc.double({ min: 3, max: 100, noNaN: true }),
        (min, max, rtt, k) => {
          const g = new GradientLimit({ min, max, initial: max });
          for (let i = 0; i < 30; i++) g.update(rtt, g.limit);
          const before = g.limit;
          const u = g.update(rtt * k, before);
          expect(u.to).toBeLessThan(before);
          expect(u.reason).toMatch(/^latency rose from .+ ms to .+ ms at in-flight \d+$/);
          // Kept high for the next windows, it goes on falling (or rests at min) and never grows back.
          let last = u.to;
          for (let i = 0; i < 10; i++) {
            const next = g.update(rtt * k, g.limit).to;
            expect(next).toBeLessThanOrEqual(last);
            last = next;
          }
          expect(last).toBeLessThan(before - 1);
        },
      ),
    );
  });

  it("names the latency it measured in the reason", () => {
    const g = new GradientLimit({ min: 1, max: 100, initial: 40 });
    for (let i = 0; i < 10; i++) g.update(12, 40);
    const u = g.update(30, 40);
    expect(u.reason).toBe("latency rose from 12 ms to 30 ms at in-flight 40");
  });

  // The first window sets the baseline, so it starts at most at W here; a start above it is
  // re-measured at low concurrency by the cap (adaptive-cap.test.ts).
  it("against a downstream of W workers (latency = service × max(1, in-flight / W)) settles between W and W + 2√W + 2 (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 150 }), fc.double({ min: 1, max: 2000, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (workers, serviceMs, at) => {
        const g = new GradientLimit({ min: 1, max: 400, initial: Math.max(1, Math.round(workers * at)) });
        const window = () => g.update(serviceMs * Math.max(1, g.limit / workers), g.limit);
        for (let i = 0; i < 200; i++) window();
        for (let i = 0; i < 20; i++) {
          window();
          expect(g.limit).toBeGreaterThanOrEqual(workers);
          expect(g.limit).toBeLessThanOrEqual(workers + 2 * Math.sqrt(workers) + 2);
        }
      }),
    );
  });

  it("follows a downstream that loses workers down within 10 windows, and never below what it still serves", () => {
    const g = new GradientLimit({ min: 1, max: 200, initial: 4 });
    let workers = 32;
    const window = () => g.update(80 * Math.max(1, g.limit / workers), g.limit);
    for (let i = 0; i < 100; i++) window();
    expect(g.limit).toBeGreaterThanOrEqual(32);
    workers = 4;
    for (let i = 0; i < 10; i++) window();
    expect(g.limit).toBeLessThanOrEqual(4 + 2 * 2 + 2);
    for (let i = 0; i < 50; i++) {
      window();
      expect(g.limit).toBeGreaterThanOrEqual(4);
    }
  });

  it("a latency held high is not taken as the new normal: the baseline stays the lowest seen until re-measured", () => {
    const g = new GradientLimit({ min: 1, max: 200, initial: 20 });
    for (let i = 0; i < 20; i++) g.update(10, g.limit);
    for (let i = 0; i < 5000; i++) g.update(40, g.limit);
    expect(g.baselineMs).toBe(10);
    // Only a re-measurement at low concurrency moves it up (a downstream that slowed for good).
    g.rebase(40);
    expect(g.baselineMs).toBe(40);
    const before = g.limit;
    for (let i = 0; i < 50; i++) g.update(40, g.limit);
    expect(g.limit).toBeGreaterThan(before);
    g.rebase(NaN);
    g.rebase(0);
    expect(g.baselineMs).toBe(40);
  });
});
