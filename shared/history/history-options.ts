// The shape of a semaphore's history, and what it costs.
//
// Memory per semaphore with the defaults, both tiers full (typed-array storage; what bytes() reports):
//
//   1s tier, 900 rows × 130 B = 117 000 B
//     t Float64 8 · 24 Float32 columns 96 (interval, 6 gauges, 7 counters, 2 × count/p50/p90/p99/max)
//     · 2 packed histograms × 13 B 26
//   1m tier, 1440 rows × 128 B = 184 320 B
//     t Float64 8 · 20 Float32 values 80, row-major (covered ms, cap, inUse mean/max, available min,
//     waiters mean/max, oldestWait max, longestHold max, 7 counter sums, 2 × count/max)
//     · 2 × 3 percentile bucket indices (Uint8) 6 · 2 packed histograms × 17 B 34
//   open minute: 2 dense histograms × 256 × 8 B = 4 096 B
//   total 305 416 B = 298 KiB per semaphore; 1000 semaphores ≈ 291 MiB when all are full.
//
// Per semaphore-hour: 60 minute rows × 128 B = 7.5 KiB of 1m history. The 1s tier is a fixed
// 15-minute window (7.6 KiB per minute of 1 s samples, 114 KiB at most). Rings take their rows a
// chunk at a time up to these sizes (ColumnRing: 60 rows in the 1s tier, 16 in the 1m tier), each
// up to a chunk early by an amount its key decides so that a fleet's rings do not all take one in
// the same second (ColumnRing `spread`): a semaphore holds 14–21 KiB at first, and 52–54 KiB once
// it has reported for 5 minutes.
// Not counted: JS objects (the tiers, their chunk lists, a view of the open minute's slot;
// engine-dependent, ~1 KiB), the open minute's 24 other numbers (192 B), nor what a pool has not
// handed out (HistoryStore.allocatedBytes: at most a slab, ~1 MiB, per tier and for open minutes,
// plus what histories dropped gave back, which the next histories take first).
//
// The packed histogram sizes are the knob (packed-hist.ts): 13 B holds up to 6 buckets exactly or a
// 10-point sketch, 17 B up to 8 buckets or a 14-point sketch. Every closed minute's own p50/p90/p99
// are exact whatever the size (taken from the full merged histogram before packing); the packed
// form only serves merges: ranges, fleets.

import { chunkRowsFor, rowBytes } from "./column-ring.js";
import type { Tier } from "./columnar-window.js";
import { HistAccumulator } from "./hist-accumulator.js";
import { MINUTE_CHUNK_ROWS, minuteSchema } from "./minute-tier.js";
import { MAX_HIST_BYTES, MIN_HIST_BYTES } from "./packed-hist.js";
import { SECOND_CHUNK_ROWS, secondSchema } from "./second-tier.js";

export interface SemaphoreHistoryOptions {
  /** Rows in the 1s tier: 900 (15 min at the default 1 s interval). */
  secondPoints?: number;
  /** Closed minutes in the 1m tier: 1440 (24 h). */
  minutePoints?: number;
  /** Bytes of each packed histogram in a 1s row (5..32): 13. */
  secondHistBytes?: number;
  /** Bytes of each packed histogram in a 1m row (5..32): 17. */
  minuteHistBytes?: number;
}

export const HISTORY_DEFAULTS: Readonly<Required<SemaphoreHistoryOptions>> = Object.freeze({
  secondPoints: 900,
  minutePoints: 1440,
  secondHistBytes: 13,
  minuteHistBytes: 17,
});

function checkInt(name: string, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`${name} must be an integer in ${min}..${max}, got ${String(v)}`);
  }
  return v;
}

export function resolveHistoryOptions(opts: SemaphoreHistoryOptions = {}): Readonly<Required<SemaphoreHistoryOptions>> {
  const o = { ...HISTORY_DEFAULTS, ...opts };
  return Object.freeze({
    secondPoints: checkInt("secondPoints", o.secondPoints, 1, 1 << 24),
    minutePoints: checkInt("minutePoints", o.minutePoints, 1, 1 << 24),
    secondHistBytes: checkInt("secondHistBytes", o.secondHistBytes, MIN_HIST_BYTES, MAX_HIST_BYTES),
    minuteHistBytes: checkInt("minuteHistBytes", o.minuteHistBytes, MIN_HIST_BYTES, MAX_HIST_BYTES),
  });
}

/** Rows per chunk of each tier's rings for histories of `o`'s shape (the pools' and the full size's one answer). */
export function tierChunkRows(o: Readonly<Required<SemaphoreHistoryOptions>>): { second: number; minute: number } {
  return { second: chunkRowsFor(o.secondPoints, SECOND_CHUNK_ROWS), minute: chunkRowsFor(o.minutePoints, MINUTE_CHUNK_ROWS) };
}

/** Rows a full ring holds storage for: maxPoints, rounded up to whole chunks. */
function fullRows(maxPoints: number, chunk: number): number {
  return Math.ceil(maxPoints / chunk) * chunk;
}

/** Bytes bytes() reports once both tiers are full. */
export function historyFullBytes(opts: SemaphoreHistoryOptions = {}): number {
  const o = resolveHistoryOptions(opts);
  const chunk = tierChunkRows(o);
  return (
    fullRows(o.secondPoints, chunk.second) * rowBytes(secondSchema(o.secondHistBytes)) +
    fullRows(o.minutePoints, chunk.minute) * rowBytes(minuteSchema(o.minuteHistBytes)) +
    2 * HistAccumulator.BYTES
  );
}

/** 305 416 B with the defaults (see the table above). */
export const HISTORY_FULL_BYTES = historyFullBytes();

/**
 * The tier a chart spanning `spanMs` should read: "1s" while the 1s tier covers the span
 * (1, 5 and 15 minutes at the default interval), "1m" beyond (1 h, 24 h).
 */
export function pickTier(spanMs: number, intervalMs = 1000, secondPoints = HISTORY_DEFAULTS.secondPoints): Tier {
  return spanMs <= secondPoints * intervalMs ? "1s" : "1m";
}
