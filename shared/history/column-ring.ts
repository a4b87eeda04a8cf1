// The storage of one history tier: a fixed set of typed-array columns that share one ring index
// (docs/conventions.md, "Columnar data, one canvas"). Rows are appended at the head; once `maxPoints`
// rows are held, each append overwrites the oldest.
//
// Storage comes in chunks of rows from a RowPool that many rings share, and a ring takes one more
// chunk each time it fills the ones it has, until it holds maxPoints rows: a young or short-lived
// semaphore costs little, and nothing is ever copied or thrown away as a ring grows. (Rings that
// doubled into a new buffer each time did both, and V8 counts every new ArrayBuffer as external
// memory and starts a mark-compact of the whole heap for each 64 MB of it: to hold 1.2 GB, a hub
// whose 10,000 rings grew together allocated ~2.7 GB and copied ~1.3 GB over its first 11 minutes,
// and marked its heap every 5-8 s while they grew.)
// A pool allocates its chunks a slab (~1 MiB) at a time, and its columns are views over each slab,
// so a ring holds no buffer or view of its own, only which chunks are its.

export type Column = Float64Array | Float32Array | Uint16Array | Uint8Array;
export type ColumnType =
  | Float64ArrayConstructor
  | Float32ArrayConstructor
  | Uint16ArrayConstructor
  | Uint8ArrayConstructor;

/** Column name → [element type, values per row]. A stride > 1 holds a small fixed-size record. */
export type ColumnSchema = Readonly<Record<string, readonly [type: ColumnType, stride: number]>>;

/** Every tier has a time column in epoch ms, ascending: it needs all 53 bits, hence Float64. */
export type TimedSchema = ColumnSchema & { readonly t: readonly [Float64ArrayConstructor, 1] };

export type Columns<S extends ColumnSchema> = { -readonly [K in keyof S]: InstanceType<S[K][0]> };

/** Bytes one row of `schema` takes. */
export function rowBytes(schema: ColumnSchema): number {
  let n = 0;
  for (const key in schema) {
    const [Type, stride] = schema[key];
    n += Type.BYTES_PER_ELEMENT * stride;
  }
  return n;
}

/**
 * Rows per chunk for a ring of `maxPoints` rows: about `target`, and dividing maxPoints into equal
 * chunks (900 into 15 of 60) so a full ring wastes at most a few rows.
 */
export function chunkRowsFor(maxPoints: number, target: number): number {
  const chunks = Math.ceil(maxPoints / Math.max(1, target));
  return Math.ceil(maxPoints / chunks);
}

type ViewType = new (buffer: ArrayBuffer, byteOffset: number, length: number) => Column;

/**
 * Every column of `schema` for `rows` rows, as views into one buffer (each column 8-byte aligned):
 * a SharedArrayBuffer when `shared` (see RowPool's `sharedSlabs`).
 */
function allocateColumns(schema: ColumnSchema, rows: number, shared: boolean): Record<string, Column> {
  let size = 0;
  for (const key in schema) {
    const [Type, stride] = schema[key];
    size += Math.ceil((Type.BYTES_PER_ELEMENT * stride * rows) / 8) * 8;
  }
  const buffer = slabBuffer(size, shared);
  const cols: Record<string, Column> = {};
  let offset = 0;
  for (const key in schema) {
    const [Type, stride] = schema[key];
    cols[key] = new (Type as unknown as ViewType)(buffer, offset, stride * rows);
    offset += Math.ceil((Type.BYTES_PER_ELEMENT * stride * rows) / 8) * 8;
  }
  return cols;
}

/**
 * A slab's memory: a SharedArrayBuffer when `shared` (see RowPool's `sharedSlabs`), else an
 * ArrayBuffer. Views over either read and write alike; only ArrayBuffer's own typing lacks
 * SharedArrayBuffer. (A page that is not cross-origin isolated has none.)
 */
export function slabBuffer(bytes: number, shared: boolean): ArrayBuffer {
  return shared && typeof SharedArrayBuffer === "function" ? (new SharedArrayBuffer(bytes) as unknown as ArrayBuffer) : new ArrayBuffer(bytes);
}

/** A slab's share of memory: a pool's slab holds as many chunks as fit in it (at least one). */
export const SLAB_BYTES = 1 << 20;

