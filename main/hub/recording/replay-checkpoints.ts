// A replay's restore points: copies of its core's whole state, taken at block starts as the
// recording is first read (replay-session.ts), so a seek restores the nearest one at or before its
// time and feeds only the lines after it, not the recording from its first line. Points are spaced
// by blocks of lines (what a seek then feeds), about maxCheckpoints over the whole file as far as
// the share of the file read so far tells. Bounded in count and in bytes (each point's larger
// buffers compressed in zlib's thread pool, so opening does not wait for it; at most MAX_PACKING
// points wait for it at once): past either bound every other point is dropped and the spacing doubles.
import type { HubCore } from "../core/hub-core.js";
import { pairClosures, StateCopy, type PackedBuffer } from "./state-copy.js";

/** Where a replay was when a point was taken: the cursor's place and the session's own counters. */
export interface ReplayPlace {
  /** The spool block the next line starts (replay-spool.ts). */
  readonly block: number;
  /** Lines fed before it. */
  readonly position: number;
  /** The session's clock then. */
  readonly clock: number;
  /** The highest recorded time (`r`) of the lines fed: a seek to an earlier time cannot use the point. */
  readonly maxR: number;
  readonly connection: number;
  readonly skip: number;
}

interface Checkpoint extends ReplayPlace {
  readonly core: HubCore;
  /** Estimated bytes of its objects, its buffers aside. */
  readonly objects: number;
  readonly packs: readonly PackedBuffer[];
  packed: boolean;
}

/** Points whose buffers may be compressing at once (each holds a plain copy until done); the next is compressed at once. */
const MAX_PACKING = 2;

const pointBytes = (p: Checkpoint) => p.packs.reduce((sum, b) => sum + b.held, p.objects);

export interface CheckpointLimits {
  /** Points kept at most (0: none, every backward seek feeds from the first line). */
  maxCheckpoints?: number;
  /** Blocks of lines (replay-spool.ts) between points at the least: a short recording needs few. */
  checkpointMinBlocks?: number;
  /** Estimated bytes the points may hold together. */
  maxCheckpointBytes?: number;
}

export const DEFAULT_MAX_CHECKPOINTS = 16;
/** At the default block size, about 1 MiB of recorded text. */
export const DEFAULT_CHECKPOINT_MIN_BLOCKS = 4;
export const DEFAULT_MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024;

export class ReplayCheckpoints {
  private points: Checkpoint[] = [];
  /** Doubles each time the bounds thin the points. */
  private minBlocks: number;
  private readonly max: number;
  private readonly maxBytes: number;
  private packing = 0;
  private pending = new Set<Promise<void>>();

  constructor(limits: CheckpointLimits = {}) {
    this.max = limits.maxCheckpoints ?? DEFAULT_MAX_CHECKPOINTS;
    this.minBlocks = this.max > 0 ? Math.max(1, limits.checkpointMinBlocks ?? DEFAULT_CHECKPOINT_MIN_BLOCKS) : Infinity;
    this.maxBytes = limits.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES;
  }

  get count(): number {
    return this.points.length;
  }

  /** Estimated bytes the compressed points hold. */
  get bytes(): number {
    return this.points.reduce((sum, p) => sum + (p.packed ? pointBytes(p) : 0), 0);
  }

  /** Resolves once every point taken so far is compressed (and the bounds applied). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /**
   * Keeps a copy of `core` at `place` when it is far enough past the last point: `read` (0–1) is
   * the share of the file read so far, for the spacing that gives about maxCheckpoints in all.
   */
  offer(place: ReplayPlace, core: HubCore, read: number): void {
    const expected = place.block / Math.max(read, 1e-6);
    const every = Math.max(this.minBlocks, expected / this.max);
    if (place.block - (this.points.at(-1)?.block ?? 0) < every) return;
    const copy = new StateCopy(undefined, true);
    const point: Checkpoint = { ...place, core: copy.copy(core), objects: copy.bytes, packs: copy.packs, packed: false };
    this.points.push(point);
    while (this.points.length > this.max) this.thin();
    const background = this.packing < MAX_PACKING;
    if (background) this.packing++;
    const packs = Promise.all(point.packs.map((b) => b.pack(background))).then(() => {
      if (background) this.packing--;
      point.packed = true;
      while (this.bytes > this.maxBytes) this.thin();
    });
    this.pending.add(packs);
    void packs.finally(() => this.pending.delete(packs));
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

  /** Makes `fresh` (a core built as the saved one was) a copy of the point's core. */
  restore(point: Checkpoint, fresh: HubCore): HubCore {
    return new StateCopy(pairClosures(point.core, fresh)).into(fresh, point.core);
  }

  private thin(): void {
    if (this.points.length <= 1) {
      // One point alone is over the bytes: a recording this large seeks from its start.
      this.points = [];
      this.minBlocks = Infinity;
      return;
    }
    const last = this.points.at(-1)?.block ?? 0;
    this.points = this.points.filter((_, i) => i % 2 === 1);
    this.minBlocks = Math.max(this.minBlocks * 2, last / Math.max(1, this.points.length));
  }
}
