// An agent evicted to make room (ingest/admission.ts) is forgotten in slices over event-loop turns
// (core/forget-slices.ts). What a user relies on: it is gone from every count at once; once the
// slices ran, none of its semaphores, alerts, totals or histories is left; nothing reads it half
// forgotten; and an agent that takes its name starts afresh, never with its old state.
import { describe, expect, it } from "vitest";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { TurnBudget } from "../../../../main/hub/core/turn-budget.js";
import { semaphoreKey } from "../../../../shared/protocol/types.js";
import { hello, info, sample, T0 } from "../helpers.js";

/** Several slices' worth (FORGET_SLICE each for its semaphores, then for its histories). */
const N = 600;
const IDS = Array.from({ length: N }, (_, i) => `s${i}`);
const KEYS = IDS.map((id) => semaphoreKey("svc", "gone", id));

/** A core holding agent "gone" (N semaphores, each with a double_release alert, disconnected) and a live "other". */
function withGoneAgent(): HubCore {
  // A turn budget of nothing: each turn runs one slice (its least), so reads land between slices.
  const core = new HubCore({ now: () => T0 + 5000, version: "t", thresholds: {}, maxHistories: 10_000, forgetAfterMs: 0, recorder: undefined, turns: new TurnBudget({ turnMs: 0 }) });
  const gone = core.hello(1, hello("gone", { service: "svc", instance: "gone" }));
  expect(core.register(gone, { semaphores: IDS.map((id) => info(id)) })).toEqual({ ok: true });
  expect(core.samples(gone, { seq: 1, t: T0, intervalMs: 1000, items: IDS.map((id) => sample(id, { doubleReleases: 1 })) }).ok).toBe(true);
  core.disconnect(1, gone);
  const other = core.hello(2, hello("other", { service: "svc", instance: "other" }));
  expect(core.samples(other, { seq: 1, t: T0, intervalMs: 1000, items: [sample("db")] }).ok).toBe(true);
  expect(core.engine.activeAlerts().filter((a) => a.rule === "double_release" && a.instance === "gone")).toHaveLength(N);
  expect(core.history.size).toBe(N + 1);
  return core;
}

const turn = () => new Promise<void>((r) => setImmediate(r));

function leftOf(core: HubCore): { semaphores: number; alerts: number; histories: number; totals: number } {
  return {
    semaphores: core.registry.semaphores().filter((s) => s.instance === "gone").length,
    alerts: core.engine.activeAlerts().filter((a) => a.instance === "gone").length,
    histories: KEYS.filter((k) => core.history.get(k) !== undefined).length,
    totals: KEYS.filter((k) => core.totals.has(k)).length,
  };
}

describe("forgetting an evicted agent in slices", () => {
  it("takes it out of every count at once and leaves nothing of it once the slices ran", async () => {
    const core = withGoneAgent();
    const rec = core.agent("gone")!;
    core.forgetSoon(rec, T0 + 5000);
    expect(core.agent("gone")).toBeUndefined();
    expect(core.agentCount).toBe(1);
    expect(core.forgetting).toBe(1);
    let turns = 0;
    while (core.forgetting > 0 && turns < 100) {
      await turn();
      turns++;
    }
    // Done by its own slices, over several turns, not by a read finishing it.
    expect(core.forgetting).toBe(0);
    expect(turns).toBeGreaterThan(2);
    expect(leftOf(core)).toEqual({ semaphores: 0, alerts: 0, histories: 0, totals: 0 });
    expect(core.history.size).toBe(1);
    // Resolved as forget() resolves them, and kept among the resolved ones.
    const resolved = core.engine.allAlerts().filter((a) => a.instance === "gone" && a.rule === "double_release");
    expect(resolved.length).toBeGreaterThan(0);
    expect(resolved.every((a) => a.resolvedAt !== null && a.evidence?.["resolution"] === "agent forgotten")).toBe(true);
  });

  it("is never read half forgotten: while its slices run, no read finds its semaphores, alerts, histories or fleet groups", async () => {
    const core = withGoneAgent();
    const alertIds = core.engine.activeAlerts().filter((a) => a.rule === "double_release" && a.instance === "gone").map((a) => a.id);
    core.forgetSoon(core.agent("gone")!, T0 + 5000);
    await turn();
    // Reads neither finish it nor see any of it.
    const s = core.state();
    expect(core.forgetting).toBe(1);
    expect(s.agents.map((a) => a.agentId)).toEqual(["other"]);
    expect(s.semaphores.filter((x) => x.instance === "gone")).toEqual([]);
    expect(s.alerts.filter((a) => a.instance === "gone")).toEqual([]);
    expect(core.engine.allAlerts().filter((a) => a.instance === "gone" && a.resolvedAt === null)).toEqual([]);
    expect(core.engine.alert(alertIds[0]!)).toBeUndefined();
    expect(core.acknowledge(alertIds[0]!)).toBeUndefined();
    expect(leftOf(core)).toEqual({ semaphores: 0, alerts: 0, histories: 0, totals: 0 });
    expect(core.history.size).toBe(1);
    expect(core.registry.status(KEYS[N - 1]!)).toBeUndefined();
    expect([...core.registry.trackers()].map((t) => t.key)).toEqual([semaphoreKey("svc", "other", "db")]);
    expect(core.engine.fleet().map((f) => f.name)).toEqual(["db"]);
    expect(core.engine.fleetCountsOf(core.engine.groupKeys()).map((f) => f.name)).toEqual(["db"]);
    expect(core.forgetting).toBe(1);
  });

  it("gives an agent that takes its name while it is being forgotten a fresh start, which later slices leave alone", async () => {
    const core = withGoneAgent();
    core.forgetSoon(core.agent("gone")!, T0 + 5000);
    core.forgetSoon(core.agent("other")!, T0 + 5000);
    await turn();
    expect(core.forgetting).toBe(2);
    const back = core.hello(3, hello("back", { service: "svc", instance: "gone" }));
    // Only the forget under its name is finished first; the other goes on a slice per turn.
    expect(core.forgetting).toBe(1);
    expect(core.register(back, { semaphores: IDS.map((id) => info(id)) })).toEqual({ ok: true });
    expect(core.samples(back, { seq: 1, t: T0 + 6000, intervalMs: 1000, items: IDS.map((id) => sample(id)) }).ok).toBe(true);
    for (let i = 0; i < 20; i++) await turn();
    expect(leftOf(core)).toEqual({ semaphores: N, alerts: 0, histories: N, totals: N });
    // Its histories hold its own sample only, none of the forgotten agent's.
    expect(core.history.get(KEYS[0]!)?.latestT()).toBe(T0 + 6000);
    expect(core.history.get(KEYS[0]!)?.window("1s", -Infinity, Infinity).acquiredPerSec).toHaveLength(1);
    expect(core.registry.semaphores().filter((s) => s.instance === "gone").every((s) => s.agentId === "back")).toBe(true);
  });
});
