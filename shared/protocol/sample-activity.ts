// Whether a sample says something happened in its interval: what "changed_only" turns on
// (docs/protocol.md). The agent leaves out a semaphore whose sample has no activity and the same
// gauges as the one before; the hub keeps filling in quiet intervals after activity.
import { emptySummary } from "../histogram.js";
import type { Sample } from "./types.js";

/** The gauges a quiet sample carries over; everything else in it is zero. */
export interface QuietGauges {
  cap: number;
  inUse: number;
  available: number;
  longestHoldMs: number;
}

/**
 * A sample of an interval in which nothing happened: no counts, no waiter, empty summaries (each
 * its own object, free to be refilled), the given gauges. Its keys are in the wire's order.
 */
export function quietSample(id: string, g: QuietGauges): Sample {
  return {
    id,
    cap: g.cap,
    inUse: g.inUse,
    available: g.available,
    waiters: 0,
    oldestWaitMs: 0,
    acquired: 0,
    released: 0,
    timeouts: 0,
    rejections: 0,
    aborts: 0,
    doubleReleases: 0,
    leaseExpiries: 0,
    waitMs: emptySummary(),
    holdMs: emptySummary(),
    longestHoldMs: g.longestHoldMs,
  };
}

/** Any count, or a waiter (whose age grows every interval). */
export function hasActivity(s: Sample): boolean {
  return (
    s.waiters !== 0 || s.acquired !== 0 || s.released !== 0 || s.timeouts !== 0 || s.rejections !== 0 || s.aborts !== 0 ||
    s.doubleReleases !== 0 || s.leaseExpiries !== 0
  );
}
