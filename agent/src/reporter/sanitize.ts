// Everything the agent sends is brought within the protocol's limits here, because one bad
// field makes the hub refuse the whole message (ok:false) and every good item in it is lost.
// Our own Semaphore already produces valid data; adapters and track()ed objects may not.
import { PAYLOAD_LIMITS } from "../../../shared/protocol/payload-limits.js";
import {
  LIMITS,
  type AgentEvent,
  type AgentEventType,
  type Sample,
  type SampleGlobal,
  type SampleLimit, type SampleLimitChange, type SampleShare,
  type SemaphoreInfo,
  type SparseHist,
  type Summary,
  type WireQueueMode,
} from "../../../shared/protocol/types.js";

const QUEUES: ReadonlySet<string> = new Set<WireQueueMode>(["fifo", "lifo", "priority", "adaptive", "unknown"]);
const EVENT_TYPES: ReadonlySet<string> = new Set<AgentEventType>([
  "leak_suspected",
  "leak_resolved",
  "double_release",
  "invariant_violation",
  "lease_expired",
  "order_inversion",
]);
// Keys that could reach a prototype in whoever merges `detail` later; the hub refuses them.
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** At most `max` UTF-16 units, never ending in half of a surrogate pair. */
export function truncate(s: string, max: number = LIMITS.maxString): string {
  if (s.length <= max) return s;
  let end = max;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return s.slice(0, end);
}

function str(v: unknown, max: number = LIMITS.maxString): string {
  return truncate(typeof v === "string" ? v : String(v), max);
}

/** Finite and >= 0, else 0. */
function amount(v: unknown): number {
  return typeof v === "number" && v >= 0 && v !== Infinity ? v : 0;
}

/** A safe integer >= 0 (counts, seq, pid). */
function count(v: unknown): number {
  const n = Math.round(amount(v));
  return n > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : n;
}

function nullableCount(v: unknown): number | null {
  return typeof v === "number" && v >= 0 && Number.isFinite(v) ? count(v) : null;
}

function nullableAmount(v: unknown): number | null {
  return typeof v === "number" && v >= 0 && Number.isFinite(v) ? v : null;
}

/** The wire id for a tracked item: samples and register must agree, so both come through here. */
export function wireId(id: unknown): string {
  return str(id);
}

export function sanitizeInfo(info: SemaphoreInfo): SemaphoreInfo {
  const out: SemaphoreInfo = {
    id: wireId(info.id),
    name: str(info.name),
    kind: str(info.kind),
    cap: amount(info.cap),
    queue: QUEUES.has(info.queue) ? info.queue : "unknown",
    maxWaiters: nullableCount(info.maxWaiters),
    acquireTimeoutMs: nullableAmount(info.acquireTimeoutMs),
    leaseTimeoutMs: nullableAmount(info.leaseTimeoutMs),
    leakThresholdMs: nullableAmount(info.leakThresholdMs),
    scope: info.scope === "global" ? "global" : "process",
  };
  const budget = nullableAmount(info.budget);
  if (budget !== null) out.budget = budget;
  if (info.share === "replicas") out.share = "replicas";
  return out;
}

function isValidHist(h: unknown): h is SparseHist {
  if (!Array.isArray(h) || h.length > PAYLOAD_LIMITS.maxHistPairs) return false;
  let prev = -1;
  for (const pair of h) {
    if (!Array.isArray(pair) || pair.length !== 2) return false;
    const [b, c] = pair as unknown[];
    if (typeof b !== "number" || !Number.isInteger(b) || b <= prev || b >= LIMITS.histBuckets) return false;
    if (typeof c !== "number" || !Number.isSafeInteger(c) || c < 0) return false;
    prev = b;
  }
  return true;
}

function sanitizeHist(h: unknown): SparseHist {
  // The common case (our own DenseHist) is already valid and is passed through without a copy.
  if (isValidHist(h)) return h;
  if (!Array.isArray(h)) return [];
  const dense = new Map<number, number>();
  for (const pair of h as unknown[]) {
    if (!Array.isArray(pair)) continue;
    const b = Math.floor(amount(pair[0]));
    if (b >= LIMITS.histBuckets) continue;
    dense.set(b, (dense.get(b) ?? 0) + count(pair[1]));
  }
  return [...dense.entries()].sort((x, y) => x[0] - y[0]);
}

function sanitizeSummary(s: Summary | undefined): Summary {
  const v = (s ?? {}) as Partial<Summary>;
  return {
    count: count(v.count),
    p50: amount(v.p50),
    p90: amount(v.p90),
    p99: amount(v.p99),
    max: amount(v.max),
    hist: sanitizeHist(v.hist),
  };
}

