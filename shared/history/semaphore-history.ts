// The history of one semaphore: a 1s tier (the last 15 minutes, one row per sample) and a 1m tier
// (the last 24 hours, one row per minute rolled up from the same samples). Pure: the hub feeds it
// samples with their sample time, the renderer may hold its own copy; no clock is read.
//
// Late and duplicate samples: a sample whose t is not after the last accepted t is ignored by both
// tiers and counted (`ignored`). The hub already drops re-sent batches by (agentId, seq), and an
// agent sends its buffer oldest first, so what still arrives out of order comes from a clock step;
// merging it into the open minute could count a re-send twice, and would make the 1m tier disagree
// with the 1s points it is supposed to sum. A clock stepping backwards therefore pauses the series
// until sample time passes the last accepted t.

import type { Sample, Summary } from "../protocol/types.js";
import { readWindow, type ColumnarWindow, type HistKind, type Tier, type TierReader } from "./columnar-window.js";
import { HistAccumulator } from "./hist-accumulator.js";
import { RowPool } from "./column-ring.js";
import { resolveHistoryOptions, tierChunkRows, type SemaphoreHistoryOptions } from "./history-options.js";
import { MinuteTier, minuteSchema, openMinutePool, type MinuteSchema } from "./minute-tier.js";
import { SecondTier, secondSchema, type SecondSchema } from "./second-tier.js";
import type { SlotPool } from "./slot-pool.js";

/**
 * Where histories of one shape take their storage from: HistoryStore shares one set among all its
 * histories. A new history takes a chunk of each tier and an open minute from them, and allocates
 * no typed array of its own.
 */
export interface HistoryPools {
  /** The shape every history taking from these has. */
  readonly options: Readonly<Required<SemaphoreHistoryOptions>>;
  readonly second: RowPool<SecondSchema>;
  readonly minute: RowPool<MinuteSchema>;
  readonly open: SlotPool;
}

/**
 * Pools for histories of `opts`' shape. `slabBytes`: how much each pool allocates at a time (a
 * store's share ~1 MiB slabs; a history on its own allocates a chunk at a time). `sharedSlabs`:
 * see RowPool.
 */
export function historyPools(opts: Readonly<Required<SemaphoreHistoryOptions>>, slabBytes?: number, sharedSlabs = false): HistoryPools {
  const chunk = tierChunkRows(opts);
  return {
    options: opts,
    second: new RowPool(secondSchema(opts.secondHistBytes), chunk.second, slabBytes, sharedSlabs),
    minute: new RowPool(minuteSchema(opts.minuteHistBytes), chunk.minute, slabBytes, sharedSlabs),
    open: openMinutePool(slabBytes, sharedSlabs),
  };
}

export class SemaphoreHistory {
  readonly options: Readonly<Required<SemaphoreHistoryOptions>>;
  private readonly second: SecondTier;
  private readonly minute: MinuteTier;
  private ignoredCount = 0;
  private released = false;

  /**
   * `growthSpread`: see ColumnRing's `spread` (HistoryStore derives one from the key). `pools`:
   * where its storage comes from, and its shape (`opts` is then not read); without, pools of its
   * own for `opts`, a chunk at a time.
   */
  constructor(opts?: SemaphoreHistoryOptions, growthSpread = 0, pools?: HistoryPools) {
    const p = pools ?? historyPools(resolveHistoryOptions(opts), 0);
    const o = (this.options = p.options);
    this.second = new SecondTier(p.second, o.secondPoints, o.secondHistBytes, growthSpread);
    this.minute = new MinuteTier(p.minute, p.open, o.minutePoints, o.minuteHistBytes, growthSpread);
  }

  /**
   * Records one sample taken at `t` (epoch ms, the end of its interval) over `intervalMs`.
   * Returns false, and stores nothing, when t is not after the last accepted sample's, or once
   * the history is released. O(1): a minute's roll-up is done once, by the first sample of the
   * next minute.
   */
  push(sample: Sample, t: number, intervalMs: number): boolean {
    if (this.released) return false;
    if (!Number.isFinite(t)) throw new RangeError(`t must be a finite epoch ms, got ${String(t)}`);
    if (!(intervalMs > 0) || !Number.isFinite(intervalMs)) {
      throw new RangeError(`intervalMs must be finite and > 0, got ${String(intervalMs)}`);
    }
    // The last accepted t is the 1s tier's newest: read from the row a sample writes next to,
    // rather than kept in a field of its own (a boxed double, one more line to fetch per sample).
    if (t <= this.second.newestT()) {
      this.ignoredCount++;
      return false;
    }
    this.second.append(sample, t, intervalMs);
    this.minute.add(sample, t, intervalMs);
    return true;
  }

  /** Reads what push() will touch, changing nothing (see HistoryStore.warm). */
  warm(): number {
    return this.second.warm() + this.minute.warm();
  }

  /**
   * Points of `tier` with fromT ≤ t ≤ toT, as fresh Float64Arrays (see ColumnarWindow). The 1m
   * tier includes the open minute as a provisional last point (`partialLast`) when its start is in range.
   */
  window(tier: Tier, fromT: number, toT: number): ColumnarWindow {
    return readWindow(this.reader(tier), fromT, toT);
  }

  /**
   * One Summary of wait or hold times over [fromT, toT], percentiles from the merged histogram.
   * Reads the 1s tier when it holds every sample since fromT (per-sample precision), else the 1m
   * tier, where a minute counts if its start lies in the range (a 1 h p99 is the 60 minutes started
   * in that hour).
   */
  mergedSummary(fromT: number, toT: number, kind: HistKind): Summary {
    const acc = new HistAccumulator();
    this.accumulate(acc, fromT, toT, kind);
    return acc.toSummary();
  }

  /** Adds what mergedSummary would merge into `acc` (fleet summaries merge several histories). */
  accumulate(acc: HistAccumulator, fromT: number, toT: number, kind: HistKind): void {
    if (!(fromT <= toT)) return;
    const reader = this.second.covers(fromT) ? this.second : this.minute;
    const [lo, hi] = reader.range(fromT, toT);
    for (let i = lo; i < hi; i++) reader.addHist(i, kind, acc);
  }

  /** Read access to one tier, for fleet merges. */
  reader(tier: Tier): TierReader {
    return tier === "1s" ? this.second : this.minute;
  }

  /**
   * t of the last accepted sample, or null. (The sample itself is the engine's to keep, see
   * SemaphoreTracker.last: one copy of its numbers per semaphore, not two.)
   */
  latestT(): number | null {
    const t = this.second.newestT();
    return t === -Infinity ? null : t;
  }

  /** Samples ignored as late or duplicate. */
  get ignored(): number {
    return this.ignoredCount;
  }

  /**
   * Gives its storage back to its pools (HistoryStore, dropping it): from then on it holds no
   * rows, and push() stores nothing.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.second.release();
    this.minute.release();
  }

  /** Typed-array bytes held; HISTORY_FULL_BYTES (305 416 with the defaults) once both tiers are full. */
  bytes(): number {
    return this.second.bytes() + this.minute.bytes();
  }
}
