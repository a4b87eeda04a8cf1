// A Sample's fields by role: the one list that code handling a sample field by field derives from
// (loops, index tables, typed records), or, where it is written out for speed, is tested against.
// A field added to Sample and left out of these lists fails the typecheck below.
import type { Sample, Summary } from "./types.js";

/** Levels read at the end of the interval. */
export const SAMPLE_GAUGES = ["cap", "inUse", "available", "waiters", "oldestWaitMs", "longestHoldMs"] as const satisfies readonly NumberKey<Sample>[];

/** Counts within the interval: an agent keeps running totals and sends what each grew by. */
export const SAMPLE_COUNTERS = [
  "acquired",
  "released",
  "timeouts",
  "rejections",
  "aborts",
  "doubleReleases",
  "leaseExpiries",
] as const satisfies readonly NumberKey<Sample>[];

/** Every plain number of a Sample: its gauges, then its counters. */
export const SAMPLE_NUMBERS = [...SAMPLE_GAUGES, ...SAMPLE_COUNTERS] as const;

/** Its duration summaries (time to a grant, time held), and each one's numbers besides its histogram. */
export const SAMPLE_SUMMARIES = ["waitMs", "holdMs"] as const satisfies readonly (keyof Sample)[];
export const SUMMARY_NUMBERS = ["count", "p50", "p90", "p99", "max"] as const satisfies readonly NumberKey<Summary>[];

/** Optional parts, sent only by the semaphores that have one: global scope, a shared budget, an adaptive cap, connections opening. */
export const SAMPLE_PARTS = ["global", "share", "limit", "opening"] as const satisfies readonly OptionalKey<Sample>[];

export type SampleGauge = (typeof SAMPLE_GAUGES)[number];
export type SamplePart = (typeof SAMPLE_PARTS)[number];
export type SampleCounter = (typeof SAMPLE_COUNTERS)[number];
export type SampleNumber = (typeof SAMPLE_NUMBERS)[number];

/** Whether `s` carries an optional part (SAMPLE_PARTS, written out: it is asked of every sample the hub stores). */
export function hasParts(s: Sample): boolean {
  return s.global !== undefined || s.share !== undefined || s.limit !== undefined || s.opening !== undefined;
}

type NumberKey<T> = { [K in keyof T]-?: T[K] extends number ? K : never }[keyof T];
type OptionalKey<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];
/** `true` when `Unlisted` is empty; otherwise a type that names the fields no list has. */
type NoneUnlisted<Unlisted> = [Unlisted] extends [never] ? true : { unlisted: Unlisted };
const _everySampleField: NoneUnlisted<Exclude<keyof Sample, "id" | SampleNumber | (typeof SAMPLE_SUMMARIES)[number] | (typeof SAMPLE_PARTS)[number]>> = true;
const _everySummaryNumber: NoneUnlisted<Exclude<keyof Summary, "hist" | (typeof SUMMARY_NUMBERS)[number]>> = true;
