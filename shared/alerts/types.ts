// Types the alert engine hands out and the rules share.
import type { Alert, SemaphoreInfo } from "../protocol/types.js";

export type AlertChangeKind = "raised" | "updated" | "resolved";

/**
 * One change to one alert, in the order the engine made them. `alert` is a snapshot taken at the
 * change (a fresh top-level object; `evidence` is frozen), safe to keep or send as it is.
 */
export interface AlertChange {
  readonly kind: AlertChangeKind;
  readonly alert: Alert;
}

/** What an alert is about: copied into the Alert's `key`, `service`, `instance`, `semaphore`. */
export interface AlertTarget {
  readonly key: string;
  readonly service: string;
  readonly instance?: string;
  /** The semaphore's `id` for per-semaphore alerts; the shared `name` for fleet alerts. */
  readonly semaphore?: string;
  /**
   * The rules with an alert active on it, a bit each (RULE_BIT), kept by the AlertBook as it
   * raises and resolves them: a tracker reads it (one field of an object it touches anyway) to
   * pass over the rules that have nothing to do with a quiet sample.
   */
  active?: number;
}

/** What a per-semaphore rule knows of the semaphore it watches. */
export interface SemaphoreContext {
  readonly target: AlertTarget;
  /** "db on checkout/web-1": how messages name the semaphore. */
  readonly label: string;
  readonly info: SemaphoreInfo;
}

/** The sample-time facts of one sample, as the rules see them. */
export interface SampleTime {
  /** The batch's `t`: end of the interval, agent clock. */
  readonly t: number;
  readonly intervalMs: number;
  /** A gap over this between two samples restarts every window. */
  readonly maxGapMs: number;
}