/**
 * Chunks of `chunkRows` rows of `schema`, handed out to rings and taken back (a history dropped).
 * A chunk is a run of rows in one slab's columns; a chunk given back is handed out again before
 * a new slab is allocated.
 *
 * `sharedSlabs`: slabs are SharedArrayBuffers (where the runtime has them), for a long-lived pool
 * (a running hub's). V8 counts each new ArrayBuffer as this isolate's external memory and marks
 * the whole heap for every 64 MB of it, hoping to free some; a pool's slabs are never freed while
 * it lives, so each of those mark-compacts is work for nothing: a hub of 10,000 semaphores marked
 * its ~95 MB heap every ~40 s for the first 15 minutes, as its rings filled. V8 does not count
 * shared buffers per isolate, so these slabs start none. (Node still reports them in
 * process.memoryUsage().arrayBuffers.) Not for a pool that is dropped and made again often (a
 * replay's, at each backward seek): a dropped pool's slabs are freed only when the heap is next
 * collected for other reasons.
 */
export class RowPool<S extends TimedSchema> {
  readonly rowBytes: number;
  readonly chunksPerSlab: number;
  private readonly slabs: Columns<S>[] = [];
  private readonly free: number[] = [];
  /** Chunks ever carved out of slabs (ids 0..carved-1). */
  private carved = 0;

  constructor(
    readonly schema: S,
    readonly chunkRows: number,
    slabBytes = SLAB_BYTES,
    private readonly sharedSlabs = false,
  ) {
    if (!Number.isInteger(chunkRows) || chunkRows < 1) throw new RangeError(`chunkRows must be an integer ≥ 1, got ${chunkRows}`);
    this.rowBytes = rowBytes(schema);
    this.chunksPerSlab = Math.max(1, Math.floor(slabBytes / (chunkRows * this.rowBytes)));
  }

  /** A chunk's id; its rows start at base(id) in columns(id). */
  take(): number {
    const id = this.free.pop();
    if (id !== undefined) return id;
    if (this.carved === this.slabs.length * this.chunksPerSlab) {
      this.slabs.push(allocateColumns(this.schema, this.chunksPerSlab * this.chunkRows, this.sharedSlabs) as Columns<S>);
    }
    return this.carved++;
  }

  /** Takes a chunk back. Its rows keep their values until handed out again (every row is written before it is read). */
  give(id: number): void {
    this.free.push(id);
  }

  columns(id: number): Columns<S> {
    return this.slabs[Math.floor(id / this.chunksPerSlab)];
  }

  base(id: number): number {
    return (id % this.chunksPerSlab) * this.chunkRows;
  }

  /** Bytes of the slabs allocated, whether their chunks are held or free. */
  bytes(): number {
    return this.slabs.length * this.chunksPerSlab * this.chunkRows * this.rowBytes;
  }

  /** Chunks held by rings now. */
  get held(): number {
    return this.carved - this.free.length;
  }
}

/** A released ring's chunks: none, and none added (a released ring takes no chunk). */
const NO_CHUNKS: number[] = [];

export class ColumnRing<S extends TimedSchema> {
  /**
   * The columns holding the row last located (by append() or locate()): read it right after
   * each, since rows of one ring live in several slabs.
   */
  at: Columns<S>;
  readonly chunkRows: number;
  /**
   * The chunks held, in ring order (their columns and first row come from the pool): one small
   * array per ring, not three, for a history that may hold one chunk all its life.
   */
  private chunkIds: number[] = [];
  private allocated = 0;
  private start = 0;
  private count = 0;
  private overwrote = false;
  /** How many rows before it is needed the next chunk is taken (see the constructor). */
  private readonly lead: number;
  /**
   * Where the next append() writes: its physical row in the ring (0 ≤ nextP < allocated), and
   * that row's chunk's columns and row in them. Kept rather than located on every append: a ring
   * is appended to once a second, with 10,000 others appended to in between, and locating the row
   * read two arrays of chunks (four cold lines) and divided. Located again once a chunk.
   */
  private nextP = 0;
  private nextCols: Columns<S>;
  private nextRow = 0;
  /** The newest row's columns and row in them, while the ring holds any. */
  private newestCols: Columns<S>;
  private newestRow = 0;

