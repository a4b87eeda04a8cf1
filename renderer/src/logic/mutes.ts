// Muting is this browser's choice, not the hub's: an alert muted here is hidden from the counts
// and dimmed in the list for a while, on this machine only (persisted in localStorage). A mute
// matches (rule, key), so the same problem raised again on the same semaphore stays muted.
import type { Alert, AlertRule } from "../../../shared/protocol/types.js";

export interface Mute {
  /** `<rule>|<key>` */
  match: string;
  /** Epoch ms (browser clock) the mute ends. */
  until: number;
}

export const MUTE_DURATIONS: readonly { label: string; ms: number }[] = [
  { label: "15 min", ms: 15 * 60_000 },
  { label: "1 hour", ms: 60 * 60_000 },
  { label: "4 hours", ms: 4 * 60 * 60_000 },
  { label: "24 hours", ms: 24 * 60 * 60_000 },
];

/** Stored mutes beyond this are dropped oldest-first (localStorage is small and shared). */
export const MAX_MUTES = 500;

export function muteMatch(alert: Pick<Alert, "rule" | "key">): string {
  return `${alert.rule}|${alert.key}`;
}

/** A mute's (rule, key) back from its match string; null for one this version cannot read. */
export function muteTarget(match: string): { rule: AlertRule; key: string } | null {
  const bar = match.indexOf("|");
  if (bar <= 0) return null;
  const rule = match.slice(0, bar);
  return rule in ALERT_RULES ? { rule: rule as AlertRule, key: match.slice(bar + 1) } : null;
}

const ALERT_RULES: Record<AlertRule, true> = {
  leak: true,
  convoy: true,
  starvation: true,
  timeouts: true,
  double_release: true,
  agent_down: true,
  over_budget: true,
  order_inversion: true,
};

export function mutedUntil(mutes: readonly Mute[], alert: Pick<Alert, "rule" | "key">, now: number): number | null {
  const m = muteMatch(alert);
  let until: number | null = null;
  for (const mute of mutes) if (mute.match === m && mute.until > now && (until === null || mute.until > until)) until = mute.until;
  return until;
}

export function addMute(mutes: readonly Mute[], alert: Pick<Alert, "rule" | "key">, durationMs: number, now: number): Mute[] {
  const m = muteMatch(alert);
  const kept = mutes.filter((x) => x.match !== m && x.until > now);
  kept.push({ match: m, until: now + durationMs });
  return kept.slice(-MAX_MUTES);
}

export function removeMute(mutes: readonly Mute[], alert: Pick<Alert, "rule" | "key">): Mute[] {
  const m = muteMatch(alert);
  return mutes.filter((x) => x.match !== m);
}

export function pruneMutes(mutes: readonly Mute[], now: number): Mute[] {
  return mutes.filter((x) => x.until > now);
}

/** Whatever localStorage held, as valid mutes (another version or a hand edit must not break the page). */
export function parseMutes(raw: string | null): Mute[] {
  if (raw === null) return [];
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(v)) return [];
  const out: Mute[] = [];
  for (const x of v) {
    if (typeof x !== "object" || x === null) continue;
    const { match, until } = x as Record<string, unknown>;
    if (typeof match === "string" && match.length <= 2048 && typeof until === "number" && Number.isFinite(until)) out.push({ match, until });
  }
  return out.slice(-MAX_MUTES);
}
