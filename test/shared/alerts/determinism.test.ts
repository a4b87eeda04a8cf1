// Replaying a recording must raise exactly the same alerts as the live run: same ids, times,
// severities, messages and evidence, however the hub happened to receive the batches.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AlertEngine, type AlertChange } from "../../../shared/alerts/index.js";
import { type AgentEvent, type AgentEventType, type Sample } from "../../../shared/protocol/types.js";
import { makeHello } from "../../fixtures/protocol.js";
import { alertSampleArb, info, T0 } from "./helpers.js";

const AGENTS = [
  { agentId: "a0", service: "checkout", instance: "web-1" },
  { agentId: "a1", service: "checkout", instance: "web-2" },
  { agentId: "a2", service: "billing", instance: "web-1" },
  // a0's name under another id (a restarted process): it takes a0's semaphores over as it reports.
  { agentId: "a3", service: "checkout", instance: "web-1" },
] as const;
const IDS = ["db", "cache"] as const;
const EVENT_TYPES: AgentEventType[] = ["leak_suspected", "leak_resolved", "double_release", "invariant_violation", "lease_expired", "order_inversion"];

const sampleArb = alertSampleArb(IDS);

const eventArb = fc.record({
  id: fc.constantFrom(...IDS),
  type: fc.constantFrom(...EVENT_TYPES),
  holderId: fc.constantFrom("h1", "h2", "h3"),
  heldMs: fc.constantFrom(10_000, 60_000),
  offset: fc.integer({ min: -900, max: 900 }),
});

/** Split points for a list: each chunk is one call. */
const splitArb = fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 });

const opArb = fc.oneof(
  { weight: 12, arbitrary: fc.record({ op: fc.constant("samples" as const), agent: fc.nat(3), advance: fc.constantFrom(1000, 1000, 1000, 700, 2000, 2500), repeat: fc.constantFrom(1, 1, 2, 5, 8), items: fc.uniqueArray(sampleArb, { selector: (s) => s.id, maxLength: 2 }), split: splitArb }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("events" as const), agent: fc.nat(3), items: fc.array(eventArb, { maxLength: 4 }), split: splitArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("tick" as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("disconnect" as const), agent: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("hello" as const), agent: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("register" as const), agent: fc.nat(3), cap: fc.constantFrom(5, 10, 20), budget: fc.constantFrom(undefined, 15, 25), global: fc.boolean(), both: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("ack" as const), pick: fc.nat(50) }) },
);

const scriptArb = fc.record({ hubSteps: fc.array(fc.integer({ min: 0, max: 2500 }), { minLength: 120, maxLength: 120 }), ops: fc.array(opArb, { minLength: 20, maxLength: 120, size: "max" }) });
type Script = typeof scriptArb extends fc.Arbitrary<infer S> ? S : never;

function chunks<T>(items: readonly T[], sizes: readonly number[]): T[][] {
  const out: T[][] = [];
  let i = 0;
  let k = 0;
  while (i < items.length) {
    const n = sizes[k++ % sizes.length];
    out.push(items.slice(i, i + n));
    i += n;
  }
  return out.length > 0 ? out : [[]];
}

interface Outcome {
  changes: AlertChange[];
  all: unknown;
  active: unknown;
  semaphores: unknown;
  fleet: unknown;
}

/**
 * Play a script into a fresh engine; with `split`, every batch arrives cut into several calls.
 * With `entries`, each samples call passes its items' registry entries, found before the call as
 * the hub's store pipeline finds them: each holds the tracker last found for it, which may be
 * retired or another agent's by then.
 */
