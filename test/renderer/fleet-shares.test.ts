// The fleet row of a budget split across replicas: each live replica's share, in instance order,
// with a title that says which replica waits to grow and which cannot reach the coordinator.
import { describe, expect, it } from "vitest";
import type { UiFleetEntry } from "../../shared/ui-protocol/types.js";
import { fleetRows, sharesTitle } from "../../renderer/src/logic/fleet-rows.js";
import type { SemaphoreItem } from "../../renderer/src/logic/overview-item.js";

const summary = { count: 0, p50: 0, p90: 0, p99: 0, max: 0 };
const entry: UiFleetEntry = { key: "api/db", service: "api", name: "db", scope: "process", instances: 3, cap: 20, budget: 20, overBudget: false, inUse: 0, waiters: 0, waitMs: summary, holdMs: summary };

function item(instance: string, cap: number, share: SemaphoreItem["share"], connected = true, opening = 0): SemaphoreItem {
  return {
    key: `api/${instance}/db`, agentId: instance, service: "api", instance, name: "db", id: "db", kind: "semaphore", cap, inUse: 0, waiters: 0,
    oldestWaitMs: 0, opening, util: 0, waitP99: 0, holdP99: 0, connected, t: 1, status: connected ? "ok" : "stale", ...(share !== undefined ? { share } : {}),
  };
}

describe("fleet rows of a shared budget", () => {
  it("lists each live replica's share by instance, leaving out a gone one", () => {
    const [row] = fleetRows([entry], [
      item("c", 6, { budget: 20, replicas: 3, target: 6, reachable: true }),
      item("a", 7, { budget: 20, replicas: 3, target: 7, reachable: true }),
      item("b", 5, { budget: 20, replicas: 3, target: 7, reachable: false }),
      item("d", 5, { budget: 20, replicas: 4, target: 5, reachable: true }, false),
    ]);
    expect(row.shares?.map((s) => [s.instance, s.cap])).toEqual([["a", 7], ["b", 5], ["c", 6]]);
    const title = sharesTitle(20, row.shares!);
    expect(title).toContain("split across 3 live replicas");
    expect(title).toContain("b: 5 (growing to 7 after a lease period) — coordinator unreachable");
  });

  it("counts the replicas on a rotation's off turn and names them in the title; a budget of 0 is no rotation", () => {
    const rotating = { budget: 2, replicas: 3, reachable: true };
    const [row] = fleetRows([entry], [
      item("a", 1, { ...rotating, target: 1 }),
      { ...item("b", 0, { ...rotating, target: 0 }), status: "saturated" },
      item("c", 1, { ...rotating, target: 1 }),
    ]);
    expect(row.waitingTurn).toBe(1);
    // Its cap of 0 saturates it by design: the fleet is not in trouble for it.
    expect(row.status).toBe("ok");
    expect(row.troubled).toBe(0);
    expect(row.shares?.map((s) => s.waiting)).toEqual([false, true, false]);
    expect(sharesTitle(2, row.shares!)).toContain("b: 0 — waiting for its turn (the permits rotate)");
    const [none] = fleetRows([entry], [item("a", 0, { budget: 0, replicas: 2, target: 0, reachable: true }), item("b", 0, { budget: 0, replicas: 2, target: 0, reachable: true })]);
    expect(none.waitingTurn).toBe(0);
  });

  it("sums the connections the live replicas' pools are opening, leaving out a gone one", () => {
    const [row] = fleetRows([entry], [item("a", 10, undefined, true, 2), item("b", 10, undefined, true, 1), item("c", 10, undefined, false, 5)]);
    expect(row.opening).toBe(3);
  });

  it("has no shares for a fleet whose replicas do not split a budget", () => {
    const [row] = fleetRows([entry], [item("a", 10, undefined), item("b", 10, undefined)]);
    expect(row.shares).toBeNull();
  });
});
