// A live sample (from a delta's `last`) as one row of the history columns, so live points and
// history:get points line up in one buffer: the same names, counts turned into per-second rates
// over the sample's interval exactly as the hub's 1 s tier does.
import type { UiSample } from "../../../shared/ui-protocol/types.js";

export const DETAIL_COLUMNS = [
  "intervalMs",
  "cap",
  "inUse",
  "available",
  "waiters",
  "oldestWaitMs",
  "longestHoldMs",
  "acquiredPerSec",
  "releasedPerSec",
  "timeoutsPerSec",
  "rejectionsPerSec",
  "abortsPerSec",
  "waitCount",
  "waitP50",
  "waitP90",
  "waitP99",
  "holdCount",
  "holdP50",
  "holdP90",
  "holdP99",
] as const;

export type DetailColumn = (typeof DETAIL_COLUMNS)[number];

export function sampleRow(s: UiSample, intervalMs: number): Record<DetailColumn, number> {
  const sec = Math.max(intervalMs, 1) / 1000;
  return {
    intervalMs,
    cap: s.cap,
    inUse: s.inUse,
    available: s.available,
    waiters: s.waiters,
    oldestWaitMs: s.oldestWaitMs,
    longestHoldMs: s.longestHoldMs,
    acquiredPerSec: s.acquired / sec,
    releasedPerSec: s.released / sec,
    timeoutsPerSec: s.timeouts / sec,
    rejectionsPerSec: s.rejections / sec,
    abortsPerSec: s.aborts / sec,
    waitCount: s.waitMs.count,
    waitP50: s.waitMs.p50,
    waitP90: s.waitMs.p90,
    waitP99: s.waitMs.p99,
    holdCount: s.holdMs.count,
    holdP50: s.holdMs.p50,
    holdP90: s.holdMs.p90,
    holdP99: s.holdMs.p99,
  };
}
