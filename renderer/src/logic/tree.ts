// The overview as one flat list of rows (services → instances → semaphores) for a windowed
// list: only the rows on screen are rendered, and keyboard navigation walks this same array.
import type { SemaphoreItem } from "./overview-item.js";
import { byName, compareItems, groupValue, type SortSpec } from "./sorting.js";
import { worstStatus, type DisplayStatus } from "./status.js";

export interface ServiceRow {
  kind: "service";
  id: string;
  service: string;
  status: DisplayStatus;
  instances: number;
  semaphores: number;
  problems: number;
  collapsed: boolean;
}

export interface InstanceRow {
  kind: "instance";
  id: string;
  service: string;
  instance: string;
  status: DisplayStatus;
  connected: boolean;
  semaphores: number;
  collapsed: boolean;
}

export interface SemaphoreRow {
  kind: "semaphore";
  id: string;
  item: SemaphoreItem;
}

export type OverviewRow = ServiceRow | InstanceRow | SemaphoreRow;

export const serviceRowId = (service: string): string => `svc:${service}`;
export const instanceRowId = (service: string, instance: string): string => `inst:${service}/${instance}`;

interface Group<T> {
  name: string;
  items: SemaphoreItem[];
  children: T;
}

function worst(items: readonly SemaphoreItem[]): DisplayStatus {
  let s: DisplayStatus = "ok";
  for (const it of items) s = worstStatus(s, it.status);
  return s;
}

function sortGroups<T>(groups: Group<T>[], sort: SortSpec): Group<T>[] {
  if (sort.key === "name") {
    return groups.sort((a, b) => (sort.dir === "asc" ? a.name.localeCompare(b.name) : b.name.localeCompare(a.name)));
  }
  const values = new Map(groups.map((g) => [g, groupValue(g.items, sort.key)]));
  return groups.sort((a, b) => {
    const d = (values.get(a) ?? 0) - (values.get(b) ?? 0);
    return (sort.dir === "asc" ? d : -d) || a.name.localeCompare(b.name);
  });
}

/**
 * Rows for `items` (already filtered), grouped and sorted. `collapsed` holds row ids
 * (serviceRowId / instanceRowId) whose children are hidden. A service counts as needing attention
 * every semaphore whose status is not ok or on which `alerting` says a rule fires (a double
 * release or an order inversion leaves the status ok but badges the row).
 */
export function buildRows(items: readonly SemaphoreItem[], sort: SortSpec, collapsed: ReadonlySet<string>, alerting: (key: string) => boolean = () => false): OverviewRow[] {
  const services = new Map<string, Map<string, SemaphoreItem[]>>();
  for (const it of items) {
    let insts = services.get(it.service);
    if (insts === undefined) services.set(it.service, (insts = new Map()));
    let list = insts.get(it.instance);
    if (list === undefined) insts.set(it.instance, (list = []));
    list.push(it);
  }
  const svcGroups: Group<Group<null>[]>[] = [];
  for (const [service, insts] of services) {
    const children: Group<null>[] = [];
    const all: SemaphoreItem[] = [];
    for (const [instance, list] of insts) {
      children.push({ name: instance, items: list, children: null });
      for (const it of list) all.push(it);
    }
    svcGroups.push({ name: service, items: all, children });
  }

  const rows: OverviewRow[] = [];
  for (const svc of sortGroups(svcGroups, sort)) {
    const sid = serviceRowId(svc.name);
    const sCollapsed = collapsed.has(sid);
    let problems = 0;
    for (const it of svc.items) if (it.status !== "ok" || alerting(it.key)) problems++;
    rows.push({
      kind: "service",
      id: sid,
      service: svc.name,
      status: worst(svc.items),
      instances: svc.children.length,
      semaphores: svc.items.length,
      problems,
      collapsed: sCollapsed,
    });
    if (sCollapsed) continue;
    for (const inst of sortGroups(svc.children, sort)) {
      const iid = instanceRowId(svc.name, inst.name);
      const iCollapsed = collapsed.has(iid);
      rows.push({
        kind: "instance",
        id: iid,
        service: svc.name,
        instance: inst.name,
        status: worst(inst.items),
        connected: inst.items.some((it) => it.connected),
        semaphores: inst.items.length,
        collapsed: iCollapsed,
      });
      if (iCollapsed) continue;
      const sorted = [...inst.items].sort((a, b) => compareItems(a, b, sort));
      for (const it of sorted) rows.push({ kind: "semaphore", id: it.key, item: it });
    }
  }
  return rows;
}

/** Flat, ungrouped rows: every semaphore sorted across the whole fleet. */
export function buildFlatRows(items: readonly SemaphoreItem[], sort: SortSpec): SemaphoreRow[] {
  return [...items].sort((a, b) => compareItems(a, b, sort) || byName(a, b)).map((it) => ({ kind: "semaphore", id: it.key, item: it }));
}

/** The first..last row indices to render for a scroll position, with `overscan` rows either side. */
export function visibleRange(scrollTop: number, viewport: number, rowHeight: number, count: number, overscan = 6): [number, number] {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  return [first, Math.max(first, last)];
}

/** The scrollTop that brings row `index` into view, or null when it already is. */
export function scrollToReveal(index: number, scrollTop: number, viewport: number, rowHeight: number): number | null {
  const top = index * rowHeight;
  if (top < scrollTop) return top;
  if (top + rowHeight > scrollTop + viewport) return top + rowHeight - viewport;
  return null;
}
