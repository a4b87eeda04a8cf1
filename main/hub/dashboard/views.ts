// Read-only views of the hub for dashboards and the HTTP API: history windows as plain arrays,
// semaphores with their latest sample time, a sparkline (snapshot-builder.ts assembles /ui's snapshot).
import { pickTier, WindowScratch, WINDOW_COLUMNS, type ColumnarWindow, type FleetWindow, type Tier, type WindowColumn } from "../../../shared/history/index.js";
import type { FleetFigures } from "../../../shared/alerts/index.js";
import type { SemaphoreFigures } from "../../../shared/alerts/semaphore-tracker.js";
import type { SummaryFigures } from "../../../shared/histogram.js";
import type { SampleFigures } from "../../../shared/protocol/latest-sample.js";
import { fleetKey, type SampleLimit, type SemaphoreInfo, type SemaphoreState } from "../../../shared/protocol/index.js";
import {
  UI_LIMITS,
  type Sparkline,
  type UiFleetEntry,
  type UiLimitChange,
  type UiSample,
  type UiSemaphore,
  type UiSemaphoreConfig,
  type UiSummary,
  type UiWindow,
} from "../../../shared/ui-protocol/index.js";
import type { HubCore } from "../core/hub-core.js";

/** Default span of a history request: the whole 1 s tier at the default interval. */
export const DEFAULT_SPAN_MS = 15 * 60 * 1000;

export interface WindowQuery {
  tier?: Tier;
  from?: number;
  to?: number;
  columns?: readonly WindowColumn[];
}

export type ViewResult<T> = { ok: true; value: T } | { ok: false; error: string; status: number };

export function toUiWindow(win: ColumnarWindow | FleetWindow, columns?: readonly WindowColumn[]): UiWindow {
  const out: UiWindow = { tier: win.tier, length: win.length, partialLast: win.partialLast, t: Array.from(win.t) };
  for (const c of columns ?? WINDOW_COLUMNS) if (c !== "t") out[c] = Array.from(win[c]);
  if ("replicas" in win) out.replicas = Array.from(win.replicas);
  return out;
}

function range(q: WindowQuery, latest: number | null, now: number, intervalMs: number): ViewResult<{ tier: Tier; from: number; to: number }> {
  const to = q.to ?? latest ?? now;
  const from = q.from ?? to - DEFAULT_SPAN_MS;
  if (!(from <= to)) return { ok: false, error: "from must be <= to", status: 400 };
  return { ok: true, value: { tier: q.tier ?? pickTier(to - from, intervalMs), from, to } };
}

export function historyView(core: HubCore, key: string, q: WindowQuery): ViewResult<{ key: string; window: UiWindow }> {
  const h = core.history.get(key);
  if (h === undefined) return { ok: false, error: `no history for ${key}`, status: 404 };
  const latest = h.latestT();
  const interval = h.latestT() === null ? 1000 : intervalOf(core, key);
  const r = range(q, latest, core.now(), interval);
  if (!r.ok) return r;
  const window = toUiWindow(h.window(r.value.tier, r.value.from, r.value.to), q.columns);
  const changes = limitChangesIn(core, key, r.value.from, r.value.to);
  if (changes.length > 0) window.limitChanges = changes;
  return { ok: true, value: { key, window } };
}

/** The adaptive limit's changes kept for `key` (at most LIMIT_CHANGES_KEPT) made within [from, to]. */
function limitChangesIn(core: HubCore, key: string, from: number, to: number): SampleLimit[] {
  const all = core.engine.registry.tracker(key)?.limitChanges;
  return all === undefined ? [] : all.filter((c) => c.t >= from && c.t <= to);
}

/** The members' limit changes within [from, to], each naming its instance: oldest first, the newest UI_LIMITS.fleetLimitChanges. */
function fleetLimitChangesIn(core: HubCore, members: readonly SemaphoreState[], from: number, to: number): UiLimitChange[] {
  const out: UiLimitChange[] = [];
  for (const m of members) for (const c of limitChangesIn(core, m.key, from, to)) out.push({ ...c, instance: m.instance });
  out.sort((a, b) => a.t - b.t);
  return out.length > UI_LIMITS.fleetLimitChanges ? out.slice(out.length - UI_LIMITS.fleetLimitChanges) : out;
}

