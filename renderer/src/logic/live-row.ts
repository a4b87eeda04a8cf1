// A live sample (a delta's `last`) as one row of the detail view's history columns, so live points
// and history:get points line up in one buffer: shared/history's sampleRow, the 1 s tier's formula.
import { sampleRow, WINDOW_COLUMNS, type WindowColumn } from "../../../shared/history/index.js";
import type { UiSample } from "../../../shared/ui-protocol/types.js";

/** Window columns the detail view does not chart: time, the minute tier's extremes, the rarest rates. */
const NOT_CHARTED = ["t", "inUseMax", "waitersMax", "doubleReleasesPerSec", "leaseExpiriesPerSec", "waitMax", "holdMax"] as const;

export type DetailColumn = Exclude<WindowColumn, (typeof NOT_CHARTED)[number]>;

/** What the detail view asks history:get for and keeps, in the window's column order. */
export const DETAIL_COLUMNS: readonly DetailColumn[] = WINDOW_COLUMNS.filter((c): c is DetailColumn => !(NOT_CHARTED as readonly string[]).includes(c));

export function liveRow(s: UiSample, intervalMs: number): Record<DetailColumn, number> {
  return sampleRow(s, Math.max(intervalMs, 1));
}
