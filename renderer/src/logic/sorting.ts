// Sort orders for the overview. Each key has a natural direction (worst or biggest first, names
// A→Z); ties fall back to service/instance/name so rows never swap places between updates.
import { statusRank } from "./status.js";
import type { SemaphoreItem } from "./overview-item.js";

export type SortKey = "status" | "util" | "waiters" | "wait" | "name";
export type SortDir = "asc" | "desc";

export interface SortSpec {
  key: SortKey;
  dir: SortDir;
}

export const SORT_LABEL: Record<SortKey, string> = {
  status: "Status",
  util: "Utilization",
  waiters: "Waiters",
  wait: "Wait p99",
  name: "Name",
};

export const DEFAULT_DIR: Record<SortKey, SortDir> = { status: "desc", util: "desc", waiters: "desc", wait: "desc", name: "asc" };

/** Clicking a column: a new key starts in its natural direction, the same key flips. */
export function nextSort(current: SortSpec, key: SortKey): SortSpec {
  if (current.key !== key) return { key, dir: DEFAULT_DIR[key] };
  return { key, dir: current.dir === "asc" ? "desc" : "asc" };
}

/** A finite stand-in so Infinity (a zero cap in use) sorts as "most used", never as NaN. */
const fin = (v: number): number => (Number.isFinite(v) ? v : Number.MAX_VALUE);

function primary(a: SemaphoreItem, b: SemaphoreItem, key: SortKey): number {
  switch (key) {
    case "status":
      // Then by name (the tie-break), not by a live value: rows stay put between updates.
      return statusRank(a.status) - statusRank(b.status);
    case "util":
      return fin(a.util) - fin(b.util);
    case "waiters":
      return a.waiters - b.waiters || a.oldestWaitMs - b.oldestWaitMs;
    case "wait":
      return a.waitP99 - b.waitP99;
    case "name":
      return a.name.localeCompare(b.name);
  }
}

export function byName(a: SemaphoreItem, b: SemaphoreItem): number {
  return a.service.localeCompare(b.service) || a.instance.localeCompare(b.instance) || a.name.localeCompare(b.name) || a.key.localeCompare(b.key);
}

export function compareItems(a: SemaphoreItem, b: SemaphoreItem, spec: SortSpec): number {
  const p = primary(a, b, spec.key);
  if (p !== 0) return spec.dir === "asc" ? p : -p;
  return byName(a, b);
}

/** A group's value for a key: its worst or biggest member (sum of waiters), so groups sort like rows. */
export function groupValue(items: readonly SemaphoreItem[], key: SortKey): number {
  let v = key === "waiters" ? 0 : -Infinity;
  for (const it of items) {
    switch (key) {
      case "status":
        v = Math.max(v, statusRank(it.status));
        break;
      case "util":
        v = Math.max(v, fin(it.util));
        break;
      case "waiters":
        v += it.waiters;
        break;
      case "wait":
        v = Math.max(v, it.waitP99);
        break;
      case "name":
        return 0;
    }
  }
  return v;
}

/** Sorts by a live number: the rows' order can change with every delta. */
export function sortIsLive(key: SortKey): boolean {
  return key === "util" || key === "waiters" || key === "wait";
}
