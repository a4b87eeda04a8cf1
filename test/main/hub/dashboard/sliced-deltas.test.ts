// A dashboard that applies every delta (the renderer's DashboardStore) ends up holding what a fresh
// snapshot shows, whatever happened meanwhile: samples (of registered semaphores and of ones their
// agent left out of its last register), registers that drop semaphores or change their cap, name,
// kind and config, agents leaving and coming back, thresholds, and snapshots asked for while deltas are built. The hub
// cuts every delta and snapshot at every step (ui.sliceMs 0), so agents' messages and requests
// land between the slices of each one.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { DashboardStore } from "../../../../renderer/src/data/dashboard-store.js";
import type { SemaphoreInfo } from "../../../../shared/protocol/index.js";
import type { UiDelta, UiSnapshot } from "../../../../shared/ui-protocol/index.js";
import { fleetAgents } from "./fleet-agents.js";
import { AGENTS, agentStepArb } from "./fleet-steps.js";
import { cleanupAll, client, info, request, sleep, startHub, storeClient, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const IDS = ["db", "cache", "http", "queue", "pool", "redis"];

/** A semaphore's registration in one of a few shapes: a re-register may change its cap, name, kind and config. */
function registration(id: string, variant: number): SemaphoreInfo {
  if (variant === 1) return info(id, { budget: 25, cap: 20 });
  if (variant === 2) return info(id, { budget: 25, name: `${id}-renamed` });
  if (variant === 3) return info(id, { kind: "pool", queue: "lifo", maxWaiters: 5, acquireTimeoutMs: 100 });
  return info(id, { budget: 25 });
}

const stepArb = fc.oneof(
  { weight: 7, arbitrary: agentStepArb(IDS) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("reregister" as const),
      agent: fc.nat(AGENTS.length - 1),
      semaphores: fc.uniqueArray(fc.record({ id: fc.constantFrom(...IDS), variant: fc.nat(3) }), { selector: (x) => x.id, maxLength: IDS.length }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("leave" as const), agent: fc.nat(AGENTS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("thresholds" as const), windowMs: fc.integer({ min: 1000, max: 20_000 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "snapshot" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 300 }) }) },
);

/** What the store holds, in the shape a snapshot has it. */
function held(store: DashboardStore) {
  return {
    semaphores: store
      .itemList()
      .map((i) => store.semaphore(i.key))
      .sort((x, y) => (x!.key < y!.key ? -1 : 1)),
    agents: [...store.agents.values()].sort((x, y) => (x.agentId < y.agentId ? -1 : 1)),
    fleet: store.fleet,
    // By id: alerts raised in the same ms have no order of their own.
    active: store
      .alertList()
      .filter((a) => a.resolvedAt === null)
      .sort((x, y) => (x.id < y.id ? -1 : 1)),
    thresholds: store.thresholds,
  };
}

function shown(snap: UiSnapshot) {
  return {
    semaphores: [...snap.state.semaphores].sort((x, y) => (x.key < y.key ? -1 : 1)),
    agents: [...snap.state.agents].sort((x, y) => (x.agentId < y.agentId ? -1 : 1)),
    fleet: snap.fleet,
    active: [...snap.state.alerts].sort((x, y) => (x.id < y.id ? -1 : 1)),
    thresholds: snap.thresholds,
  };
}

describe("/ui deltas built in slices", () => {
  it("applied to a snapshot, give what a fresh snapshot shows", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 25 }), async (steps) => {
        const hub = await startHub({ ui: { sliceMs: 0 } });
        try {
          const agents = await fleetAgents(hub, IDS);

          const store = new DashboardStore();
          const problems: string[] = [];
          const ui = await storeClient(hub.url, store, (d: UiDelta) => {
            if (!store.hasSnapshot) return void problems.push(`delta ${d.seq} before a snapshot`);
            if (d.seq !== store.lastSeq + 1) problems.push(`delta ${d.seq} after ${store.lastSeq}`);
            if (!store.applyDelta(d)) problems.push(`delta ${d.seq} patched a semaphore the dashboard never had`);
          });
          const other = await client(hub.url, "/ui");
          const asked: Promise<unknown>[] = [];

          for (const step of steps) {
            // Samples registered or not: one its agent left out of its last register is sampled as unregistered.
            if (step.kind === "samples") await agents.samples(step.agent, step.ids, step.inUse, step.waits);
            else if (step.kind === "register") await agents.register(step.agent, step.ids.map((id) => info(id, { budget: 25 })));
            else if (step.kind === "reregister") await agents.register(step.agent, step.semaphores.map((x) => registration(x.id, x.variant)));
            else if (step.kind === "leave") agents.leave(step.agent);
            else if (step.kind === "thresholds") {
              expect((await request<AckAnswer>(other, "thresholds:set", { patch: { convoy: { windowMs: step.windowMs } } })).ok).toBe(true);
            } else if (step.kind === "snapshot") {
              // Not awaited: the answer comes while the next steps' deltas are built.
              asked.push(request(ui, "snapshot:get", {}).then((a) => store.applySnapshot((a as { snapshot: UiSnapshot }).snapshot)));
            } else await sleep(step.ms);
          }
          await Promise.all(asked);
          // Once nothing moves, the next deltas bring the dashboard level with a fresh snapshot.
          let last: unknown;
          await waitUntil(async () => {
            const fresh = (await request<{ snapshot: UiSnapshot }>(other, "snapshot:get", {})).snapshot;
            last = shown(fresh);
            try {
              expect(held(store)).toEqual(last);
              return true;
            } catch {
              return false;
            }
          }, "the dashboard to hold what a fresh snapshot shows", 8000).catch(() => expect(held(store)).toEqual(last));
          expect(problems).toEqual([]);
        } finally {
          await hub.close();
        }
      }),
      // Stops (shrinking included) before the test's own timeout, so a failure is reported by
      // fast-check with its seed, path and counterexample rather than cut off unreported.
      { numRuns: 12, interruptAfterTimeLimit: 200_000, markInterruptAsFailure: true },
    );
  }, 240_000);
});
