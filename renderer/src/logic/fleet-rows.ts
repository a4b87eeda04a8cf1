// The fleet view: one row per (service, semaphore name), the replicas merged. The hub already
// sums in-use and caps (against the budget) and merges the histograms for a real fleet p99
// (shared/alerts/fleet.ts); this adds what the rows need on top: the worst replica status, how
// many replicas are in trouble, and the sort and filter fields the instance list has.
import { fleetKey } from "../../../shared/protocol/types.js";
import type { UiFleetEntry } from "../../../shared/ui-protocol/types.js";
import type { SemaphoreItem } from "./overview-item.js";
import { waitingForTurn } from "./share-turn.js";
import { compareItems, type SortSpec } from "./sorting.js";
import { utilization, worstStatus, type DisplayStatus } from "./status.js";

export interface FleetRow extends SemaphoreItem {
  entry: UiFleetEntry;
  replicas: number;
  /** Replicas not ok. */
  troubled: number;
  /** In use against the budget, when there is one (else against the cap). */
  budgetUtil: number;
  /** When the replicas split the budget among themselves (share: "replicas"): each live one's share, by instance. */
  shares: ReplicaShare[] | null;
  /** Live replicas on their rotation's off turn (more replicas than the budget: logic/share-turn.ts). */
  waitingTurn: number;
}

export interface ReplicaShare {
  instance: string;
  /** The cap it runs with now. */
  cap: number;
  /** Its share at its last heartbeat (the cap waits below a larger one for a lease period). */
  target: number;
  replicas: number;
  /** False while it cannot reach the coordinator (it keeps its last share). */
  reachable: boolean;
  /** On its rotation's off turn: 0 until its turn comes. */
  waiting: boolean;
}

/** One line per replica, for the budget cell's title. */
export function sharesTitle(budget: number | null, shares: readonly ReplicaShare[]): string {
  const lines = shares.map((s) => {
    const wait = s.waiting ? " — waiting for its turn (the permits rotate)" : s.target > s.cap ? ` (growing to ${s.target} after a lease period)` : "";
    const down = s.reachable ? "" : " — coordinator unreachable, keeping its last share";
    return `${s.instance}: ${s.cap}${wait}${down}`;
  });
  return `The budget${budget === null ? "" : ` of ${budget}`} split across ${shares.length} live replicas:\n${lines.join("\n")}`;
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
    let opening = 0;
    let waitingTurn = 0;
    const shares: ReplicaShare[] = [];
    for (const m of list) {
      let mStatus = m.status;
      if (m.share !== undefined && m.connected) {
        const waiting = waitingForTurn(m.share);
        if (waiting) waitingTurn++;
        // Out of its turn its cap is 0 by design: that is not the fleet saturated.
        if (waiting && mStatus === "saturated") mStatus = "ok";
        shares.push({ instance: m.instance, cap: m.cap, target: m.share.target, replicas: m.share.replicas, reachable: m.share.reachable, waiting });
      }
      if (m.connected) opening += m.opening;
      status = worstStatus(status, mStatus);
      if (mStatus !== "ok") troubled++;
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
      opening,
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
      shares: shares.length === 0 ? null : shares.sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0)),
      waitingTurn,
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
