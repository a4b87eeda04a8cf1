// The options of an adaptive cap (`permits: { adaptive: { min, max, initial } }`, docs/agent-api.md),
// checked before anything is built.
import { checkPositiveInt, describe } from "../options.js";

export interface AdaptivePermits {
  /** The cap never goes below this. */
  min: number;
  /** The cap never goes above this (nor above a replica budget's share). */
  max: number;
  /** The cap until latency has been measured (default min). */
  initial?: number;
  /** Short-term latency may reach this multiple of the long-term one before the cap falls (default 1.5, > 1). */
  tolerance?: number;
}

export interface AdaptivePermitsOption {
  adaptive: AdaptivePermits;
}

export type CheckedAdaptive = Required<AdaptivePermits>;

/** undefined when `permits` is a number (or absent); the checked settings when it asks for an adaptive cap. */
export function checkAdaptive(name: string, permits: unknown): CheckedAdaptive | undefined {
  if (permits === null || typeof permits !== "object") return undefined;
  const a = (permits as Partial<AdaptivePermitsOption>).adaptive;
  if (a === null || typeof a !== "object") {
    throw new TypeError(`Semaphore "${name}": permits must be a positive integer or { adaptive: { min, max } }, got ${describe(a === undefined ? permits : a)}`);
  }
  const min = checkPositiveInt(`Semaphore "${name}": permits.adaptive.min`, a.min);
  const max = checkPositiveInt(`Semaphore "${name}": permits.adaptive.max`, a.max);
  if (max < min) throw new RangeError(`Semaphore "${name}": permits.adaptive.max (${max}) must be ≥ min (${min})`);
  const initial = a.initial === undefined ? min : checkPositiveInt(`Semaphore "${name}": permits.adaptive.initial`, a.initial);
  if (initial < min || initial > max) throw new RangeError(`Semaphore "${name}": permits.adaptive.initial (${initial}) must be within [${min}, ${max}]`);
  const tolerance = a.tolerance ?? 1.5;
  if (typeof tolerance !== "number" || !Number.isFinite(tolerance) || tolerance <= 1) {
    throw new RangeError(`Semaphore "${name}": permits.adaptive.tolerance must be a finite number > 1, got ${describe(tolerance)}`);
  }
  return { min, max, initial, tolerance };
}
