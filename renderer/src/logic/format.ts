// Number and time formatting for dense tables: short, fixed-ish width, never "NaN".

/** "—" for nothing, "420 µs", "12.5 ms", "850 ms", "1.5 s", "2m 05s", "1h 04m". */
export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms === 0) return "0";
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 10) return `${trim(ms.toFixed(1))} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${trim((ms / 1000).toFixed(ms < 10_000 ? 2 : 1))} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad2(s % 60)}s`;
  const m = Math.round(s / 60);
  if (m < 24 * 60) return `${Math.floor(m / 60)}h ${pad2(m % 60)}m`;
  return `${Math.floor(m / 1440)}d ${Math.floor((m % 1440) / 60)}h`;
}

/** "0", "0.25/s", "3.4/s", "120/s", "12.3k/s". */
export function fmtRate(perSec: number | null | undefined): string {
  if (perSec === null || perSec === undefined || !Number.isFinite(perSec)) return "—";
  return `${fmtCount(perSec)}/s`;
}

/** Compact count: 0.25, 3.4, 120, 12.3k, 4.1M. */
export function fmtCount(n: number): string {
  if (!Number.isFinite(n)) return "—";
  const a = Math.abs(n);
  if (a === 0) return "0";
  if (a < 10) return trim(n.toFixed(a < 1 ? 2 : 1));
  if (a < 10_000) return String(Math.round(n));
  if (a < 1e6) return `${trim((n / 1e3).toFixed(1))}k`;
  return `${trim((n / 1e6).toFixed(1))}M`;
}

/** "87 %" (a ratio 0..1 or above). */
export function fmtPct(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return "—";
  return `${Math.round(ratio * 100)} %`;
}

/**
 * Whether times of day are said in UTC rather than the page's zone. A replay says every time in
 * UTC (its bar, its alerts), the same wherever the recording is opened, so its clock times, chart
 * axes and hover texts do too; a live page keeps the user's zone. Set once the hub says which
 * it is (main.tsx), before the views render.
 */
let utcClock = false;

export function setUtcClock(on: boolean): void {
  utcClock = on;
}

export function isUtcClock(): boolean {
  return utcClock;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** The calendar fields of a moment in the zone times are said in (see setUtcClock). */
function fields(epochMs: number): { y: number; mo: number; d: number; h: number; m: number; s: number } {
  const t = new Date(epochMs);
  return utcClock
    ? { y: t.getUTCFullYear(), mo: t.getUTCMonth(), d: t.getUTCDate(), h: t.getUTCHours(), m: t.getUTCMinutes(), s: t.getUTCSeconds() }
    : { y: t.getFullYear(), mo: t.getMonth(), d: t.getDate(), h: t.getHours(), m: t.getMinutes(), s: t.getSeconds() };
}

/** Wall-clock time of day, "14:03:27" (UTC in a replay). */
export function fmtClock(epochMs: number): string {
  const f = fields(epochMs);
  return `${pad2(f.h)}:${pad2(f.m)}:${pad2(f.s)}`;
}

/** "14:03:27" today, "Mar 4 14:03" on other days (relative to `now`; UTC in a replay). */
export function fmtWhen(epochMs: number, now: number): string {
  const f = fields(epochMs);
  const n = fields(now);
  if (f.y === n.y && f.mo === n.mo && f.d === n.d) return fmtClock(epochMs);
  return `${MONTHS[f.mo]} ${f.d} ${pad2(f.h)}:${pad2(f.m)}`;
}

/** "2026-03-04 14:03:27 UTC": a replay's times, the same wherever the recording is opened. */
export function fmtUtc(epochMs: number): string {
  return new Date(epochMs).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/** "just now", "42s ago", "5m ago", "3h ago". */
export function fmtAgo(epochMs: number, now: number): string {
  const s = Math.round((now - epochMs) / 1000);
  if (s < 2) return "just now";
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** "1.50" → "1.5", "2.0" → "2": trailing zeros only add noise in a table. */
function trim(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/** A time axis tick: seconds only when ticks are under a minute apart, the date only at midnight. */
export function fmtTimeTick(epochMs: number, incrMs: number): string {
  const f = fields(epochMs);
  const hm = `${pad2(f.h)}:${pad2(f.m)}`;
  if (incrMs < 60_000) return `${hm}:${pad2(f.s)}`;
  if (incrMs >= 86_400_000 || (f.h === 0 && f.m === 0 && incrMs >= 3_600_000)) return `${MONTHS[f.mo]} ${f.d}`;
  return hm;
}
