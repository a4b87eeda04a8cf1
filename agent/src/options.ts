// Argument checks: every bad input is refused at once with a message that names it.
import type { QueueMode } from "../../shared/protocol/types.js";
import type { ShareCoordinator } from "./share/share-options.js";
import type { AdaptivePermitsOption } from "./adaptive/adaptive-options.js";

export const QUEUE_MODES: readonly QueueMode[] = ["fifo", "lifo", "priority", "adaptive"];

/** The adaptive queue turns LIFO once its oldest waiter is older than this (docs/agent-api.md). */
export const DEFAULT_ADAPTIVE_TARGET_MS = 100;

export interface SemaphoreOptions {
  name: string;
  permits: number;
  queue?: QueueMode;
  maxWaiters?: number;
  acquireTimeoutMs?: number;
  leaseTimeoutMs?: number;
  leakThresholdMs?: number;
  detectOrderInversions?: boolean;
  /** For queue "adaptive": the oldest-waiter age past which the newest waiter is served first. */
  adaptiveTargetMs?: number;
  /** Fleet-wide budget for this name (docs/protocol.md, rule over_budget). */
  budget?: number;
  /**
   * The flight recorder: a ring of the last operations, sent to the hub when it raises an alert
   * on this semaphore. true (default): 1,024 operations; a number: that many (rounded up to a
   * power of two, at most 65,536); false: off.
   */
  flightRecorder?: boolean | number;
}

/**
 * A semaphore whose cap is this replica's share of `budget` among the live replicas of its
 * service and name, kept current through `coordinator` (docs/agent-api.md).
 */
export interface SharedSemaphoreOptions extends Omit<SemaphoreOptions, "permits" | "budget"> {
  budget: number;
  share: "replicas";
  coordinator: ShareCoordinator;
  /** The cap until the first share is known (default 1; at most the budget). */
  permits?: number;
}

/**
 * A semaphore whose cap follows the downstream's measured latency within [min, max]
 * (docs/adaptive-limit.md). With share: "replicas" too, the share is the ceiling.
 */
export interface AdaptiveSemaphoreOptions extends Omit<SemaphoreOptions, "permits"> {
  permits: AdaptivePermitsOption;
}

/** A shared budget whose replica's cap also follows latency under its share. */
export interface AdaptiveSharedSemaphoreOptions extends Omit<SharedSemaphoreOptions, "permits"> {
  permits: AdaptivePermitsOption;
}

export interface AcquireOptions {
  weight?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  priority?: number;
}

export function checkName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0 || name.length > 256) {
    throw new TypeError(`Semaphore: "name" must be a non-empty string of at most 256 characters, got ${describe(name)}`);
  }
  return name;
}

export function checkPositiveInt(what: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new TypeError(`${what} must be a positive integer, got ${describe(v)}`);
  }
  if (v < 1) throw new RangeError(`${what} must be a positive integer (≥ 1), got ${v}`);
  return v;
}

/** A duration option: undefined stays undefined; otherwise finite and ≥ 0. */
export function checkDuration(what: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number" || Number.isNaN(v)) throw new TypeError(`${what} must be a number of milliseconds, got ${describe(v)}`);
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`${what} must be finite and ≥ 0, got ${v}`);
  return v;
}

export function checkMaxWaiters(v: unknown): number {
  if (v === undefined || v === Infinity) return Infinity;
  if (typeof v !== "number" || !Number.isInteger(v)) throw new TypeError(`maxWaiters must be an integer ≥ 0 or Infinity, got ${describe(v)}`);
  if (v < 0) throw new RangeError(`maxWaiters must be ≥ 0, got ${v}`);
  return v;
}

export function checkQueue(v: unknown): QueueMode {
  if (v === undefined) return "fifo";
  if (typeof v !== "string" || !(QUEUE_MODES as readonly string[]).includes(v)) {
    throw new RangeError(`queue must be one of ${QUEUE_MODES.join(", ")}, got ${describe(v)}`);
  }
  return v as QueueMode;
}

export function checkPriority(v: unknown): number {
  if (v === undefined) return 0;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new TypeError(`priority must be a finite number, got ${describe(v)}`);
  return v;
}

export function describe(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v);
  if (typeof v === "number" || typeof v === "boolean" || v === undefined || v === null) return String(v);
  return typeof v;
}
