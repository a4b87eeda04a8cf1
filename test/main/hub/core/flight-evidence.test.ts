// The hub's side of the flight recorder without sockets (HubCore, as a replay drives it): what
// one agent's rings cost the hub stays bounded (only the newest alerts keep their operations),
// a ring can only land on an alert about that agent's own semaphore, and a rate-limited answer
// shares the ring of the alert it names.
import { describe, expect, it } from "vitest";
import { MAX_FULL_RINGS } from "../../../../main/hub/core/alert-evidence.js";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import type { FlightRecord } from "../../../../shared/protocol/index.js";
import { hello, info, T0 } from "../helpers.js";

function core(): HubCore {
  let now = T0;
  return new HubCore({ now: () => now++, version: "test", thresholds: {}, maxHistories: 1000, forgetAfterMs: 0, recorder: undefined });
}

const ring = (id: string, alertId: string, ops = 3): FlightRecord => ({
  id,
  alertId,
  t: T0,
  capacity: 1024,
  total: ops,
  ops: Array.from({ length: ops }, (_, i) => ({ t: T0 + i, op: "grant" as const, holder: i + 1, weight: 1, waitMs: 0, stack: 0 })),
  holders: [{ holder: 1, weight: 1, heldMs: 5000, stack: 0 }],
  stacks: ["at keep (k.js:1:1)"],
});

function leakAlert(c: HubCore, agentId: string, id: string): string {
  const rec = c.agent(agentId);
  if (rec === undefined) throw new Error("no agent");
  c.events(rec, { items: [{ t: T0, id, type: "leak_suspected", holderId: `${id}#1`, heldMs: 5000 }] });
  const a = c.engine.activeAlerts().find((x) => x.rule === "leak" && x.semaphore === id);
  if (a === undefined) throw new Error("no leak alert");
  return a.id;
}

describe("flight evidence on the hub", () => {
  it(`keeps full rings on the newest ${MAX_FULL_RINGS} alerts only; older ones keep their holders and stacks`, () => {
    const c = core();
    const rec = c.hello(1, hello("a1"));
    const n = MAX_FULL_RINGS + 5;
    c.register(rec, { semaphores: Array.from({ length: n }, (_, i) => info(`s${i}`)) });
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const alertId = leakAlert(c, "a1", `s${i}`);
      ids.push(alertId);
      expect(c.flight(rec, ring(`s${i}`, alertId, 50))).toEqual({ ok: true });
    }
    const flights = ids.map((id) => c.engine.alert(id)?.evidence?.flight as FlightRecord & { trimmedOps?: number });
    flights.slice(0, 5).forEach((f) => {
      expect(f.ops).toEqual([]);
      expect(f.trimmedOps).toBe(50);
      expect(f.holders).toHaveLength(1);
      expect(f.stacks).toEqual(["at keep (k.js:1:1)"]);
    });
    flights.slice(5).forEach((f) => expect(f.ops).toHaveLength(50));
    // Dashboards hear of each change.
    const changed = c.changes.take().alerts.filter((ch) => ch.kind === "updated").map((ch) => ch.alert.id);
    expect(new Set(changed)).toEqual(new Set(ids));
  });

  it("refuses a ring for an alert about another agent's semaphore, or no alert", () => {
    const c = core();
    const a = c.hello(1, hello("a1"));
    const b = c.hello(2, hello("b1", { instance: "web-2" }));
    c.register(a, { semaphores: [info("db")] });
    c.register(b, { semaphores: [info("db")] });
    const alertId = leakAlert(c, "a1", "db");
    expect(c.flight(b, ring("db", alertId))).toEqual({ ok: false, error: "no such alert for this semaphore" });
    expect(c.flight(a, ring("other", alertId))).toEqual({ ok: false, error: "no such alert for this semaphore" });
    expect(c.flight(a, ring("db", "leak:nope"))).toEqual({ ok: false, error: "no such alert for this semaphore" });
    expect(c.engine.alert(alertId)?.evidence?.flight).toBeUndefined();
  });

  it("a rate-limited answer shares the ring of the alert it names; an unavailable one says so", () => {
    const c = core();
    const rec = c.hello(1, hello("a1"));
    c.register(rec, { semaphores: [info("db"), info("off")] });
    const first = leakAlert(c, "a1", "db");
    c.flight(rec, ring("db", first));
    c.events(rec, { items: [{ t: T0 + 1, id: "db", type: "double_release", holderId: "db#2" }] });
    const second = c.engine.activeAlerts().find((x) => x.rule === "double_release")?.id as string;
    c.flight(rec, { ...ring("db", second, 0), holders: [], stacks: [], status: "rate_limited", sameAs: first });
    const shared = c.engine.alert(second)?.evidence?.flight as FlightRecord & { sharedFrom?: string };
    expect(shared.sharedFrom).toBe(first);
    expect(shared.alertId).toBe(second);
    expect(shared.ops).toHaveLength(3);
    const off = leakAlert(c, "a1", "off");
    c.flight(rec, { ...ring("off", off, 0), holders: [], stacks: [], capacity: 0, status: "unavailable" });
    expect((c.engine.alert(off)?.evidence?.flight as FlightRecord).status).toBe("unavailable");
  });
});
