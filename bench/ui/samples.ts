// The UI benchmark's synthetic samples: valid wire Samples (docs/protocol.md) whose use moves
// every second, shared by the feeder (live) and run.ts (the pre-filled hour of history).
import { DenseHist, type Summary } from "../../shared/histogram.js";
import type { Sample } from "../../shared/protocol/types.js";

export function summaryOf(median: number, count: number): Summary {
  const h = new DenseHist();
  if (count > 0) {
    h.record(median * 0.7, count * 0.3);
    h.record(median, count * 0.5);
    h.record(median * 2.5, count * 0.2);
  }
  return h.summary();
}

export function sampleOf(id: string, cap: number, i: number, phase: number): Sample {
  const level = 0.5 + 0.45 * Math.sin(i / 20 + phase);
  const inUse = Math.max(0, Math.min(cap, Math.round(cap * level)));
  const waiters = inUse === cap ? 1 + (i % 3) : 0;
  const holdMs = 20 + 10 * Math.sin(i / 7 + phase);
  const released = Math.round(inUse / (holdMs / 1000));
  return {
    id,
    cap,
    inUse,
    available: cap - inUse,
    waiters,
    oldestWaitMs: waiters > 0 ? holdMs : 0,
    acquired: released + (waiters > 0 ? 1 : 0),
    released,
    timeouts: 0,
    rejections: 0,
    aborts: 0,
    doubleReleases: 0,
    leaseExpiries: 0,
    waitMs: summaryOf(waiters > 0 ? holdMs / 2 : 0.02, released),
    holdMs: summaryOf(holdMs, released),
    longestHoldMs: holdMs * 3,
  };
}

