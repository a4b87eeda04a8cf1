// The diagnosis on recorded scenarios whose cause is known (simulate.ts): for several seeds each,
// the stream goes through the alert engine and the hub's evidence (as a recording replayed), and
// the convoy alert's diagnosis must name the cause the simulation built in.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { replayLines } from "../../../main/hub/recording/replay.js";
import { DIAGNOSIS_READ_MS, diagnose, diagnoseAnchored, resumeDiagnosis, type AnchoredDiagnosis, type Diagnosis, type DiagnosisSeries } from "../../../shared/diagnosis/index.js";
import type { Alert } from "../../../shared/protocol/types.js";
import { drawParams, recordingOf, simulate, type Scenario, type SimOutput } from "./simulate.js";

const SEEDS = [1, 2, 3, 4, 5, 6];

/** The simulated samples as the 1 s history holds them. */
function seriesOf(sim: SimOutput): DiagnosisSeries {
  const col = (f: (x: SimOutput["samples"][number]["sample"]) => number) => sim.samples.map((x) => f(x.sample));
  return {
    length: sim.samples.length,
    t: sim.samples.map((x) => x.t),
    intervalMs: sim.samples.map(() => 1000),
    cap: col((x) => x.cap),
    inUse: col((x) => x.inUse),
    waiters: col((x) => x.waiters),
    acquiredPerSec: col((x) => x.acquired),
    releasedPerSec: col((x) => x.released),
    timeoutsPerSec: col((x) => x.timeouts),
    rejectionsPerSec: col((x) => x.rejections),
    abortsPerSec: col((x) => x.aborts),
    holdCount: col((x) => x.holdMs.count),
    holdP50: col((x) => x.holdMs.p50),
    holdP90: col((x) => x.holdMs.p90),
    holdP99: col((x) => x.holdMs.p99),
    waitCount: col((x) => x.waitMs.count),
    waitP99: col((x) => x.waitMs.p99),
  };
}

function convoyDiagnosis(sim: SimOutput): { alert: Alert; diagnosis: Diagnosis } {
  const replay = replayLines(recordingOf(sim));
  expect(replay.stoppedAt).toBeUndefined();
  const convoy = replay.alerts.find((a) => a.rule === "convoy");
  expect(convoy, "a convoy alert").toBeDefined();
  // Raised after the change the scenario made, not before.
  expect((convoy as Alert).raisedAt).toBeGreaterThan(sim.t0 + sim.params.changeAt);
  const diagnosis = (convoy as Alert).evidence?.diagnosis as Diagnosis | undefined;
  expect(diagnosis, "a diagnosis on the convoy alert").toBeDefined();
  return { alert: convoy as Alert, diagnosis: diagnosis as Diagnosis };
}

describe.each<Scenario>(["slow", "tight", "rate"])("scenario %s", (scenario) => {
  it.each(SEEDS)("seed %i: the convoy's diagnosis names the cause", (seed) => {
    const params = drawParams(scenario, seed);
    const sim = simulate(params, seed);
    const { diagnosis } = convoyDiagnosis(sim);
    const n = diagnosis.numbers;
    switch (scenario) {
      case "slow":
        expect(diagnosis.cause).toBe("slow_downstream");
        expect(n.holdRatio).toBeGreaterThanOrEqual(1.5);
        expect(diagnosis.fix).toMatch(/dependency/);
        break;
      case "tight": {
        expect(diagnosis.cause).toBe("cap_too_tight");
        // Little's law on the true numbers: N ≥ λ × W, and the headroom stays modest.
        const least = (params.rateAfter * sim.trueHoldBefore) / 1000;
        expect(n.neededN).toBeGreaterThanOrEqual(Math.ceil(least * 0.9));
        expect(n.neededN).toBeLessThanOrEqual(Math.ceil(least * 1.6));
        expect(n.neededN).toBeGreaterThan(params.permits);
        expect(diagnosis.headline).toContain(String(n.neededN));
        break;
      }
      case "rate":
        expect(diagnosis.cause).toBe("rate_limit_needed");
        expect(diagnosis.fix).toMatch(/rate limiter/);
        // What the downstream serves, as measured, is its real ceiling.
        expect(n.maxThroughputPerSec).toBeGreaterThan(params.serverRate * 0.8);
        expect(n.maxThroughputPerSec).toBeLessThan(params.serverRate * 1.2);
        break;
    }
  });
});

