// The /ui delta's fleet part follows what changed group by group instead of recomputing the whole
// fleet. Whatever happens between two deltas (samples, registers, agents going silent, leaving,
// coming back), what it keeps must be exactly what a full fleet() gives, and what dashboards hold
// after applying the deltas' entries and removals must be that too.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { FleetView } from "../../../../main/hub/dashboard/fleet-view.js";
import { uiFleet } from "../../../../main/hub/dashboard/views.js";
import { FleetChangeTracker, type UiFleetEntry } from "../../../../shared/ui-protocol/index.js";
import { hello, info, sample, summaryOf, T0 } from "../helpers.js";
import { AGENTS, agentStepArb, IDS } from "./fleet-steps.js";


function setUp() {
  let now = T0;
  const core = new HubCore({ now: () => now, version: "t", thresholds: {}, maxHistories: 100, forgetAfterMs: 0, recorder: undefined });
  let conn = 0;
  const recs = AGENTS.map((a) => {
    const rec = core.hello(++conn, hello(a.agentId, { service: a.service, instance: a.instance }));
    core.register(rec, { semaphores: IDS.map((id) => info(id, { budget: 25 })) });
    return rec;
  });
  const view = new FleetView(core);
  const tracker = new FleetChangeTracker();
  /** What dashboards hold: every delta's entries and removals applied in order. */
  const held = new Map<string, UiFleetEntry>();
  const delta = (): Map<string, UiFleetEntry | undefined> => {
    const moved = view.updateNow(core.changes.take());
    const d = tracker.takeSome(moved);
    for (const f of d.changed) held.set(f.key, f);
    for (const k of d.removed) held.delete(k);
    return moved;
  };
  return { core, recs, view, delta, held, advance: (ms: number) => (now += ms), reconnect: () => ++conn };
}

const stepArb = fc.oneof(
  { weight: 7, arbitrary: agentStepArb(IDS) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("disconnect" as const), agent: fc.nat(AGENTS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("hello" as const), agent: fc.nat(AGENTS.length - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 100, max: 10_000 }) }) },
  { weight: 3, arbitrary: fc.constant({ kind: "delta" as const }) },
);

describe("the /ui delta's fleet", () => {
  it("after one semaphore's sample, recomputes and carries only its group's entry", () => {
    const { core, recs, delta } = setUp();
    delta();
    core.samples(recs[2], { seq: 1, t: T0 + 1000, intervalMs: 1000, items: [sample("cache", { inUse: 3 })] });
    const moved = delta();
    expect([...moved.keys()]).toEqual(["search/cache"]);
    expect(moved.get("search/cache")).toEqual(uiFleet(core.engine.fleet()).find((f) => f.key === "search/cache"));
  });

  it("recomputing every group (an agent left) keeps the entry it holds for each group that did not change", () => {
    const { core, recs, view, delta } = setUp();
    core.samples(recs[2], { seq: 1, t: T0 + 1000, intervalMs: 1000, items: [sample("cache", { inUse: 3 })] });
    delta();
    const before = new Map(view.keys().map((k) => [k, view.entry(k)!]));
    core.disconnect(1, recs[0]);
    core.forget(recs[0], T0 + 2000);
    delta();
    const fresh = uiFleet(core.engine.fleet());
    expect(view.list()).toEqual(fresh);
    // Same values, same object: a rebuild makes no new entry to outlive young GCs.
    const unchanged = fresh.filter((f) => JSON.stringify(f) === JSON.stringify(before.get(f.key)));
    expect(unchanged.map((f) => f.key)).toEqual(["search/cache", "search/db", "search/http"]);
    for (const f of unchanged) expect(view.entry(f.key)).toBe(before.get(f.key));
  });

  it("keeps exactly what a full fleet() gives, and dashboards end up holding it, whatever changed", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), (steps) => {
        const { core, recs, view, delta, held, advance, reconnect } = setUp();
        const seqs = recs.map(() => 0);
        delta();
        for (const step of steps) {
          if (step.kind === "samples") {
            const rec = recs[step.agent];
            const items = step.ids.map((id) => sample(id, { inUse: step.inUse, waitMs: summaryOf(...step.waits) }));
            advance(200);
            core.samples(rec, { seq: ++seqs[step.agent], t: T0 + seqs[step.agent] * 1000, intervalMs: 1000, items });
          } else if (step.kind === "register") core.register(recs[step.agent], { semaphores: step.ids.map((id) => info(id, { budget: 25 })) });
          else if (step.kind === "disconnect") {
            const rec = recs[step.agent];
            if (rec.owner !== undefined) core.disconnect(rec.owner, rec);
          } else if (step.kind === "hello") {
            const a = AGENTS[step.agent];
            core.hello(reconnect(), hello(a.agentId, { service: a.service, instance: a.instance }));
          } else if (step.kind === "tick") {
            advance(step.ms);
            core.tick();
          } else {
            delta();
            const full = uiFleet(core.engine.fleet());
            expect(view.list()).toEqual(full);
            expect([...held.values()].sort((x, y) => (x.key < y.key ? -1 : 1))).toEqual(full);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});
