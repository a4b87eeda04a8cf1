// The storage of one history tier: a fixed set of typed-array columns that share one ring index
// (CONVENTIONS.md, "Columnar data, one canvas"). Rows are appended at the head; once `maxPoints`
// rows are held, each append overwrites the oldest. Storage starts small and doubles up to
// `maxPoints`, so a young or short-lived semaphore costs little; growth happens only before the
// first wrap, when the ring is a plain prefix, so it is one `set()` per column and amortized O(1).

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

const INITIAL_POINTS = 64;

/** Bytes one row of `schema` takes. */
export function rowBytes(schema: ColumnSchema): number {
  let n = 0;
  for (const key in schema) {
    const [Type, stride] = schema[key];
    n += Type.BYTES_PER_ELEMENT * stride;
  }
  return n;
}

type ViewType = new (buffer: ArrayBuffer, byteOffset: number, length: number) => Column;

/**
 * Every column of `schema` for `rows` rows, as views into one ArrayBuffer (each column starts on
 * an 8-byte boundary). One backing store per ring rather than one per column: a hub holding
 * 10,000 histories then has tens of thousands of buffers for the garbage collector to track,
 * not over half a million, and a ring's growth is one allocation.
 */
function allocateColumns(schema: ColumnSchema, rows: number): Record<string, Column> {
  let size = 0;
  for (const key in schema) {
    const [Type, stride] = schema[key];
    size += Math.ceil((Type.BYTES_PER_ELEMENT * stride * rows) / 8) * 8;
  }
  const buffer = new ArrayBuffer(size);
  const cols: Record<string, Column> = {};
  let offset = 0;
  for (const key in schema) {
    const [Type, stride] = schema[key];
    cols[key] = new (Type as unknown as ViewType)(buffer, offset, stride * rows);
    offset += Math.ceil((Type.BYTES_PER_ELEMENT * stride * rows) / 8) * 8;
  }
  return cols;
}

export class ColumnRing<S extends TimedSchema> {
  /** The columns. Growth replaces the arrays: read `cols` again after an `append()`. */
  cols: Columns<S>;
  private allocated: number;
  private start = 0;
  private count = 0;
  private overwrote = false;

  /**
   * `spread` (0 ≤ spread < 1): how much larger than `initialPoints` this ring starts, as a fraction
   * of a quarter of it (0: exactly initialPoints). It grows when full, by doubling, so every growth
   * comes that much later. Rings that started together (a hub's semaphores, all first sampled
   * within seconds) would otherwise all double in the same second: at 10,000 semaphores that
   * second allocated and copied ~330 MB and stalled the hub for 1.4 s. Given spread values spread
   * over [0, 1), their growth spreads over a quarter of the rows held, 16 s and more at 1 s
   * samples. Later rather than earlier: growth is never pulled into a semaphore's first minute.
   */
  constructor(
    private readonly schema: S,
    readonly maxPoints: number,
    initialPoints = INITIAL_POINTS,
    spread = 0,
  ) {
    if (!Number.isInteger(maxPoints) || maxPoints < 1) {
      throw new RangeError(`maxPoints must be an integer ≥ 1, got ${maxPoints}`);
    }
    if (!(spread >= 0 && spread < 1)) throw new RangeError(`spread must be in [0, 1), got ${String(spread)}`);
    const initial = Math.max(1, initialPoints);
    this.allocated = Math.min(maxPoints, initial + Math.floor((spread * initial) / 4));
    this.cols = allocateColumns(schema, this.allocated) as Columns<S>;
  }

  /** Rows held (≤ maxPoints). */
  get length(): number {
    return this.count;
  }

  /** Whether a row has ever been overwritten: if not, the ring holds everything appended. */
  get wrapped(): boolean {
    return this.overwrote;
  }

  /** Physical row of logical row i (0 = oldest held). */
  phys(i: number): number {
    const p = this.start + i;
    return p >= this.allocated ? p - this.allocated : p;
  }

  /** Reserves the slot for a new newest row and returns its physical index; the caller fills every column. */
  append(): number {
    if (this.count < this.allocated) return this.phys(this.count++);
    if (this.allocated < this.maxPoints) {
      this.grow();
      return this.count++;
    }
    const p = this.start;
    this.start = p + 1 === this.allocated ? 0 : p + 1;
    this.overwrote = true;
    return p;
  }

  /** Time of logical row i. */
  timeAt(i: number): number {
    return this.cols.t[this.phys(i)];
  }

  /** First logical row with t ≥ x (`strict`: t > x); `length` if none. Rows are ascending in t. */
  search(x: number, strict: boolean): number {
    const t = this.cols.t;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = t[this.phys(mid)];
      if (strict ? v <= x : v < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Bytes of typed-array storage currently allocated (the columns; alignment adds at most 7 B each). */
  bytes(): number {
    let n = 0;
    for (const key in this.cols) n += this.cols[key].byteLength;
    return n;
  }

  private grow(): void {
    // Only reached while the ring has never wrapped (start = 0, rows 0..count-1 in place).
    const next = Math.min(this.maxPoints, this.allocated * 2);
    const cols = this.cols as Record<string, Column>;
    const bigger = allocateColumns(this.schema, next);
    for (const key in this.schema) {
      bigger[key].set(cols[key]);
      cols[key] = bigger[key];
    }
    this.allocated = next;
  }
}