function play(script: Script, split: boolean, entries = false): Outcome {
  const engine = new AlertEngine();
  const entriesOf = (agentId: string, items: readonly Sample[]) => {
    const a = engine.registry.get(agentId);
    return a === undefined ? [] : items.map((item) => engine.registry.entry(a, item.id));
  };
  const changes: AlertChange[] = [];
  const t = AGENTS.map(() => T0);
  const seq = AGENTS.map(() => 0);
  let now = T0;
  for (const a of AGENTS) {
    changes.push(...engine.hello(a.agentId, makeHello(a.agentId, a), now));
    changes.push(...engine.register(a.agentId, IDS.map((id) => info(id)), now));
  }
  script.ops.forEach((o, i) => {
    now += script.hubSteps[i];
    switch (o.op) {
      case "samples": {
        // The same items for `repeat` intervals: long enough runs for the 5 s and 10 s windows.
        for (let r = 0; r < o.repeat; r++) {
          t[o.agent] += r === 0 ? o.advance : 1000;
          now = Math.max(now, t[o.agent]);
          const parts = split ? chunks(o.items, o.split) : [o.items];
          for (const items of parts) {
            const agent = AGENTS[o.agent];
            const batch = { seq: seq[o.agent]++, t: t[o.agent], intervalMs: 1000, items };
            changes.push(...(entries ? engine.feed(agent.agentId, batch, now, { entries: entriesOf(agent.agentId, items), activeRules: new Uint8Array(items.length) }) : engine.samples(agent.agentId, batch, now)));
          }
        }
        return;
      }
      case "events": {
        const evs: AgentEvent[] = o.items.map((e) => ({ t: t[o.agent] + e.offset, id: e.id, type: e.type, holderId: e.holderId, heldMs: e.heldMs, detail: { holding: "other" } }));
        const parts = split ? chunks(evs, o.split) : [evs];
        for (const items of parts) changes.push(...engine.events(AGENTS[o.agent].agentId, { items }, now));
        return;
      }
      case "tick":
        changes.push(...engine.tick(now));
        return;
      case "disconnect":
        changes.push(...engine.disconnect(AGENTS[o.agent].agentId, now));
        return;
      case "hello": {
        const a = AGENTS[o.agent];
        changes.push(...engine.hello(a.agentId, makeHello(a.agentId, a), now));
        return;
      }
      case "register": {
        const ids = o.both ? IDS : IDS.slice(0, 1);
        const infos = ids.map((id) => info(id, { cap: o.cap, scope: o.global ? "global" : "process", ...(o.budget !== undefined ? { budget: o.budget } : {}) }));
        changes.push(...engine.register(AGENTS[o.agent].agentId, infos, now));
        return;
      }
      case "ack": {
        const all = engine.allAlerts();
        if (all.length > 0) changes.push(...engine.acknowledge(all[o.pick % all.length].id, now));
        return;
      }
    }
  });
  return {
    changes,
    all: engine.allAlerts(),
    active: engine.activeAlerts(),
    semaphores: engine.registry.semaphores().map((s) => [s.key, s.status, s.agentId]),
    fleet: engine.fleet(),
  };
}

describe("determinism", () => {
  it("the same stream twice gives identical alerts, ids and changes", () => {
    fc.assert(
      fc.property(scriptArb, (script) => {
        expect(play(script, false)).toEqual(play(script, false));
      }),
      { numRuns: 100 },
    );
  });

  it("the same stream split differently across calls gives identical alerts and changes", () => {
    fc.assert(
      fc.property(scriptArb, (script) => {
        expect(play(script, true)).toEqual(play(script, false));
      }),
      { numRuns: 100 },
    );
  });

  it("the same stream with the items' registry entries passed in (as the hub's store pipeline does) gives identical alerts and changes", () => {
    fc.assert(
      fc.property(scriptArb, (script) => {
        expect(play(script, false, true)).toEqual(play(script, false));
      }),
      { numRuns: 100 },
    );
  });

  it("keeps its bookkeeping straight on any stream", () => {
    fc.assert(
      fc.property(scriptArb, (script) => {
        const { changes, all } = play(script, false);
        const alerts = all as ReturnType<AlertEngine["allAlerts"]>;
        expect(new Set(alerts.map((a) => a.id)).size).toBe(alerts.length);
        const activeSlots = alerts.filter((a) => a.resolvedAt === null).map((a) => `${a.rule} ${a.key}`);
        expect(new Set(activeSlots).size).toBe(activeSlots.length);
        for (const a of alerts) if (a.resolvedAt !== null) expect(a.resolvedAt).toBeGreaterThanOrEqual(a.raisedAt);
        for (let i = 1; i < alerts.length; i++) expect(alerts[i - 1].raisedAt).toBeGreaterThanOrEqual(alerts[i].raisedAt);
        // Every change is about an alert that was raised first, and nothing changes after it is resolved.
        const state = new Map<string, "active" | "resolved">();
        for (const c of changes) {
          const s = state.get(c.alert.id);
          if (c.kind === "raised") expect(s).toBeUndefined();
          else expect(s).toBe(c.kind === "resolved" ? "active" : s);
          if (c.kind === "updated") expect(s === "active" || c.alert.acknowledged).toBe(true);
          state.set(c.alert.id, c.kind === "resolved" ? "resolved" : (s ?? "active"));
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("the random streams above", () => {
  it("raise and resolve every rule, so the properties are not vacuous", () => {
    const seen = new Set<string>();
    for (const script of fc.sample(scriptArb, { numRuns: 150, seed: 42 })) {
      for (const c of play(script, false).changes) seen.add(`${c.kind}:${c.alert.rule}`);
    }
    const rules = ["leak", "convoy", "starvation", "timeouts", "double_release", "agent_down", "over_budget", "order_inversion"];
    expect([...seen].filter((k) => !k.startsWith("updated:")).sort()).toEqual(rules.flatMap((r) => [`raised:${r}`, `resolved:${r}`]).sort());
  });
});
