// Status as the dashboard shows it: the hub's four statuses (leak > convoy > saturated > ok, as
// /api/state ranks them) plus "stale" for a semaphore whose agent is gone, so a frozen number is
// never mistaken for a healthy one. Groups (instances, services, fleets) show their worst member.
import type { SemaphoreStatus } from "../../../shared/protocol/types.js";

export type DisplayStatus = SemaphoreStatus | "stale";

export const STATUS_ORDER: readonly DisplayStatus[] = ["leak", "convoy", "saturated", "stale", "ok"];

const RANK: Record<DisplayStatus, number> = { leak: 4, convoy: 3, saturated: 2, stale: 1, ok: 0 };

export const STATUS_LABEL: Record<DisplayStatus, string> = {
  leak: "Leak",
  convoy: "Convoy",
  saturated: "Saturated",
  stale: "Stale",
  ok: "OK",
};

/** Higher is worse. */
export function statusRank(s: DisplayStatus): number {
  return RANK[s];
}

export function worstStatus(a: DisplayStatus, b: DisplayStatus): DisplayStatus {
  return RANK[a] >= RANK[b] ? a : b;
}

/**
 * What a row shows. A leak or convoy stays visible even from a disconnected agent (those alerts
 * are still open); otherwise a missing agent wins over the last numbers it sent.
 */
export function displayStatus(status: SemaphoreStatus, agentConnected: boolean): DisplayStatus {
  if (status === "leak" || status === "convoy") return status;
  return agentConnected ? status : "stale";
}

/** inUse / cap, 0 for a zero cap (nothing to use), may exceed 1 while a lowered cap drains. */
export function utilization(inUse: number, cap: number): number {
  return cap > 0 ? inUse / cap : inUse > 0 ? Infinity : 0;
}

/** Bar level for a utilization: colour thresholds the eye can read at a glance. */
export function utilizationLevel(u: number): "low" | "mid" | "high" | "full" {
  if (u >= 1) return "full";
  if (u >= 0.85) return "high";
  if (u >= 0.6) return "mid";
  return "low";
}

export interface StatusCounts {
  total: number;
  leak: number;
  convoy: number;
  saturated: number;
  stale: number;
  ok: number;
  /** Rows not ok, or ok but badged by a rule firing on them (a double release, an order inversion). */
  problems: number;
}

/** `alerting(i)`: whether a rule fires on the i-th row, whatever its status. */
export function countStatuses(statuses: Iterable<DisplayStatus>, alerting: (i: number) => boolean = () => false): StatusCounts {
  const c: StatusCounts = { total: 0, leak: 0, convoy: 0, saturated: 0, stale: 0, ok: 0, problems: 0 };
  let i = 0;
  for (const s of statuses) {
    c.total++;
    c[s]++;
    if (s !== "ok" || alerting(i)) c.problems++;
    i++;
  }
  return c;
}
