// A semaphore's tracker takes its rule state and its first timeouts window from storage its engine
// shares among trackers, given back when one retires: a tracker on storage another left must
// decide exactly as one on fresh storage.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AlertEngine, type AlertChange } from "../../../shared/alerts/index.js";
import type { AgentEvent } from "../../../shared/protocol/types.js";
import { makeHello } from "../../fixtures/protocol.js";
import { alertSampleArb, info, T0 } from "./helpers.js";

const IDS = ["db", "cache", "queue"] as const;
const sampleArb = alertSampleArb(IDS);
const stepArb = fc.record({ advance: fc.constantFrom(1000, 1000, 700, 2500, 9000), items: fc.uniqueArray(sampleArb, { selector: (s) => s.id, maxLength: 3 }), event: fc.option(fc.constantFrom("leak_suspected", "leak_resolved", "order_inversion", "double_release") as fc.Arbitrary<AgentEvent["type"]>, { freq: 6 }) });
type Step = typeof stepArb extends fc.Arbitrary<infer S> ? S : never;
/** Every semaphore sampled every second: windows that fill and grow past their first buffer. */
const steadyArb: fc.Arbitrary<Step> = fc.record({ advance: fc.constant(1000), items: fc.tuple(...IDS.map((id) => sampleArb.map((s) => ({ ...s, id })))), event: fc.constant(null) });

/** Feeds `agentId` (instance `instance`) its steps from T0; returns the changes it caused. */
function run(engine: AlertEngine, agentId: string, instance: string, steps: readonly Step[]): AlertChange[] {
  const out: AlertChange[] = [];
  let t = T0;
  out.push(...engine.hello(agentId, makeHello(agentId, { instance }), t));
  out.push(...engine.register(agentId, IDS.map((id) => info(id)), t));
  steps.forEach((st, seq) => {
    t += st.advance;
    out.push(...engine.samples(agentId, { seq, t, intervalMs: 1000, items: st.items }, t));
    if (st.event !== null) out.push(...engine.events(agentId, { items: [{ type: st.event, id: IDS[seq % IDS.length], t, holderId: "h1", heldMs: 60_000 }] }, t));
  });
  return out;
}

/** A change without the alert's id (ids count every alert an engine has raised). */
const withoutId = (c: AlertChange) => {
  const { id: _, ...alert } = c.alert;
  return { kind: c.kind, alert };
};

describe("trackers on shared storage", () => {
  it("raise and resolve exactly what they would on fresh storage, after others retired and gave theirs back", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(stepArb, steadyArb), { maxLength: 40 }), fc.array(stepArb, { minLength: 1, maxLength: 40 }), fc.boolean(), (before, steps, unregister) => {
        const shared = new AlertEngine();
        run(shared, "old", "web-1", before);
        // Its semaphores retire (their storage goes back): the agent forgotten, or its list emptied.
        if (unregister) shared.register("old", [], T0 + 100_000);
        else shared.forget("old", T0 + 100_000);
        const fresh = new AlertEngine();
        expect(run(shared, "new", "web-2", steps).map(withoutId)).toEqual(run(fresh, "new", "web-2", steps).map(withoutId));
        expect(shared.windowBytes()).toBe(fresh.windowBytes());
      }),
      { numRuns: 300 },
    );
  });
});
