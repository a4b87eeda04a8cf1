// Whether a sample says something happened in its interval: what "changed_only" turns on
// (docs/protocol.md). The agent leaves out a semaphore whose sample has no activity and the same
// gauges as the one before; the hub keeps filling in quiet intervals after activity.
import type { Sample } from "./types.js";

/** Any count, or a waiter (whose age grows every interval). */
export function hasActivity(s: Sample): boolean {
  return (
    s.waiters !== 0 || s.acquired !== 0 || s.released !== 0 || s.timeouts !== 0 || s.rejections !== 0 || s.aborts !== 0 ||
    s.doubleReleases !== 0 || s.leaseExpiries !== 0
  );
}
