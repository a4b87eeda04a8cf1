// How often the hub re-diagnoses an active convoy (alert-evidence.ts): every 5 s of sample time in
// the alert's first minute, less often as it lasts (30 s from 3 minutes on), and a verdict that
// turns still reaches the alert within that.
import { describe, expect, it, vi } from "vitest";
import { AgentSession } from "../../../../main/hub/ingest/agent-session.js";
import { DIAGNOSIS_REFRESH_MAX_MS, DIAGNOSIS_REFRESH_MS, diagnosisRefreshMs } from "../../../../main/hub/core/alert-evidence.js";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import type { Diagnosis } from "../../../../shared/diagnosis/index.js";
import type { Alert, Sample } from "../../../../shared/protocol/index.js";
import { many } from "../../../fixtures/protocol.js";
import { hello, info, sample, summaryOf, T0 } from "../helpers.js";

const CAP = 4;

/** A semaphore whose every permit is busy with a queue behind it, `acquired` grants a second. */
const convoy = (acquired: number) =>
  sample("db", {
    cap: CAP,
    inUse: CAP,
    available: 0,
    waiters: 3,
    acquired,
    released: acquired,
    waitMs: summaryOf(...many(acquired, 300)),
    holdMs: summaryOf(...many(acquired, 100)),
  });

/**
 * A hub core with one agent (shop/web-1) whose semaphores `ids` have cap CAP. `send(s, items)`:
 * the samples of second `s` (sample time and hub clock T0 + s seconds), which must be accepted.
 */
function shopHub(...ids: string[]) {
  let clock = T0;
  const core = new HubCore({ now: () => clock, version: "t", thresholds: {}, maxHistories: 10, forgetAfterMs: 0, recorder: undefined });
  const session = new AgentSession(core, 1, { perSecond: 1e9, burst: 1e9 });
  expect(session.handle("hello", hello("a1", { service: "shop", instance: "web-1" })).ok).toBe(true);
  expect(session.handle("register", { semaphores: ids.map((id) => info(id, { cap: CAP })) }).ok).toBe(true);
  const send = (s: number, items: Sample[]): number => {
    clock = T0 + s * 1000;
    expect(session.handle("samples", { seq: s, t: clock, intervalMs: 1000, items }).ok).toBe(true);
    return clock;
  };
  return { core, send };
}

