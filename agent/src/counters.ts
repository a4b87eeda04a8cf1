// The counters a Sample reports per interval (SAMPLE_COUNTERS), kept as running totals by the
// Semaphore and by every adapter alike; a sample reports each total's growth since the previous sample.
import { SAMPLE_COUNTERS, type SampleCounter } from "../../shared/protocol/sample-layout.js";
import { emptySummary, type DenseHist, type Summary } from "../../shared/histogram.js";

/** A Semaphore's or an adapter's running totals, one per counter of a Sample. */
export type SemaphoreCounters = Record<SampleCounter, number>;

/** The interval's summary of a histogram made only when something was recorded. */
export function summaryOf(h: DenseHist | null): Summary {
  return h === null ? emptySummary() : h.summary();
}

/** After a sample: an interval that recorded nothing gives its histogram up, any other empties it for the next. */
export function emptiedOrDropped(h: DenseHist | null): DenseHist | null {
  if (h === null || h.count === 0) return null;
  h.reset();
  return h;
}

export function zeroCounters(): SemaphoreCounters {
  return { acquired: 0, released: 0, timeouts: 0, rejections: 0, aborts: 0, doubleReleases: 0, leaseExpiries: 0 };
}

/** What each total grew by since `last`, then `last` catches up: once per sample, never per grant. */
export function takeIntervalCounts(total: Readonly<SemaphoreCounters>, last: SemaphoreCounters): SemaphoreCounters {
  const d: SemaphoreCounters = {
    acquired: total.acquired - last.acquired,
    released: total.released - last.released,
    timeouts: total.timeouts - last.timeouts,
    rejections: total.rejections - last.rejections,
    aborts: total.aborts - last.aborts,
    doubleReleases: total.doubleReleases - last.doubleReleases,
    leaseExpiries: total.leaseExpiries - last.leaseExpiries,
  };
  Object.assign(last, total);
  return d;
}

/** Whether no total has moved since `last` (once per semaphore and interval: a loop is cheap enough). */
export function sameCounts(total: Readonly<SemaphoreCounters>, last: Readonly<SemaphoreCounters>): boolean {
  for (const k of SAMPLE_COUNTERS) if (total[k] !== last[k]) return false;
  return true;
}
