// What the overview remembers while the user looks at a detail view and comes back: filter,
// sort, grouping, collapsed groups, selection, scroll. Module state, not React state: it
// outlives the component. Sort and grouping also survive a reload (localStorage).
import { DEFAULT_DIR, type SortKey, type SortSpec } from "../logic/sorting.js";
import type { StatusChip } from "../logic/filter.js";

export interface ListMemory {
  query: string;
  chip: StatusChip;
  sort: SortSpec;
  grouped: boolean;
  collapsed: Set<string>;
  selectedId: string | null;
  scrollTop: number;
}

const PREFS_KEY = "semscope.overview";

function loadPrefs(): { sort: SortSpec; grouped: boolean } {
  const fallback = { sort: { key: "status" as SortKey, dir: DEFAULT_DIR.status }, grouped: true };
  try {
    const v = JSON.parse(window.localStorage.getItem(PREFS_KEY) ?? "null") as { sort?: SortSpec; grouped?: boolean } | null;
    if (v === null || typeof v !== "object") return fallback;
    const key = v.sort?.key;
    const sort = key !== undefined && key in DEFAULT_DIR && (v.sort?.dir === "asc" || v.sort?.dir === "desc") ? { key, dir: v.sort.dir } : fallback.sort;
    return { sort, grouped: typeof v.grouped === "boolean" ? v.grouped : true };
  } catch {
    return fallback;
  }
}

let savedPrefs: string | null = null;

export function savePrefs(sort: SortSpec, grouped: boolean): void {
  const value = JSON.stringify({ sort, grouped });
  // Each mount of the list saves: a synchronous storage write (~2 ms in profiles) on every return
  // from a detail view, for preferences that had not changed.
  if (value === savedPrefs) return;
  try {
    window.localStorage.setItem(PREFS_KEY, value);
    savedPrefs = value;
  } catch {
    // Preferences are a nicety.
  }
}

const prefs = loadPrefs();

export const semaphoreMemory: ListMemory = {
  query: "",
  chip: "all",
  sort: prefs.sort,
  grouped: prefs.grouped,
  collapsed: new Set(),
  selectedId: null,
  scrollTop: 0,
};

export const fleetMemory: ListMemory = {
  query: "",
  chip: "all",
  sort: { key: "status", dir: "desc" },
  grouped: false,
  collapsed: new Set(),
  selectedId: null,
  scrollTop: 0,
};