describe("diagnosis refresh", () => {
  it("backs off from every 5 s to every 30 s as the alert lasts", () => {
    expect(diagnosisRefreshMs(0)).toBe(DIAGNOSIS_REFRESH_MS);
    expect(diagnosisRefreshMs(59_000)).toBe(DIAGNOSIS_REFRESH_MS);
    expect(diagnosisRefreshMs(60_000)).toBe(10_000);
    expect(diagnosisRefreshMs(180_000)).toBe(DIAGNOSIS_REFRESH_MAX_MS);
    expect(diagnosisRefreshMs(24 * 3_600_000)).toBe(DIAGNOSIS_REFRESH_MAX_MS);
    for (let age = 0; age < 400_000; age += 1000) expect(diagnosisRefreshMs(age + 1000)).toBeGreaterThanOrEqual(diagnosisRefreshMs(age));
  });

  it("re-diagnoses a lasting convoy on that schedule, and a changed verdict reaches the alert within it", () => {
    const { core, send } = shopHub("db");
    const diagnosedAt: number[] = [];
    const diagnosis = core.evidence.diagnosis.bind(core.evidence);
    vi.spyOn(core.evidence, "diagnosis").mockImplementation((key, t, watched) => {
      diagnosedAt.push(t);
      return diagnosis(key, t, watched);
    });
    const headlineAt = new Map<number, string>();
    let convoyAlert: Alert | undefined;
    for (let s = 1; s <= 600; s++) {
      // Arrivals quadruple 400 s in: N must be raised further, a new headline.
      const clock = send(s, [convoy(s <= 400 ? 50 : 200)]);
      convoyAlert ??= core.engine.activeAlerts().find((a) => a.rule === "convoy");
      if (convoyAlert !== undefined) {
        const d = core.engine.alert(convoyAlert.id)?.evidence?.diagnosis as Diagnosis | undefined;
        if (d !== undefined) headlineAt.set(clock, d.headline);
      }
    }
    expect(convoyAlert).toBeDefined();
    const raisedAt = convoyAlert!.raisedAt;
    // Each refresh comes when the schedule says, on the first sample due (1 s samples).
    for (let i = 1; i < diagnosedAt.length; i++) {
      const gap = diagnosedAt[i] - diagnosedAt[i - 1];
      const due = diagnosisRefreshMs(diagnosedAt[i] - raisedAt);
      expect(gap).toBeGreaterThanOrEqual(Math.min(due, diagnosisRefreshMs(diagnosedAt[i - 1] - raisedAt)));
      expect(gap).toBeLessThan(due + 1000);
    }
    // ~600 s of convoy: 120 diagnoses at a flat 5 s, about 30 on the schedule.
    expect(diagnosedAt.length).toBeGreaterThan(20);
    expect(diagnosedAt.length).toBeLessThan(40);
    const before = headlineAt.get(T0 + 400_000);
    const changedAt = [...headlineAt].find(([t, h]) => t > T0 + 400_000 && h !== before)?.[0];
    expect(before).toMatch(/raise it to about/);
    expect(changedAt).toBeDefined();
    expect(changedAt! - (T0 + 400_000)).toBeLessThanOrEqual(DIAGNOSIS_REFRESH_MAX_MS + 1000);
  });

  it("re-diagnoses a lasting starvation alert on the same schedule, and nothing without a diagnosed alert", () => {
    const { core, send } = shopHub("db", "cache");
    const diagnosed: string[] = [];
    const diagnosis = core.evidence.diagnosis.bind(core.evidence);
    vi.spyOn(core.evidence, "diagnosis").mockImplementation((key, t, watched) => {
      diagnosed.push(key);
      return diagnosis(key, t, watched);
    });
    // "db": a waiter passed over for 20 s while permits come and go (not full: no convoy);
    // "cache": busy and quiet, no alert.
    const starved = sample("db", { cap: CAP, inUse: CAP - 1, available: 1, waiters: 1, oldestWaitMs: 20_000, acquired: 40, released: 40, holdMs: summaryOf(...many(40, 50)) });
    const quiet = sample("cache", { cap: CAP, inUse: 2, available: 2, acquired: 40, released: 40, holdMs: summaryOf(...many(40, 50)) });
    for (let s = 1; s <= 120; s++) {
      send(s, [quiet, starved]);
    }
    expect(core.engine.activeAlerts().map((a) => [a.rule, a.semaphore])).toEqual([["starvation", "db"]]);
    expect(new Set(diagnosed)).toEqual(new Set(["shop/web-1/db"]));
    // Raised ~5 s in: diagnosed then, every 5 s to a minute of age, then every 10-ish s.
    expect(diagnosed.length).toBeGreaterThanOrEqual(14);
    expect(diagnosed.length).toBeLessThanOrEqual(20);
  });

  it("follows each diagnosed alert of a semaphore from its raise to its resolution: never one resolved, every one raised again", () => {
    const { core, send } = shopHub("db");
    const diagnosedAt = new Map<string, number[]>();
    const diagnosis = core.evidence.diagnosis.bind(core.evidence);
    vi.spyOn(core.evidence, "diagnosis").mockImplementation((key, t, watched) => {
      if (watched !== undefined) diagnosedAt.set(watched.alertId, [...(diagnosedAt.get(watched.alertId) ?? []), t]);
      return diagnosis(key, t, watched);
    });
    const quiet = sample("db", { cap: CAP, inUse: 1, available: CAP - 1, acquired: 50, released: 50, holdMs: summaryOf(...many(50, 100)) });
    // A convoy with a waiter passed over for 20 s: convoy and starvation on one semaphore.
    const starvedConvoy = { ...convoy(50), oldestWaitMs: 20_000 };
    // Phases of 60 s: both alerts; the convoy alone (starvation resolves); quiet (the convoy
    // resolves); the convoy again, a new alert on the same semaphore.
    const phases = [starvedConvoy, convoy(50), quiet, convoy(50)];
    let clock = T0;
    for (let s = 1; s <= 240; s++) clock = send(s, [phases[Math.floor((s - 1) / 60)]]);
    const alerts = core.engine.allAlerts().filter((a) => a.semaphore === "db");
    const byRule = (rule: string) => alerts.filter((a) => a.rule === rule).sort((a, b) => a.raisedAt - b.raisedAt);
    const [starvation] = byRule("starvation");
    const [first, second] = byRule("convoy");
    expect(byRule("starvation")).toHaveLength(1);
    expect(byRule("convoy")).toHaveLength(2);
    expect(starvation.resolvedAt).toBeGreaterThan(T0 + 60_000);
    expect(first.resolvedAt).toBeGreaterThan(T0 + 120_000);
    expect(second.resolvedAt).toBeNull();
    for (const a of [starvation, first, second]) {
      const at = diagnosedAt.get(a.id) ?? [];
      // Diagnosed as it is raised, then on the schedule for as long as it is active, never after.
      expect(at[0]).toBe(a.raisedAt);
      const end = a.resolvedAt ?? clock;
      expect(at.every((t) => t <= end)).toBe(true);
      expect(at.length).toBeGreaterThanOrEqual(Math.floor((end - a.raisedAt - 1000) / 10_000));
      expect(end - (at.at(-1) ?? 0)).toBeLessThan(diagnosisRefreshMs(end - a.raisedAt) + 1000);
    }
  });
});