export function sanitizeSample(s: Sample, id: string): Sample {
  return {
    id,
    cap: amount(s.cap),
    inUse: amount(s.inUse),
    // The one field allowed below 0 (a lowered cap still over-subscribed); it must stay finite.
    available: typeof s.available === "number" && Number.isFinite(s.available) ? s.available : 0,
    waiters: count(s.waiters),
    oldestWaitMs: amount(s.oldestWaitMs),
    acquired: count(s.acquired),
    released: count(s.released),
    timeouts: count(s.timeouts),
    rejections: count(s.rejections),
    aborts: count(s.aborts),
    doubleReleases: count(s.doubleReleases),
    leaseExpiries: count(s.leaseExpiries),
    waitMs: sanitizeSummary(s.waitMs),
    holdMs: sanitizeSummary(s.holdMs),
    longestHoldMs: amount(s.longestHoldMs),
    ...(s.global !== undefined && s.global !== null && typeof s.global === "object" ? { global: sanitizeGlobal(s.global) } : {}),
    ...(s.share !== undefined && s.share !== null && typeof s.share === "object" ? { share: sanitizeShare(s.share) } : {}),
    ...(s.limit !== undefined && s.limit !== null && typeof s.limit === "object" ? { limit: sanitizeLimit(s.limit) } : {}),
    ...(s.opening !== undefined ? { opening: count(s.opening) } : {}),
  };
}

function sanitizeLimit(v: SampleLimit): SampleLimit {
  const out: SampleLimit = sanitizeLimitChange(v);
  // The newest ones when there are too many: the hub's history keeps the latest.
  if (Array.isArray(v.earlier) && v.earlier.length > 0) out.earlier = v.earlier.slice(-LIMITS.maxLimitChanges).map(sanitizeLimitChange);
  return out;
}

function sanitizeLimitChange(v: SampleLimitChange): SampleLimitChange {
  const out: SampleLimitChange = { min: count(v.min), max: count(v.max), limit: count(v.limit), t: amount(v.t), reason: str(v.reason) };
  if (v.from !== undefined) out.from = count(v.from);
  if (v.shortMs !== undefined) out.shortMs = amount(v.shortMs);
  if (v.longMs !== undefined) out.longMs = amount(v.longMs);
  if (v.inFlight !== undefined) out.inFlight = count(v.inFlight);
  return out;
}

function sanitizeShare(v: SampleShare): SampleShare {
  return { budget: count(v.budget), replicas: count(v.replicas), target: count(v.target), reachable: v.reachable === true };
}

function sanitizeGlobal(g: SampleGlobal): SampleGlobal {
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.slice(0, PAYLOAD_LIMITS.maxGlobalHolders).map((x) => str(x)) : []);
  return { inUse: amount(g.inUse), holders: list(g.holders), own: list(g.own) };
}

/** An event fit for the wire, or undefined when it cannot be made one (unknown type). */
export function sanitizeEvent(e: AgentEvent): AgentEvent | undefined {
  if (e === null || typeof e !== "object" || !EVENT_TYPES.has(e.type)) return undefined;
  const out: AgentEvent = { t: amount(e.t), id: wireId(e.id), type: e.type };
  if (e.holderId !== undefined) out.holderId = str(e.holderId);
  if (typeof e.heldMs === "number" && e.heldMs >= 0 && Number.isFinite(e.heldMs)) out.heldMs = e.heldMs;
  if (e.stack !== undefined) out.stack = str(e.stack, LIMITS.maxStack);
  if (e.detail !== undefined && e.detail !== null && typeof e.detail === "object") {
    const budget = { values: PAYLOAD_LIMITS.maxDetailValues };
    out.detail = copyObject(e.detail, 1, budget);
  }
  return out;
}

interface Budget {
  values: number;
}

// Mirrors the hub's checks on `detail` (shared/protocol/schemas.ts): JSON data only, strings and
// keys within 256, at most 8 levels and 1000 values. What does not fit is cut, not refused.
function copyValue(v: unknown, depth: number, budget: Budget): unknown {
  switch (typeof v) {
    case "string":
      return truncate(v);
    case "number":
      return Number.isFinite(v) ? v : null;
    case "boolean":
      return v;
    case "bigint":
      return truncate(v.toString());
    case "object":
      break;
    default:
      return null;
  }
  if (v === null) return null;
  if (depth > PAYLOAD_LIMITS.maxDetailDepth) return null;
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const item of v) {
      if (budget.values <= 0) break;
      budget.values--;
      out.push(copyValue(item, depth + 1, budget));
    }
    return out;
  }
  const toJSON = (v as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") return copyValue(toJSON.call(v), depth, budget);
  return copyObject(v as object, depth, budget);
}

function copyObject(obj: object, depth: number, budget: Budget): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    if (budget.values <= 0) break;
    if (FORBIDDEN_KEYS.has(key)) continue;
    budget.values--;
    const value = copyValue((obj as Record<string, unknown>)[key], depth + 1, budget);
    // JSON drops undefined members anyway; null keeps the key visible.
    out[truncate(key)] = value;
  }
  return out;
}
