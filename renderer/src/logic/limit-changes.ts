// An adaptive limit's changes as the detail chart shows them: a marker at each change on the
// permits chart, its reason on hover. The hub keeps the last ones per semaphore (history:get's
// `limitChanges`; a fleet's window has its members', each naming its instance); a live view adds
// each new one from the sample that first carries it, or from its next poll.
import type { UiLimitChange } from "../../../shared/ui-protocol/types.js";
import type { Marker } from "../charts/chart-spec.js";
import { fmtClock } from "./format.js";

/** Changes a view holds at most (the hub keeps 64; a long live view adds to them). */
export const LIMIT_CHANGES_SHOWN = 256;

/**
 * `changes` (oldest first) with those of `more` that are newer than its last (or as new, on
 * another replica); the same array when none are.
 */
export function mergeLimitChanges(changes: readonly UiLimitChange[], more: readonly UiLimitChange[]): readonly UiLimitChange[] {
  const lastT = changes.length > 0 ? changes[changes.length - 1].t : -Infinity;
  const held = (c: UiLimitChange) => changes.some((h) => h.t === c.t && h.instance === c.instance);
  const fresh = more.filter((c) => c.from !== undefined && (c.t > lastT || (c.t === lastT && !held(c))));
  if (fresh.length === 0) return changes;
  const out = [...changes, ...fresh];
  return out.length > LIMIT_CHANGES_SHOWN ? out.slice(out.length - LIMIT_CHANGES_SHOWN) : out;
}

/** "Limit 20 → 12 at 14:03:27: latency rose from 12 ms to 30 ms at in-flight 18", after "web-2: " on a fleet's chart. */
export function limitChangeText(c: UiLimitChange): string {
  return `${c.instance !== undefined ? `${c.instance}: ` : ""}Limit ${c.from ?? "?"} → ${c.limit} at ${fmtClock(c.t)}: ${c.reason}`;
}

export function limitMarker(c: UiLimitChange): Marker {
  return { t: c.t, label: `N→${c.limit}`, title: limitChangeText(c), kind: "limit", chartId: "permits" };
}
