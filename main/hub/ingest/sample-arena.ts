// Deferred samples batches' items as numbers (StorePipeline.defer), and the few Sample objects they are
// stored from again, reused batch after batch.
//
// Why: a parsed packet held for STORE_DELAY_MS is ~15 objects a sample that every young GC copies.
// Packed into one reused Float64Array it dies at once; Float64 holds every JSON number exactly, and
// nothing the store path reaches keeps an item (test/main/hub/ingest/sample-arena.test.ts holds it to that).
import { quietSample, type Sample, type SamplesBatch, type Summary } from "../../../shared/protocol/index.js";
// An item's numbers are laid out as sample-numbers.ts says, its wait pairs right after them, then its hold pairs.
import { HOLD_AT, PAIRS_AT, readSampleNumbers, WAIT_AT, writeSampleNumbers } from "../../../shared/protocol/sample-numbers.js";

type Pair = [bucket: number, count: number];

/** A reused Sample, its keys in the wire's order (as the parsed packet's), and the pairs its histograms are refilled from. */
interface ReusedSample {
  readonly sample: Sample;
  readonly waitPairs: Pair[];
  readonly holdPairs: Pair[];
}

function newSample(): Sample {
  return quietSample("", { cap: 0, inUse: 0, available: 0, longestHoldMs: 0 });
}

function unpackSummary(v: Float64Array, at: number, pairsAt: number, s: Summary, pairs: Pair[]): number {
  s.count = v[at];
  s.p50 = v[at + 1];
  s.p90 = v[at + 2];
  s.p99 = v[at + 3];
  s.max = v[at + 4];
  const n = v[at + 5];
  const hist = s.hist;
  for (let k = 0; k < n; k++) {
    let pair = pairs[k];
    if (pair === undefined) pairs.push((pair = [0, 0]));
    pair[0] = v[pairsAt++];
    pair[1] = v[pairsAt++];
    hist[k] = pair;
  }
  hist.length = n;
  return pairsAt;
}

/** Items packed since the last reset(), at offsets pack() returned. */
export class SampleArena {
  private v = new Float64Array(1 << 14);
  private used = 0;
  private readonly samples: ReusedSample[] = [];
  private readonly batch: SamplesBatch = { seq: 0, t: 0, intervalMs: 0, items: [] };

  /** Whether pack() takes these items: it packs no item with a `global`, `share`, `limit` or `opening` part (rare, and kept as is). */
  static packable(items: readonly Sample[]): boolean {
    for (let i = 0; i < items.length; i++) {
      const s = items[i];
      if (s.global !== undefined || s.share !== undefined || s.limit !== undefined || s.opening !== undefined) return false;
    }
    return true;
  }

  /** Packs `items` (packable ones); the offset to unpack them from, until the next reset(). */
  pack(items: readonly Sample[]): number {
    let need = 0;
    for (let i = 0; i < items.length; i++) need += PAIRS_AT + 2 * (items[i].waitMs.hist.length + items[i].holdMs.hist.length);
    if (this.used + need > this.v.length) {
      const grown = new Float64Array(Math.max(2 * this.v.length, this.used + need));
      grown.set(this.v.subarray(0, this.used));
      this.v = grown;
    }
    const v = this.v;
    const start = this.used;
    let o = start;
    for (let i = 0; i < items.length; i++) {
      const s = items[i];
      const holdPairsAt = o + PAIRS_AT + 2 * s.waitMs.hist.length;
      writeSampleNumbers(v, o, s, o + PAIRS_AT, holdPairsAt);
      o = holdPairsAt + 2 * s.holdMs.hist.length;
    }
    this.used = o;
    return start;
  }

  /**
   * The batch `header` with its `ids.length` items unpacked from `at` (ids: each item's, in order).
   * Every object of the answer is reused by the next unpack(): store it before that, keep none of it.
   */
  unpack(header: Omit<SamplesBatch, "items">, at: number, ids: readonly { readonly id: string }[]): SamplesBatch {
    const v = this.v;
    const n = ids.length;
    const { samples, batch } = this;
    while (samples.length < n) samples.push({ sample: newSample(), waitPairs: [], holdPairs: [] });
    const items = batch.items;
    let o = at;
    for (let i = 0; i < n; i++) {
      const r = samples[i];
      const s = r.sample;
      s.id = ids[i].id;
      readSampleNumbers(v, o, s);
      o = unpackSummary(v, o + HOLD_AT, unpackSummary(v, o + WAIT_AT, o + PAIRS_AT, s.waitMs, r.waitPairs), s.holdMs, r.holdPairs);
      items[i] = s;
    }
    items.length = n;
    batch.seq = header.seq;
    batch.t = header.t;
    batch.intervalMs = header.intervalMs;
    return batch;
  }

  /** Forgets everything packed: the offsets given so far are void. */
  reset(): void {
    this.used = 0;
  }
}
