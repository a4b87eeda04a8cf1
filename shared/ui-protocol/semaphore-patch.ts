// A `/ui` delta's semaphore entries (docs/protocol.md, "Dashboard namespace `/ui`"): the hub
// sends what a sample changed (toPatch) and a dashboard rebuilds the whole entry from the one it
// holds (applyPatch). A full UiSemaphore is also a valid patch.
import { SAMPLE_GAUGES } from "../protocol/sample-layout.js";
import type { UiGaugeField, UiIdentityField, UiSemaphore, UiSemaphorePatch } from "./types.js";

export const UI_IDENTITY_FIELDS: readonly UiIdentityField[] = ["agentId", "service", "instance", "id", "name", "kind"];
export const UI_GAUGE_FIELDS: readonly UiGaugeField[] = SAMPLE_GAUGES.filter((f): f is UiGaugeField => f !== "longestHoldMs");

/** `s` as a delta carries it: with its identity only when `withIdentity`, and no gauge its `last` repeats. */
export function toPatch(s: UiSemaphore, withIdentity: boolean): UiSemaphorePatch {
  const p: UiSemaphorePatch = { key: s.key, status: s.status, t: s.t, last: s.last };
  if (withIdentity) for (const f of UI_IDENTITY_FIELDS) (p as Record<UiIdentityField, string>)[f] = s[f];
  const last = s.last;
  for (const f of UI_GAUGE_FIELDS) if (last === null || last[f] !== s[f]) p[f] = s[f];
  if (s.config !== undefined) p.config = s.config;
  return p;
}

/**
 * The semaphore `p` makes of `held` (what the dashboard has for its key, if anything), as a new
 * object. Undefined when `p` lacks the identity and nothing is held: the dashboard missed what
 * introduced the key and needs a snapshot.
 */
export function applyPatch(held: UiSemaphore | undefined, p: UiSemaphorePatch): UiSemaphore | undefined {
  const who = p.agentId !== undefined ? p : held;
  if (who === undefined) return undefined;
  const { agentId, service, instance, id, name, kind } = who;
  if (agentId === undefined || service === undefined || instance === undefined || id === undefined || name === undefined || kind === undefined) {
    return undefined;
  }
  const last = p.last;
  const gauge = (f: UiGaugeField): number => p[f] ?? last?.[f] ?? held?.[f] ?? 0;
  const out: UiSemaphore = {
    key: p.key,
    agentId,
    service,
    instance,
    id,
    name,
    kind,
    cap: gauge("cap"),
    inUse: gauge("inUse"),
    available: gauge("available"),
    waiters: gauge("waiters"),
    oldestWaitMs: gauge("oldestWaitMs"),
    status: p.status,
    t: p.t,
    last,
  };
  // A delta sends a config only when it changed: keep the one held.
  const config = p.config ?? held?.config;
  if (config !== undefined) out.config = config;
  return out;
}