describe("diagnose()", () => {
  it("has nothing to say without rows, and says so without numbers to go on", () => {
    const empty = { length: 0, t: [], cap: [], inUse: [], waiters: [], acquiredPerSec: [], releasedPerSec: [], timeoutsPerSec: [], rejectionsPerSec: [], abortsPerSec: [], intervalMs: [], holdCount: [], holdP50: [], holdP90: [], holdP99: [], waitCount: [], waitP99: [] };
    expect(diagnose(empty)).toBeNull();
    const stuck = { ...empty, length: 1, t: [1000], cap: [2], inUse: [2], waiters: [3], acquiredPerSec: [0], releasedPerSec: [0], timeoutsPerSec: [0], rejectionsPerSec: [0], abortsPerSec: [0], intervalMs: [1000], holdCount: [0], holdP50: [0], holdP90: [0], holdP99: [0], waitCount: [0], waitP99: [0] };
    expect(diagnose(stuck)?.cause).toBe("inconclusive");
  });

  it("resumed from its anchor on the newest rows alone, gives the diagnosis of the whole history: the hub reads only those", () => {
    // Rows busy (a queue, or every permit in use) or not, in runs, so that incidents of every
    // length end anywhere, and the baseline before them varies too.
    const row = fc.record({
      busy: fc.boolean(),
      run: fc.integer({ min: 1, max: 80 }),
      cap: fc.integer({ min: 1, max: 20 }),
      acquired: fc.integer({ min: 0, max: 500 }),
      hold: fc.integer({ min: 0, max: 400 }),
      spread: fc.double({ min: 1, max: 4, noNaN: true }),
      waitP99: fc.integer({ min: 0, max: 5000 }),
    });
    // Where diagnoses are made (rows so far), and how far before the row a resumed read must
    // start at each the read starts (0: there; more: earlier rows too; negative: too late).
    const refresh = fc.record({ gap: fc.integer({ min: 1, max: 40 }), slack: fc.integer({ min: -2, max: 20 }) });
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 12 }), fc.array(refresh, { minLength: 1, maxLength: 30 }), (runs, refreshes) => {
        const cols: Record<keyof Omit<DiagnosisSeries, "length">, number[]> = {
          t: [], cap: [], inUse: [], waiters: [], acquiredPerSec: [], releasedPerSec: [], timeoutsPerSec: [], rejectionsPerSec: [], abortsPerSec: [],
          intervalMs: [], holdCount: [], holdP50: [], holdP90: [], holdP99: [], waitCount: [], waitP99: [],
        };
        const busyRow: boolean[] = [];
        let t = 0;
        for (const r of runs) {
          for (let i = 0; i < r.run; i++) {
            t += 1000;
            const push = (k: keyof typeof cols, v: number) => cols[k].push(v);
            busyRow.push(r.busy);
            push("t", t);
            push("intervalMs", 1000);
            push("cap", r.cap);
            push("inUse", r.busy ? r.cap : Math.floor(r.cap / 2));
            push("waiters", r.busy ? 1 + (i % 7) : 0);
            push("acquiredPerSec", r.acquired + i);
            push("releasedPerSec", r.acquired);
            push("timeoutsPerSec", i % 3);
            push("rejectionsPerSec", 0);
            push("abortsPerSec", i % 2);
            push("holdCount", r.hold > 0 ? r.acquired : 0);
            push("holdP50", r.hold);
            push("holdP90", r.hold * r.spread);
            push("holdP99", r.hold * r.spread * 2);
            push("waitCount", r.acquired);
            push("waitP99", r.busy ? r.waitP99 + i : 0);
          }
        }
        const rows = (from: number, to: number): DiagnosisSeries => {
          const cut = Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, v.slice(from, to)])) as unknown as Omit<DiagnosisSeries, "length">;
          return { ...cut, length: to - from };
        };
        let last: AnchoredDiagnosis | null = null;
        let end = 0;
        for (const { gap, slack } of refreshes) {
          end = Math.min(cols.t.length, end + gap);
          const whole = diagnoseAnchored(rows(0, end));
          const anchor = last?.anchor;
          if (anchor != null) {
            const at = cols.t.indexOf(anchor.incidentFromT);
            const from = Math.max(0, Math.min(end - 1, at - slack));
            const resumed = resumeDiagnosis(rows(from, end), anchor);
            // It resumes whenever it can: the read reaches the incident's first row, and every row
            // since the last one checked is busy, at the cap it had then (a cap that moved may have fallen).
            const since = busyRow.slice(cols.t.indexOf(anchor.checkedT) + 1, end);
            const capsSince = cols.cap.slice(cols.t.indexOf(anchor.checkedT) + 1, end);
            expect(resumed !== undefined).toBe(from <= at && since.every(Boolean) && capsSince.every((c) => c === anchor.cap));
            if (resumed !== undefined) expect(resumed).toEqual(whole);
            last = resumed ?? whole;
          } else {
            last = whole;
          }
          expect(last?.diagnosis ?? null).toEqual(diagnose(rows(0, end)));
        }
      }),
      { numRuns: 400 },
    );
  });

  it("judges a lasting incident against the rows before it began, not against its own older rows", () => {
    // Long after the change: the busy run's older rows are the incident too. Judged against them,
    // a slow downstream looked healthy after two minutes and was called a too-tight N, and a rate
    // ceiling after one.
    for (const scenario of ["slow", "rate", "tight"] as const) {
      for (const seed of [1, 2, 3]) {
        const params = { ...drawParams(scenario, seed), durationMs: 60_000 + 320_000 };
        const sim = simulate(params, seed);
        const replay = replayLines(recordingOf(sim));
        const convoy = replay.alerts.find((a) => a.rule === "convoy") as Alert;
        expect(convoy.resolvedAt, `${scenario} ${seed}: the convoy lasts`).toBeNull();
        const d = convoy.evidence?.diagnosis as Diagnosis;
        // The latest diagnosis, made when the run began longer ago than the three minutes a first one reads.
        expect(d.incident.to).toBeGreaterThan(sim.t0 + params.changeAt + DIAGNOSIS_READ_MS + 30_000);
        expect(d.cause, `${scenario} ${seed}`).toBe({ slow: "slow_downstream", rate: "rate_limit_needed", tight: "cap_too_tight" }[scenario]);
        // The baseline ends where the run began: before the change.
        expect(d.baseline?.to).toBeLessThanOrEqual(sim.t0 + params.changeAt + 5000);
        // And diagnose() of the whole history says the same: it is what the hub's refreshes resume.
        expect(diagnose(seriesOf(sim))?.cause, `${scenario} ${seed}, the whole history`).toBe(d.cause);
      }
    }
  });

  it("follows the alert while it is active: a later update still carries a diagnosis of the same cause", () => {
    // Long enough after the raise for a re-sent diagnosis (DIAGNOSIS_RESEND_MS).
    const params = { ...drawParams("tight", 11), durationMs: 110_000 };
    const sim = simulate(params, 11);
    const replay = replayLines(recordingOf(sim));
    const convoy = replay.alerts.find((a) => a.rule === "convoy") as Alert;
    const d = convoy.evidence?.diagnosis as Diagnosis;
    // The alert as it ended up: diagnosed again after it was raised (every 5 s of samples, sent
    // when the verdict changes or 30 s after the last one).
    expect(d.incident.to).toBeGreaterThanOrEqual(convoy.raisedAt + 5000);
    expect(d.cause).toBe("cap_too_tight");
  });
});
