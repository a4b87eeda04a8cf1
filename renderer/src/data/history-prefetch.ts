// Opening a detail view asks the hub for its history as soon as the address changes, before
// React renders the view, so the request and the render overlap instead of following each
// other. The feed takes the answer when it asks for the same window within a moment.
import type { UiWindow } from "../../../shared/ui-protocol/types.js";
import type { HistoryRange } from "../logic/time-window.js";

interface Pending {
  key: string;
  since: number;
  range: HistoryRange;
  window: Promise<UiWindow>;
}

/** A prefetch older than this is not taken: the window it asked for has moved on. */
const FRESH_MS = 1500;

let pending: Pending | null = null;

export function startPrefetch(key: string, range: HistoryRange, fetch: () => Promise<UiWindow>): void {
  const window = fetch();
  // Nobody may ever take it: its failure must not surface as an unhandled rejection.
  window.catch(() => undefined);
  pending = { key, since: performance.now(), range, window };
}

/** The prefetched window for `key`, once; null when there is none or it is stale. */
export function takePrefetch(key: string): { range: HistoryRange; window: Promise<UiWindow> } | null {
  const p = pending;
  if (p === null || p.key !== key || performance.now() - p.since > FRESH_MS) return null;
  pending = null;
  return { range: p.range, window: p.window };
}
