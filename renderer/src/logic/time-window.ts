// The detail view's time window: which span, which tier, and where it sits. Live, the window
// ends at the latest sample; opened from an alert, it is placed so raisedAt sits two thirds of
// the way in (the lead-up and a little of the aftermath).
import { pickTier, type Tier } from "../../../shared/history/index.js";

export type WindowId = "1m" | "5m" | "15m" | "1h" | "24h";

export const WINDOWS: readonly { id: WindowId; label: string; ms: number }[] = [
  { id: "1m", label: "1 m", ms: 60_000 },
  { id: "5m", label: "5 m", ms: 5 * 60_000 },
  { id: "15m", label: "15 m", ms: 15 * 60_000 },
  { id: "1h", label: "1 h", ms: 60 * 60_000 },
  { id: "24h", label: "24 h", ms: 24 * 60 * 60_000 },
];

export const DEFAULT_WINDOW: WindowId = "5m";

/** How far back the hub's 1 s tier reaches (900 points at the default 1 s interval). */
export const SECOND_TIER_MS = 15 * 60_000;

export function windowMs(id: WindowId): number {
  return WINDOWS.find((w) => w.id === id)?.ms ?? 5 * 60_000;
}

export function isWindowId(v: string | null | undefined): v is WindowId {
  return WINDOWS.some((w) => w.id === v);
}

export interface HistoryRange {
  tier: Tier;
  from: number;
  to: number;
}

/** A window that does not follow the latest sample: around a moment (an alert), or ending where it was paused. */
export type Pin = { at: number } | { end: number };

/**
 * The history request for a window. Live (no pin), the window ends at the latest sample; pinned
 * `at` a moment, that moment sits two thirds in; paused, it ends where it was paused. A range
 * that starts before the 1 s tier's reach is read from the 1 m tier whatever its span: the
 * seconds are gone by then.
 */
export function historyRange(spanMs: number, pin: Pin | null, latestT: number | null, now: number): HistoryRange {
  const latest = latestT ?? now;
  let from: number;
  let to: number;
  if (pin === null) {
    to = latest;
    from = to - spanMs;
  } else if ("at" in pin) {
    from = pin.at - Math.round((spanMs * 2) / 3);
    to = from + spanMs;
  } else {
    to = pin.end;
    from = to - spanMs;
  }
  let tier = pickTier(spanMs);
  if (tier === "1s" && from < latest - SECOND_TIER_MS) tier = "1m";
  return { tier, from, to };
}

/** Points a window of this tier and span holds (what the live buffer keeps, with some slack). */
export function pointsFor(tier: Tier, spanMs: number, intervalMs = 1000): number {
  return Math.ceil(spanMs / (tier === "1s" ? Math.max(1, intervalMs) : 60_000)) + 2;
}