  /**
   * `spread` (0 ≤ spread < 1): how early, as a fraction of a chunk, this ring takes its next chunk.
   * Rings that started together (a hub's semaphores, all first sampled within seconds) would
   * otherwise all take a chunk in the same second, every chunk's worth of samples: at 10,000
   * semaphores ~78 MB allocated and zeroed at once. Given spread values spread over [0, 1), those
   * allocations spread over a chunk's worth of samples (a minute at 1 s samples).
   */
  constructor(
    private readonly pool: RowPool<S>,
    readonly maxPoints: number,
    spread = 0,
  ) {
    if (!Number.isInteger(maxPoints) || maxPoints < 1) {
      throw new RangeError(`maxPoints must be an integer ≥ 1, got ${maxPoints}`);
    }
    if (!(spread >= 0 && spread < 1)) throw new RangeError(`spread must be in [0, 1), got ${String(spread)}`);
    this.chunkRows = pool.chunkRows;
    this.lead = Math.floor(spread * this.chunkRows);
    this.takeChunk();
    this.at = this.nextCols = this.newestCols = pool.columns(this.chunkIds[0]);
    this.nextRow = pool.base(this.chunkIds[0]);
  }

  /** Rows held (≤ maxPoints). */
  get length(): number {
    return this.count;
  }

  /** Whether a row has ever been overwritten: if not, the ring holds everything appended. */
  get wrapped(): boolean {
    return this.overwrote;
  }

  /** Row of logical row i (0 = oldest held) in `at`, which this sets. */
  locate(i: number): number {
    let p = this.start + i;
    if (p >= this.allocated) p -= this.allocated;
    const k = Math.floor(p / this.chunkRows);
    const id = this.chunkIds[k];
    this.at = this.pool.columns(id);
    return this.pool.base(id) + p - k * this.chunkRows;
  }

  /**
   * How many logical rows from i on (i included, at most `n`) lie in the same chunk as row i, at
   * consecutive physical rows: after locate(i) returned p, rows i … i + k − 1 are p … p + k − 1.
   * A range read a chunk at a time locates once per chunk, not once per row.
   */
  contiguous(i: number, n: number): number {
    let p = this.start + i;
    if (p >= this.allocated) p -= this.allocated;
    const end = Math.min((Math.floor(p / this.chunkRows) + 1) * this.chunkRows, this.allocated);
    return Math.min(n, end - p);
  }

  /** Reserves the slot for a new newest row and returns it (in `at`, which this sets); the caller fills every column. */
  append(): number {
    if (this.allocated === 0) throw new Error("append() on a released ring");
    const row = this.nextRow;
    this.at = this.newestCols = this.nextCols;
    this.newestRow = row;
    if (this.count < this.allocated) {
      this.count++;
      if (this.count + this.lead >= this.allocated && this.allocated < this.maxPoints) this.takeChunk();
    } else {
      this.start = this.start + 1 === this.allocated ? 0 : this.start + 1;
      this.overwrote = true;
    }
    // Whether it filled a row at the end or overwrote the oldest, the next row is the physical
    // row after this one (the ring grows only before it wraps, and then by chunks at its end).
    const p = this.nextP + 1 === this.allocated ? 0 : this.nextP + 1;
    this.nextP = p;
    if (p % this.chunkRows === 0) {
      const k = p / this.chunkRows;
      const id = this.chunkIds[k];
      this.nextCols = this.pool.columns(id);
      this.nextRow = this.pool.base(id);
    } else {
      this.nextRow = row + 1;
    }
    return row;
  }

  /** Time of the newest row (the ring must hold one): without locating it. */
  newestTime(): number {
    return this.newestCols.t[this.newestRow];
  }

  /** The newest row (the ring must hold one), in `at`, which this sets: without locating it. */
  newest(): number {
    this.at = this.newestCols;
    return this.newestRow;
  }

  /** Time of logical row i. */
  timeAt(i: number): number {
    const row = this.locate(i);
    return this.at.t[row];
  }

  /** First logical row with t ≥ x (`strict`: t > x); `length` if none. Rows are ascending in t. */
  search(x: number, strict: boolean): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.timeAt(mid);
      if (strict ? v <= x : v < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Bytes of the chunks this ring holds. */
  bytes(): number {
    return this.chunkIds.length * this.chunkRows * this.pool.rowBytes;
  }

  /**
   * Gives every chunk back to the pool and holds nothing from then on: a reference kept to the
   * ring reads no rows (not another ring's), and appending to it throws.
   */
  release(): void {
    for (const id of this.chunkIds) this.pool.give(id);
    this.chunkIds = NO_CHUNKS;
    this.allocated = 0;
    this.count = 0;
    this.start = 0;
    this.nextP = 0;
  }

  private takeChunk(): void {
    // Only while the ring has never wrapped (start = 0): the new chunk's rows follow the last held.
    const id = this.pool.take();
    this.chunkIds.push(id);
    this.allocated = Math.min(this.maxPoints, this.allocated + this.chunkRows);
  }
}
