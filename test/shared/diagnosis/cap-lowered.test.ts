// cap_lowered: a queue that N itself made, by falling (an adaptive limit cut on rising latency, a
// smaller share of a replica budget, a resize) while the demand stayed where it was. Rows built
// as the hub's 1 s history holds them; each case differs from a neighbour by the one thing the
// verdict turns on.
import { describe, expect, it } from "vitest";
import { diagnose, diagnoseAnchored, resumeDiagnosis, type DiagnosisSeries } from "../../../shared/diagnosis/index.js";
import type { SampleLimit } from "../../../shared/protocol/types.js";

interface Row {
  cap: number;
  inUse: number;
  waiters: number;
  /** Acquired (and released) per second. */
  rate: number;
  holdMs: number;
}

const T0 = 1_700_000_000_000;

function series(rows: Row[]): DiagnosisSeries {
  const col = (f: (r: Row) => number) => rows.map(f);
  return {
    length: rows.length,
    t: rows.map((_, i) => T0 + (i + 1) * 1000),
    intervalMs: col(() => 1000),
    cap: col((r) => r.cap),
    inUse: col((r) => r.inUse),
    waiters: col((r) => r.waiters),
    acquiredPerSec: col((r) => r.rate),
    releasedPerSec: col((r) => r.rate),
    timeoutsPerSec: col(() => 0),
    rejectionsPerSec: col(() => 0),
    abortsPerSec: col(() => 0),
    holdCount: col((r) => r.rate),
    holdP50: col((r) => r.holdMs),
    holdP90: col((r) => r.holdMs * 1.2),
    holdP99: col((r) => r.holdMs * 1.5),
    waitCount: col((r) => r.rate),
    waitP99: col((r) => (r.waiters > 0 ? 200 : 1)),
  };
}

/** 60 s at N = `before` keeping up with the demand, then 30 s at N = `after` with a queue. */
function cutRows(before: number, after: number, opts: { holdAfterMs?: number; rateAfter?: number } = {}): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < 60; i++) rows.push({ cap: before, inUse: before * 0.6, waiters: 0, rate: 200, holdMs: 50 });
  for (let i = 0; i < 30; i++) rows.push({ cap: after, inUse: after, waiters: 12, rate: opts.rateAfter ?? (after * 1000) / (opts.holdAfterMs ?? 50), holdMs: opts.holdAfterMs ?? 50 });
  return rows;
}

const change = (t: number, from: number, limit: number, reason: string): SampleLimit => ({ min: 2, max: 40, limit, t, reason, from, shortMs: 120, longMs: 50, inFlight: from });

describe("diagnosis: the limit, not the demand", () => {
  it("names an adaptive limit's cut on rising latency, with the limit's own reason", () => {
    const rows = cutRows(20, 8, { holdAfterMs: 120 });
    const cutAt = T0 + 61_000;
    const limitChanges = [
      change(cutAt - 30_000, 19, 20, "latency flat at 50 ms (baseline 50 ms) at in-flight 12: probing up"),
      change(cutAt - 500, 20, 12, "latency rose from 50 ms to 118 ms at in-flight 20"),
      change(cutAt + 400, 12, 8, "latency rose from 52 ms to 121 ms at in-flight 12"),
      // Made after the moment diagnosed: not its reason.
      change(T0 + 200_000, 8, 5, "latency rose from 60 ms to 300 ms at in-flight 8"),
    ];
    const d = diagnose(series(rows), { limitChanges });
    expect(d?.cause).toBe("cap_lowered");
    expect(d?.headline).toBe("The limit, not the demand: the adaptive limit cut N from 20 to 8");
    expect(d?.detail).toContain("12 → 8: latency rose from 52 ms to 121 ms at in-flight 12");
    expect(d?.detail).toMatch(/while N was 20: the demand did not grow/);
    expect(d?.fix).toContain("adaptive min (2)");
    expect(d?.numbers).toMatchObject({ cap: 8, capBefore: 20, capLoweredBy: "adaptive", capReason: "latency rose from 52 ms to 121 ms at in-flight 12" });
    // The same rows without the cap's fall: holds rose, the downstream slowed, as before.
    const flat = rows.map((r, i) => (i < 60 ? r : { ...r, cap: 20, inUse: 20 }));
    expect(diagnose(series(flat), { limitChanges: [] })?.cause).toBe("slow_downstream");
  });

  it("names a replica budget's smaller share, and a resize when nothing else explains the fall", () => {
    const rows = cutRows(7, 4);
    const share = diagnose(series(rows), { share: { budget: 20, replicas: 5, target: 4, reachable: true } });
    expect(share?.cause).toBe("cap_lowered");
    expect(share?.headline).toBe("The limit, not the demand: this replica's share of the budget fell from 7 to 4");
    expect(share?.detail).toContain("5 replicas now divide a budget of 20");
    expect(share?.numbers.capLoweredBy).toBe("share");
    const resized = diagnose(series(rows));
    expect(resized?.cause).toBe("cap_lowered");
    expect(resized?.headline).toBe("The limit, not the demand: N was lowered from 7 to 4");
    expect(resized?.numbers.capLoweredBy).toBe("resize");
  });

  it("does not blame the limit when the demand rose with it, when N barely moved, or when nothing queues", () => {
    // Arrivals doubled as N fell: the demand is a cause; the other verdicts judge it.
    const busier = cutRows(20, 8).map((r, i) => (i >= 60 ? { ...r, rate: 400, waiters: 12 + (i - 60) * 5 } : r));
    expect(diagnose(series(busier))?.cause).not.toBe("cap_lowered");
    // An adaptive limit a permit under its peak (probing) did not make the queue.
    const wobble = cutRows(20, 19);
    expect(diagnose(series(wobble))?.cause).not.toBe("cap_lowered");
  });

  it("a resumed diagnosis reads afresh once the cap moved, and then names the cut", () => {
    // Busy throughout at N = 20, then N falls to 8 in the rows after the first diagnosis.
    const first = cutRows(20, 20).map((r) => ({ ...r, inUse: 20, waiters: 3 }));
    const a = diagnoseAnchored(series(first));
    expect(a?.anchor).not.toBeNull();
    expect(a?.diagnosis.cause).not.toBe("cap_lowered");
    const later = [...first, ...cutRows(20, 8).slice(60)];
    expect(resumeDiagnosis(series(later), a?.anchor as NonNullable<typeof a>["anchor"] & object)).toBeUndefined();
    expect(diagnose(series(later))?.cause).toBe("cap_lowered");
  });
});