export function fleetHistoryView(core: HubCore, service: string, name: string, q: WindowQuery): ViewResult<{ key: string; window: UiWindow }> {
  const members = core.registry.semaphores().filter((s) => s.service === service && s.name === name);
  const keys = members.map((s) => s.key);
  if (keys.length === 0) return { ok: false, error: `no semaphores named ${name} in ${service}`, status: 404 };
  let latest: number | null = null;
  for (const k of keys) {
    const t = core.history.get(k)?.latestT() ?? null;
    if (t !== null && (latest === null || t > latest)) latest = t;
  }
  const r = range(q, latest, core.now(), intervalOf(core, keys[0]));
  if (!r.ok) return r;
  const win = core.history.fleetWindow(keys, r.value.tier, r.value.from, r.value.to);
  const window = toUiWindow(win, q.columns);
  const changes = fleetLimitChangesIn(core, members, r.value.from, r.value.to);
  if (changes.length > 0) window.limitChanges = changes;
  return { ok: true, value: { key: fleetKey(service, name), window } };
}

function intervalOf(core: HubCore, key: string): number {
  const h = core.history.get(key);
  if (h === undefined) return 1000;
  const t = h.latestT();
  if (t === null) return 1000;
  const w = h.window("1s", t, t);
  return w.length > 0 ? w.intervalMs[0] : 1000;
}

/**
 * `x` to 4 significant digits. A percentile read from the histogram is a bucket estimate good to
 * ~9 % (shared/histogram.ts), so its 17 digits are noise; they were a third of a delta's bytes
 * and the slow path of a dashboard's number parsing.
 */
export function fourDigits(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const shift = 3 - Math.floor(Math.log10(Math.abs(x)));
  // Powers of ten are exact doubles up to 1e22, so either way the result is the double nearest
  // the rounded decimal. Past that (|x| under 1e-19 or over 1e25, nothing a count or a duration
  // in ms is) the value is kept as it is.
  if (Math.abs(shift) > 22) return x;
  if (shift >= 0) {
    const f = 10 ** shift;
    return Math.round(x * f) / f;
  }
  const f = 10 ** -shift;
  return Math.round(x / f) * f;
}

function uiSummary(s: SummaryFigures): UiSummary {
  return { count: s.count, p50: fourDigits(s.p50), p90: fourDigits(s.p90), p99: fourDigits(s.p99), max: fourDigits(s.max) };
}

/** A sample as dashboards get it: percentiles, no histograms (see UiSummary). */
export function uiSample(s: SampleFigures): UiSample {
  return { ...s, waitMs: uiSummary(s.waitMs), holdMs: uiSummary(s.holdMs) };
}

export function uiFleet(fleet: readonly FleetFigures[]): UiFleetEntry[] {
  return fleet.map((f) => ({ ...f, waitMs: uiSummary(f.waitMs), holdMs: uiSummary(f.holdMs) }));
}

export function uiConfig(info: SemaphoreInfo): UiSemaphoreConfig {
  const c: UiSemaphoreConfig = {
    kind: info.kind,
    queue: info.queue,
    maxWaiters: info.maxWaiters,
    acquireTimeoutMs: info.acquireTimeoutMs,
    leaseTimeoutMs: info.leaseTimeoutMs,
    leakThresholdMs: info.leakThresholdMs,
    scope: info.scope,
  };
  if (info.budget !== undefined) c.budget = info.budget;
  return c;
}

/**
 * One semaphore for dashboards: the time of its latest sample, its sample without histograms,
 * and its config when `withConfig` says so for its registration (always, by default).
 */
export function uiSemaphore(core: HubCore, s: SemaphoreFigures, withConfig?: (key: string, info: SemaphoreInfo) => boolean): UiSemaphore {
  const out: UiSemaphore = { ...s, t: core.history.get(s.key)?.latestT() ?? null, last: s.last === null ? null : uiSample(s.last) };
  const info = core.registry.semaphoreInfo(s.key);
  if (info !== undefined && (withConfig === undefined || withConfig(s.key, info))) out.config = uiConfig(info);
  return out;
}

/**
 * The last few 1 s points of inUse and waiters of `key`; undefined without samples. Read through
 * `scratch` (one per snapshot): a fresh window is 27 typed arrays, and a snapshot reads thousands.
 */
export function sparkline(core: HubCore, key: string, scratch: WindowScratch): Sparkline | undefined {
  const h = core.history.get(key);
  const latest = h?.latestT() ?? null;
  if (h === undefined || latest === null) return undefined;
  const n = UI_LIMITS.sparklinePoints;
  const reader = h.reader("1s");
  const newest = scratch.read(reader, latest, latest);
  const interval = newest.length > 0 ? newest.intervalMs[0] : 1000;
  // Only the rows wanted are copied out of the ring: from a little over n intervals back.
  const w = scratch.read(reader, latest - (n + 1) * interval, latest);
  const start = Math.max(0, w.length - n);
  const column = (c: Float64Array) => Array.from(c.subarray(start, w.length));
  return { t: column(w.t), inUse: column(w.inUse), waiters: column(w.waiters) };
}
