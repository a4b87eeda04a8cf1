// A replay's restore points: copies of its core's whole state, taken at block starts as the
// recording is first read (replay-session.ts), so a seek can restore the nearest one at or before
// its time and feed only the lines after it, not the recording from its first line. A point holds
// its core's buffers (the history rings, most of its bytes) in chunks shared with the point before
// wherever they did not change (state-copy.ts), so a point costs about what changed since the last,
// and a restore copies chunks, no more. Points are spaced by blocks of lines (what a seek then
// feeds), about maxCheckpoints over the whole file as far as the share of the file read so far
// tells; nearer together at the start, each at most half its distance from the first line past the
// one before: a seek there from the first line is short, so only a point close behind it beats it.
// Bounded in count and in bytes: past either, the spacing doubles and the points closer together
// than it (the start's aside) are dropped.
import { performance } from "node:perf_hooks";
import type { HubCore } from "../core/hub-core.js";
import type { BufferRecycler } from "./buffer-recycler.js";
import type { FeedPlace } from "./replay-feed.js";
import { pairClosures, StateCopy, type PackedBuffer } from "./state-copy.js";

/** Where a replay was when a point was taken: the cursor's place and the session's own counters. */
export interface ReplayPlace extends FeedPlace {
  /** The spool block the next line starts (replay-spool.ts). */
  readonly block: number;
  /** The highest recorded time (`r`) of the lines fed: a seek to an earlier time cannot use the point. */
  readonly maxR: number;
}

export interface Checkpoint extends ReplayPlace {
  readonly core: HubCore;
  /** Estimated bytes of its objects, its buffers aside. */
  readonly objects: number;
  readonly packs: readonly PackedBuffer[];
  /** Bytes a restore copies: its objects and its buffers unpacked. */
  readonly size: number;
}

export interface CheckpointLimits {
  /** Points kept at most (0: none, every backward seek feeds from the first line). */
  maxCheckpoints?: number;
  /** Blocks of lines (replay-spool.ts) between points at the least: a short recording needs few. */
  checkpointMinBlocks?: number;
  /** Estimated bytes the points may hold together. */
  maxCheckpointBytes?: number;
}

export const DEFAULT_MAX_CHECKPOINTS = 32;
/** At the default block size, about 1 MiB of recorded text. */
export const DEFAULT_CHECKPOINT_MIN_BLOCKS = 4;
export const DEFAULT_MAX_CHECKPOINT_BYTES = 96 * 1024 * 1024;
/** Near the start, a point is at most this share of its distance from the first line past the one before. */
const START_SPACING = 0.5;

export class ReplayCheckpoints {
  private points: Checkpoint[] = [];
  /** Doubles each time the bounds thin the points. */
  private minBlocks: number;
  /** The least spacing at the start. */
  private readonly startBlocks: number;
  /** A restore's ms per byte of its point: from the copies at first, then from each restore. */
  private msPerByte = 0;
  private restored = false;
  private readonly max: number;
  private readonly maxBytes: number;
  /** The last point's packed copy of each of the core's buffers, for the next to share chunks with. */
  private base = new WeakMap<ArrayBufferLike, PackedBuffer>();
  /** Estimated bytes the points hold together (a chunk shared by several counted once). */
  bytes = 0;

  constructor(limits: CheckpointLimits = {}) {
    this.max = limits.maxCheckpoints ?? DEFAULT_MAX_CHECKPOINTS;
    this.minBlocks = this.max > 0 ? Math.max(1, limits.checkpointMinBlocks ?? DEFAULT_CHECKPOINT_MIN_BLOCKS) : Infinity;
    this.startBlocks = this.minBlocks;
    this.maxBytes = limits.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES;
  }

  get count(): number {
    return this.points.length;
  }

  /**
   * Keeps a copy of `core` at `place` when it is far enough past the last point: `read` (0–1) is
   * the share of the file read so far, for the spacing that gives about maxCheckpoints in all.
   */
  offer(place: ReplayPlace, core: HubCore, read: number): void {
    const expected = place.block / Math.max(read, 1e-6);
    const last = this.points.at(-1)?.block ?? 0;
    if (place.block - last < this.spacing(last, Math.max(this.minBlocks, expected / this.max))) return;
    const copy = new StateCopy(undefined, true, this.base);
    const t0 = performance.now();
    const saved = copy.copy(core);
    const size = copy.packs.reduce((sum, b) => sum + b.byteLength, copy.bytes);
    // A restore copies about as much as the copy did (chunks instead of comparing them).
    if (!this.restored) this.msPerByte = this.rate(this.msPerByte, (performance.now() - t0) / size);
    const point: Checkpoint = { ...place, core: saved, objects: copy.bytes, packs: copy.packs, size };
    this.points.push(point);
    this.bytes += copy.packs.reduce((sum, b) => sum + b.fresh, copy.bytes);
    while (this.points.length > this.max || this.bytes > this.maxBytes) this.thin();
  }

  /** The latest point a replay seeking to `t` can start from (every line it holds is at or before `t`). */
  before(t: number): Checkpoint | undefined {
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.points[mid].maxR <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? undefined : this.points[lo - 1];
  }

  /** Estimated ms to restore `point`. */
  restoreMs(point: Checkpoint): number {
    return point.size * this.msPerByte;
  }

  /** Makes `fresh` (a core built as the saved one was) a copy of the point's core, over `recycler`'s buffers where it has them. */
  restore(point: Checkpoint, fresh: HubCore, recycler?: BufferRecycler): HubCore {
    const t0 = performance.now();
    const copy = new StateCopy(pairClosures(point.core, fresh), false, undefined, recycler);
    const core = copy.into(fresh, point.core);
    recycler?.own(core, copy.made, copy.instances);
    this.msPerByte = this.rate(this.restored ? this.msPerByte : 0, (performance.now() - t0) / point.size);
    this.restored = true;
    return core;
  }

  /** Blocks from a point at `last` to the next: `every`, or less near the start. */
  private spacing(last: number, every: number): number {
    return Math.min(every, Math.max(this.startBlocks, last * START_SPACING));
  }

  /** A running estimate: a single slow measure (a GC, a busy machine) moves it only part way. */
  private rate(was: number, now: number): number {
    return was === 0 ? now : was + (Math.min(now, 4 * was) - was) * 0.3;
  }

  private thin(): void {
    if (this.points.length <= 1) {
      // One point alone is over the bytes: a recording this large seeks from its start.
      this.points = [];
      this.minBlocks = Infinity;
      this.bytes = 0;
      this.base = new WeakMap();
      return;
    }
    const last = this.points.at(-1)?.block ?? 0;
    this.minBlocks = Math.max(this.minBlocks * 2, (2 * last) / this.points.length);
    let prev = 0;
    const kept = this.points.filter((p) => {
      if (p.block - prev < this.spacing(prev, this.minBlocks)) return false;
      prev = p.block;
      return true;
    });
    // Points spaced as the start's alone are over the bounds: every other one goes.
    this.points = kept.length < this.points.length ? kept : this.points.filter((_, i) => i % 2 === 1);
    // What the points left hold: each chunk once, however many share it.
    const chunks = new Set<Uint8Array>();
    this.bytes = 0;
    for (const p of this.points) {
      this.bytes += p.objects;
      for (const b of p.packs) {
        for (const c of b.chunks) {
          if (c === null || chunks.has(c)) continue;
          chunks.add(c);
          this.bytes += c.length;
        }
      }
    }
  }
}
