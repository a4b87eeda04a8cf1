// The fleet view: one row per (service, semaphore name), the replicas merged. The hub already
// sums in-use and caps (against the budget) and merges the histograms for a real fleet p99
// (shared/alerts/fleet.ts); this adds what the rows need on top: the worst replica status, how
// many replicas are in trouble, and the sort and filter fields the instance list has.
import { fleetKey } from "../../../shared/protocol/types.js";
import type { UiFleetEntry } from "../../../shared/ui-protocol/types.js";
import type { SemaphoreItem } from "./overview-item.js";
import { compareItems, type SortSpec } from "./sorting.js";
import { utilization, worstStatus, type DisplayStatus } from "./status.js";

export interface FleetRow extends SemaphoreItem {
  entry: UiFleetEntry;
  replicas: number;
  /** Replicas not ok. */
  troubled: number;
  /** In use against the budget, when there is one (else against the cap). */
  budgetUtil: number;
}

export function fleetRows(fleet: readonly UiFleetEntry[], items: readonly SemaphoreItem[]): FleetRow[] {
  const members = new Map<string, SemaphoreItem[]>();
  for (const it of items) {
    const k = fleetKey(it.service, it.name);
    let list = members.get(k);
    if (list === undefined) members.set(k, (list = []));
    list.push(it);
  }
  return fleet.map((f) => {
    const list = members.get(f.key) ?? [];
    // Over budget is the over_budget alert's to show (logic/row-alerts.ts), not "saturated": a
    // fleet whose caps add up past its budget may have nothing in use.
    let status: DisplayStatus = "ok";
    let troubled = 0;
    let oldest = 0;
    let kind = "";
    let latest: number | null = null;
    for (const m of list) {
      status = worstStatus(status, m.status);
      if (m.status !== "ok") troubled++;
      if (m.oldestWaitMs > oldest) oldest = m.oldestWaitMs;
      kind ||= m.kind;
      if (m.t !== null && (latest === null || m.t > latest)) latest = m.t;
    }
    return {
      key: f.key,
      agentId: "",
      service: f.service,
      instance: `${f.instances} replicas`,
      name: f.name,
      id: f.name,
      kind,
      cap: f.cap,
      inUse: f.inUse,
      waiters: f.waiters,
      oldestWaitMs: oldest,
      util: utilization(f.inUse, f.cap),
      waitP99: summaryP99(f.waitMs),
      holdP99: summaryP99(f.holdMs),
      connected: true,
      t: latest,
      status,
      entry: f,
      replicas: f.instances,
      troubled,
      budgetUtil: utilization(f.inUse, f.budget ?? f.cap),
    };
  });
}

/**
 * A merged p99, never above the largest value seen: merged histograms place a quantile at its
 * bucket's middle, so an idle fleet (every wait 0) read "1 µs" where its instances read 0.
 */
export function summaryP99(s: { p99: number; max: number }): number {
  return Math.min(s.p99, s.max);
}

export function sortFleetRows(rows: FleetRow[], sort: SortSpec): FleetRow[] {
  return rows.sort((a, b) => compareItems(a, b, sort));
}
