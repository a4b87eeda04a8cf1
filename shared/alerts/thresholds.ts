// The numbers behind every alert rule (docs/protocol.md, "Alert rules"). The defaults are the
// protocol's; a hub may let a user change them per rule at run time (AlertEngine.setThresholds).
// Leak has no threshold (the check is exact) and over_budget takes its budget from `register`.

export interface WindowThresholds {
  /** A gap of more than this many `intervalMs` between two samples restarts every window. */
  readonly maxGapIntervals: number;
}

export interface ConvoyThresholds {
  /** The trailing window of consecutive samples it is judged over (sample time). */
  readonly windowMs: number;
  /** The condition must hold for at least this fraction of the window's sample time (0..1). */
  readonly minHeldFraction: number;
  /** `waiters ≥ minWaiters` (at least 1: a convoy needs a queue). */
  readonly minWaiters: number;
  /** `waitMs.p99 ≥ waitToHoldRatio × holdMs.p50`. */
  readonly waitToHoldRatio: number;
  /** Resolved after `waiters = 0` for this much sample time. */
  readonly clearMs: number;
}

export interface StarvationThresholds {
  /** `oldestWaitMs ≥ max(minWaitMs, holdP99Multiple × holdMs.p99)`. */
  readonly minWaitMs: number;
  readonly holdP99Multiple: number;
  /** While the pool is opening connections (`opening > 0`): `oldestWaitMs ≥ openingWaitMs` instead. */
  readonly openingWaitMs: number;
  /** Resolved after the condition is false for this much sample time. */
  readonly clearMs: number;
}

export interface TimeoutsThresholds {
  /** Trailing window the ratio is measured over. */
  readonly windowMs: number;
  /** `(timeouts + rejections) / attempts ≥ ratio` (0..1). */
  readonly ratio: number;
  /** Fewer attempts than this in the window never raise: too little traffic to judge. */
  readonly minAttempts: number;
  /** Resolved after the windowed condition is false for this much sample time. */
  readonly clearMs: number;
}

export interface DoubleReleaseThresholds {
  /** Resolved once a sample arrives this long (sample time) after the last double release. */
  readonly quietMs: number;
}

export interface AgentDownThresholds {
  /** Down when silent (hub clock) for this many of the agent's `intervalMs`. */
  readonly silentIntervals: number;
  /** The interval assumed before an agent's first samples batch tells its own. */
  readonly defaultIntervalMs: number;
}

export interface AlertThresholds {
  readonly window: WindowThresholds;
  readonly convoy: ConvoyThresholds;
  readonly starvation: StarvationThresholds;
  readonly timeouts: TimeoutsThresholds;
  readonly doubleRelease: DoubleReleaseThresholds;
  readonly agentDown: AgentDownThresholds;
}

/** A partial change: any subset of groups, any subset of fields in each. */
export type ThresholdsPatch = { readonly [G in keyof AlertThresholds]?: Partial<AlertThresholds[G]> };

/** The protocol's numbers. Frozen: copy it through applyThresholds to change anything. */
export const DEFAULT_THRESHOLDS: AlertThresholds = Object.freeze({
  window: Object.freeze({ maxGapIntervals: 2 }),
  convoy: Object.freeze({ windowMs: 5000, minHeldFraction: 0.8, minWaiters: 1, waitToHoldRatio: 2, clearMs: 5000 }),
  starvation: Object.freeze({ minWaitMs: 5000, holdP99Multiple: 10, openingWaitMs: 10_000, clearMs: 5000 }),
  timeouts: Object.freeze({ windowMs: 10_000, ratio: 0.05, minAttempts: 20, clearMs: 10_000 }),
  doubleRelease: Object.freeze({ quietMs: 60_000 }),
  agentDown: Object.freeze({ silentIntervals: 3, defaultIntervalMs: 1000 }),
});

type Check = (v: number) => boolean;
const positive: Check = (v) => v > 0;
const nonNegative: Check = (v) => v >= 0;
const atLeastOne: Check = (v) => v >= 1;
const fraction: Check = (v) => v > 0 && v <= 1;

// One table says what each field accepts, so validation and the error text cannot disagree.
const RULES: { readonly [G in keyof AlertThresholds]: { readonly [F in keyof AlertThresholds[G]]: [Check, string] } } = {
  window: { maxGapIntervals: [atLeastOne, "≥ 1"] },
  convoy: {
    windowMs: [positive, "> 0"],
    minHeldFraction: [fraction, "in (0, 1]"],
    minWaiters: [atLeastOne, "≥ 1"],
    waitToHoldRatio: [nonNegative, "≥ 0"],
    clearMs: [positive, "> 0"],
  },
  starvation: {
    minWaitMs: [nonNegative, "≥ 0"],
    holdP99Multiple: [nonNegative, "≥ 0"],
    openingWaitMs: [nonNegative, "≥ 0"],
    clearMs: [positive, "> 0"],
  },
  timeouts: {
    windowMs: [positive, "> 0"],
    ratio: [fraction, "in (0, 1]"],
    minAttempts: [atLeastOne, "≥ 1"],
    clearMs: [positive, "> 0"],
  },
  doubleRelease: { quietMs: [positive, "> 0"] },
  agentDown: { silentIntervals: [positive, "> 0"], defaultIntervalMs: [positive, "> 0"] },
};

/**
 * `base` with `patch` applied, validated and frozen. Throws TypeError for an unknown group or
 * field or a non-number, RangeError for a number out of range; `base` is never changed.
 */
export function applyThresholds(base: AlertThresholds, patch: ThresholdsPatch): AlertThresholds {
  const out: Record<string, Readonly<Record<string, number>>> = {};
  for (const group of Object.keys(base) as (keyof AlertThresholds)[]) out[group] = base[group] as unknown as Record<string, number>;
  for (const [group, fields] of Object.entries(patch)) {
    const rules = (RULES as Record<string, Record<string, [Check, string]> | undefined>)[group];
    if (!Object.hasOwn(RULES, group) || rules === undefined) throw new TypeError(`thresholds: unknown rule group "${group}"`);
    if (fields === undefined) continue;
    if (typeof fields !== "object" || fields === null) throw new TypeError(`thresholds.${group}: expected an object`);
    const next: Record<string, number> = { ...out[group] };
    for (const [field, value] of Object.entries(fields as Record<string, unknown>)) {
      const rule = Object.hasOwn(rules, field) ? rules[field] : undefined;
      if (rule === undefined) throw new TypeError(`thresholds.${group}: unknown field "${field}"`);
      if (value === undefined) continue;
      if (typeof value !== "number") throw new TypeError(`thresholds.${group}.${field}: expected a number, got ${typeof value}`);
      if (!Number.isFinite(value) || !rule[0](value)) {
        throw new RangeError(`thresholds.${group}.${field}: must be a finite number ${rule[1]}, got ${value}`);
      }
      next[field] = value;
    }
    out[group] = Object.freeze(next);
  }
  return Object.freeze(out) as unknown as AlertThresholds;
}
