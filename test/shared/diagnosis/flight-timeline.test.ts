// Reading a ring for the app: the permits that never came back, and the burst that formed the queue.
import { describe, expect, it } from "vitest";
import { flightTimeline } from "../../../shared/diagnosis/index.js";
import type { FlightOp, FlightRecord } from "../../../shared/protocol/types.js";

const T = 1_700_000_000_000;

function ring(ops: FlightOp[], over: Partial<FlightRecord> = {}): FlightRecord {
  return { id: "db", alertId: "a", t: T + 10_000, capacity: 1024, total: ops.length, ops, holders: [], stacks: [], ...over };
}

describe("flightTimeline", () => {
  it("finds the burst where arrivals outran grants, and the holders that never released, with their stacks", () => {
    const ops: FlightOp[] = [];
    let h = 0;
    // 8 s of steady traffic: one arrival granted at once and released, every 100 ms.
    for (let t = 0; t < 8000; t += 100) {
      ops.push({ t: T + t, op: "grant", holder: ++h, weight: 1, waitMs: 0, stack: 0 });
      ops.push({ t: T + t + 20, op: "release", holder: h, weight: 1, holdMs: 20 });
    }
    // Two permits taken and never returned; then a burst of 60 callers in 500 ms that queue.
    ops.push({ t: T + 8100, op: "grant", holder: ++h, weight: 1, waitMs: 0, stack: 1 });
    ops.push({ t: T + 8150, op: "grant", holder: ++h, weight: 1, waitMs: 0, stack: 1 });
    for (let i = 0; i < 60; i++) ops.push({ t: T + 9000 + i * 8, op: "request", weight: 1 });
    const rec = ring(ops, {
      total: ops.length + 500,
      holders: [
        { holder: h - 1, weight: 1, heldMs: 1900, stack: 1 },
        { holder: h, weight: 1, heldMs: 1850, stack: 1 },
      ],
      stacks: ["at steady (s.js:1:1)", "at takeAndKeep (leak.js:9:3)"],
    });
    const tl = flightTimeline(rec, 20);
    expect(tl).not.toBeNull();
    if (tl === null) return;
    expect(tl.overwritten).toBe(500);
    expect(tl.stuck.map((s) => s.holder)).toEqual([h - 1, h]);
    expect(tl.stuck[0].stack).toBe("at takeAndKeep (leak.js:9:3)");
    expect(tl.stuck[0].grantedAt).toBe(T + 8100);
    expect(tl.burst).not.toBeNull();
    expect(tl.burst?.from).toBeLessThanOrEqual(T + 9000);
    expect(tl.burst?.to).toBeGreaterThanOrEqual(T + 9000 + 59 * 8);
    expect(tl.burst?.arrivals).toBeGreaterThanOrEqual(60);
    expect(tl.burst?.grants).toBe(0);
    expect(tl.burst?.ratePerSec).toBeGreaterThan(10 * (tl.burst?.baselinePerSec ?? 0));
    expect(tl.bins.reduce((n, b) => n + b.releases, 0)).toBe(80);
  });

  it("has no burst when every arrival was granted, and nothing to show for an unavailable ring", () => {
    const ops: FlightOp[] = [];
    for (let i = 0; i < 50; i++) ops.push({ t: T + i * 100, op: "grant", holder: i + 1, weight: 1, waitMs: 0 }, { t: T + i * 100 + 5, op: "release", holder: i + 1, weight: 1, holdMs: 5 });
    expect(flightTimeline(ring(ops))?.burst).toBeNull();
    expect(flightTimeline(ring([], { status: "unavailable" }))).toBeNull();
  });
});
