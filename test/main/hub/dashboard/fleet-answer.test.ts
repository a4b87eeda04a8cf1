// fleet:get is answered from the fleet view a slice at a time (the hub cuts at every step here:
// ui.sliceMs 0), and still answers what fleet() gives: exactly, right after any change; and while
// samples keep arriving between its slices, each group as fleet() gave it at a moment meanwhile.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { uiFleet } from "../../../../main/hub/dashboard/views.js";
import type { Hub } from "../../../../main/hub/index.js";
import type { UiFleetEntry } from "../../../../shared/ui-protocol/index.js";
import { fleetAgents } from "./fleet-agents.js";
import { AGENTS, agentStepArb, IDS } from "./fleet-steps.js";
import { agent, cleanupAll, client, info, request, sample, sleep, startHub, T0 } from "../helpers.js";

afterEach(cleanupAll);

type FleetAnswer = { ok: boolean; error?: string; fleet: UiFleetEntry[] };

/** What fleet:get answered until now: fleet() as dashboards get it. */
const fleetNow = (hub: Hub): UiFleetEntry[] => uiFleet(hub.engine.fleet());

const stepArb = fc.oneof(
  { weight: 6, arbitrary: agentStepArb(IDS) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("leave" as const), agent: fc.nat(AGENTS.length - 1) }) },
  { weight: 3, arbitrary: fc.constant({ kind: "ask" as const }) },
);

describe("fleet:get answered a slice at a time", () => {
  it("equals fleet() computed in the hub when it answers, right after whatever changed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 3, maxLength: 20 }), async (steps) => {
        const hub = await startHub({ ui: { sliceMs: 0 } });
        try {
          const agents = await fleetAgents(hub, IDS);
          const ui = await client(hub.url, "/ui");
          const ask = async () => {
            const answer = await request<FleetAnswer>(ui, "fleet:get", {});
            expect(answer.ok).toBe(true);
            expect(answer.fleet).toEqual(fleetNow(hub));
          };
          for (const step of [...steps, { kind: "ask" as const }]) {
            if (step.kind === "samples") await agents.samples(step.agent, step.ids, step.inUse, step.waits);
            else if (step.kind === "register") await agents.register(step.agent, step.ids.map((id) => info(id, { budget: 25 })));
            else if (step.kind === "leave") agents.leave(step.agent);
            else await ask();
          }
        } finally {
          await hub.close();
        }
      }),
      { numRuns: 15 },
    );
  }, 240_000);

  it("answers each group as fleet() gave it at a moment while answering, while samples are stored between its slices", async () => {
    const hub = await startHub({ ui: { sliceMs: 0 } });
    const ids = Array.from({ length: 40 }, (_, i) => `pool-${i}`);
    const sockets = await Promise.all(AGENTS.map((a) => agent(hub, a.agentId, ids.map((id) => info(id)), { service: a.service, instance: a.instance })));
    const ui = await client(hub.url, "/ui");
    // fleet() at every turn of the event loop while the requests are out: each answer's entries must be among its entries.
    const fleets = new Set<string>();
    const seen = new Map<string, Set<string>>();
    let recording = true;
    const record = () => {
      const fleet = fleetNow(hub);
      fleets.add(JSON.stringify(fleet));
      for (const f of fleet) {
        let entries = seen.get(f.key);
        if (entries === undefined) seen.set(f.key, (entries = new Set()));
        entries.add(JSON.stringify(f));
      }
      if (recording) setImmediate(record);
    };
    record();
    // A batch from one agent or another at every turn, not awaited: read and stored between the slices.
    let seq = 0;
    let pumping = true;
    const pump = () => {
      seq++;
      const i = seq % sockets.length;
      sockets[i].emit("samples", { seq, t: T0 + seq * 1000, intervalMs: 1000, items: ids.map((id, j) => sample(id, { inUse: (seq + i + j) % 10 })) });
      if (pumping) setTimeout(pump, 1);
    };
    pump();
    const answers: Promise<FleetAnswer>[] = [];
    for (let n = 0; n < 8; n++) {
      answers.push(request<FleetAnswer>(ui, "fleet:get", {}, 20_000));
      await sleep(30);
    }
    const got = await Promise.all(answers);
    pumping = false;
    recording = false;
    // The samples did change the fleet meanwhile, so an entry recomputed from a stale view would show.
    expect(fleets.size).toBeGreaterThan(answers.length);
    for (const a of got) {
      expect(a.ok).toBe(true);
      expect(a.fleet.map((f) => f.key)).toEqual([...seen.keys()].sort());
      for (const f of a.fleet) expect(seen.get(f.key)?.has(JSON.stringify(f)), f.key).toBe(true);
    }
    // Once the last batch is stored, the next answer is the fleet as it stands.
    seq++;
    await Promise.all(sockets.map((s) => request(s, "samples", { seq, t: T0 + seq * 1000, intervalMs: 1000, items: ids.map((id) => sample(id, { inUse: 3 })) })));
    expect((await request<FleetAnswer>(ui, "fleet:get", {})).fleet).toEqual(fleetNow(hub));
  }, 60_000);
});
