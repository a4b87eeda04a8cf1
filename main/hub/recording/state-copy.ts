// A deep copy of an object graph that keeps what plain cloning loses: each object's class
// (prototype), shared references and cycles, typed-array views over one buffer. Strings, functions
// and frozen objects are shared, not copied (none can change). Counts roughly the bytes it made,
// for a caller that must bound what it keeps. A copy made to be kept (`pack`) holds its larger
// buffers in chunks, sharing each chunk that did not change since the copy it is told of (`base`)
// and holding none for zeros; a copy of that copy puts them together again.

import { isClassInstance, type BufferRecycler } from "./buffer-recycler.js";

/** Types a copy would silently get wrong (internal state it cannot reach): refused instead. */
const REFUSED = [Promise, WeakMap, WeakSet, WeakRef] as const;

type View = ArrayBufferView & { length?: number };
type ViewConstructor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => ArrayBufferView;

/** Buffers smaller than this are kept as they are: one chunk. */
const PACK_MIN_BYTES = 4096;
/** History rings change a few places at a time: small chunks share most of a ring between copies. */
export const CHUNK_BYTES = 4096;

const ZEROS = new Uint8Array(CHUNK_BYTES);
const isZero = (c: Uint8Array): boolean => Buffer.compare(c, ZEROS.subarray(0, c.length)) === 0;

/** A buffer of a packed copy: its chunks, null for zeros, each shared with the base copy's where equal. */
export class PackedBuffer {
  private constructor(
    readonly chunks: readonly (Uint8Array | null)[],
    readonly byteLength: number,
    readonly shared: boolean,
    /** Bytes of the chunks it holds that its base did not. */
    readonly fresh: number,
  ) {}

  static of(data: Uint8Array, shared: boolean, base?: PackedBuffer): PackedBuffer {
    const same = base !== undefined && base.byteLength === data.byteLength ? base.chunks : undefined;
    const chunks: (Uint8Array | null)[] = [];
    let fresh = 0;
    for (let at = 0; at < data.byteLength; at += CHUNK_BYTES) {
      const c = data.subarray(at, at + CHUNK_BYTES);
      const was = same?.[chunks.length];
      if (was === null ? isZero(c) : was !== undefined && Buffer.compare(was, c) === 0) {
        chunks.push(was as Uint8Array | null);
      } else if (isZero(c)) {
        chunks.push(null);
      } else {
        chunks.push(c.slice());
        fresh += c.length;
      }
    }
    return new PackedBuffer(chunks, data.byteLength, shared, fresh);
  }

  /** Its bytes, in `reuse` when given (a buffer of its length, whatever it holds), else in a new buffer. */
  unpack(reuse?: ArrayBufferLike): ArrayBufferLike {
    const out = reuse ?? (this.shared ? new SharedArrayBuffer(this.byteLength) : new ArrayBuffer(this.byteLength));
    const bytes = new Uint8Array(out);
    this.chunks.forEach((c, i) => {
      if (c !== null) bytes.set(c, i * CHUNK_BYTES);
      else if (reuse !== undefined) bytes.fill(0, i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES);
    });
    return out;
  }
}

/** A typed array over a packed buffer, made again over the unpacked one. */
class PackedView {
  constructor(
    readonly buffer: PackedBuffer,
    readonly type: ViewConstructor,
    readonly byteOffset: number,
    readonly length: number,
  ) {}
}

export class StateCopy {
  /** Estimated bytes of the objects made so far (heap object sizes, approximate), packed buffers aside. */
  bytes = 0;
  /** With `pack`: the buffers packed. */
  readonly packs: PackedBuffer[] = [];
  /** With a recycler: the buffers of the copy (made or recycled), for it to take back with the copy. */
  readonly made: ArrayBufferLike[] = [];
  /** With a recycler: the class instances of the copy it took from the recycler, for it to take back likewise. */
  readonly instances: object[] = [];

  /**
   * `memo` maps an original to its copy: preset it to have a value replaced wherever it is met.
   * `pack`: the larger buffers become PackedBuffers, listed in `packs` (a copy to keep, not to
   * use: copy it again to use it), each sharing what it can with `base`'s packed copy of the same
   * original buffer; `base` then maps each original to this copy's. `recycler`: the copy's
   * buffers are written over buffers it keeps where it has one of the length, not allocated, and
   * its class instances over instances it keeps with the same fields.
   */
  constructor(
    private readonly memo = new Map<unknown, unknown>(),
    private readonly pack = false,
    private readonly base?: WeakMap<ArrayBufferLike, PackedBuffer>,
    private readonly recycler?: BufferRecycler,
  ) {}

  copy<T>(value: T): T {
    return this.any(value) as T;
  }

  /** Copies `source`'s own fields onto `target` (same class): target becomes the copy of source. */
  into<T extends object>(target: T, source: T): T {
    this.memo.set(source, target);
    for (const key of Object.keys(source)) (target as Record<string, unknown>)[key] = this.any((source as Record<string, unknown>)[key]);
    return target;
  }

  private any(v: unknown): unknown {
    if (typeof v === "function") return this.memo.get(v) ?? v;
    if (typeof v !== "object" || v === null) return v;
    const known = this.memo.get(v);
    if (known !== undefined) return known;
    if (Object.isFrozen(v)) return v;
    if (v instanceof PackedBuffer) return this.keep(v, this.ours(v.unpack(this.recycler?.take(v.byteLength, v.shared))), v.byteLength);
    if (v instanceof PackedView) return this.keep(v, new v.type(this.any(v.buffer) as ArrayBufferLike, v.byteOffset, v.length), 64);
    const shared = typeof SharedArrayBuffer === "function" && v instanceof SharedArrayBuffer;
    if (v instanceof ArrayBuffer || shared) {
      const buffer = v as ArrayBufferLike;
      if (this.pack && buffer.byteLength >= PACK_MIN_BYTES) {
        const packed = PackedBuffer.of(new Uint8Array(buffer), shared, this.base?.get(buffer));
        this.base?.set(buffer, packed);
        this.packs.push(packed);
        return this.keep(v, packed, 64 + 8 * packed.chunks.length);
      }
      const out = this.recycler?.take(buffer.byteLength, shared) ?? (shared ? new SharedArrayBuffer(buffer.byteLength) : new ArrayBuffer(buffer.byteLength));
      new Uint8Array(out).set(new Uint8Array(buffer));
      return this.keep(v, this.ours(out), buffer.byteLength);
    }
    if (ArrayBuffer.isView(v)) {
      const buffer = this.any(v.buffer) as ArrayBufferLike | PackedBuffer;
      const view = v as View;
      if (v instanceof DataView) {
        if (buffer instanceof PackedBuffer) throw new TypeError("cannot pack a DataView");
        return this.keep(v, new DataView(buffer, v.byteOffset, v.byteLength), 64);
      }
      const type = v.constructor as ViewConstructor;
      const length = view.length ?? 0;
      return this.keep(v, buffer instanceof PackedBuffer ? new PackedView(buffer, type, v.byteOffset, length) : new type(buffer, v.byteOffset, length), 64);
    }
    if (Array.isArray(v)) {
      // A slice has the original's kind of elements (packed or not, numbers or not): new Array(n)
      // is holey, and code compiled for the original's kind would be thrown away on meeting it.
      const out = (v as unknown[]).slice();
      this.keep(v, out, 16 + 8 * v.length);
      for (let i = 0; i < v.length; i++) out[i] = this.any(v[i]);
      return out;
    }
    if (v instanceof Map) {
      this.plain(v, Map.prototype);
      const out = new Map<unknown, unknown>();
      this.keep(v, out, 32 + 40 * v.size);
      for (const [k, x] of v as Map<unknown, unknown>) out.set(this.any(k), this.any(x));
      return out;
    }
    if (v instanceof Set) {
      this.plain(v, Set.prototype);
      const out = new Set<unknown>();
      this.keep(v, out, 32 + 24 * v.size);
      for (const x of v as Set<unknown>) out.add(this.any(x));
      return out;
    }
    if (v instanceof Date) return this.keep(v, new Date(v.getTime()), 32);
    if (v instanceof RegExp) return v;
    for (const T of REFUSED) if (v instanceof T) throw new TypeError(`cannot copy a ${T.name}`);
    const keys = Object.keys(v);
    const out = (this.recycled(v, keys) ?? Object.create(Object.getPrototypeOf(v) as object | null)) as Record<string, unknown>;
    this.keep(v, out, 16 + 8 * keys.length);
    for (const key of keys) out[key] = this.any((v as Record<string, unknown>)[key]);
    return out;
  }

  /** An instance kept by the recycler to write `v`'s fields over, if it has one like it (see BufferRecycler). */
  private recycled(v: object, keys: readonly string[]): object | undefined {
    if (this.recycler === undefined || !isClassInstance(v)) return undefined;
    const o = this.recycler.takeInstance(Object.getPrototypeOf(v) as object, keys);
    if (o !== undefined) this.instances.push(o);
    return o;
  }

  private ours(b: ArrayBufferLike): ArrayBufferLike {
    if (this.recycler !== undefined) this.made.push(b);
    return b;
  }

  private keep<T>(original: unknown, copy: T, bytes: number): T {
    this.memo.set(original, copy);
    this.bytes += bytes;
    return copy;
  }

  /** A Map or Set subclass may hold state of its own the copy would lose. */
  private plain(v: object, proto: object): void {
    if (Object.getPrototypeOf(v) !== proto) throw new TypeError(`cannot copy a ${v.constructor.name}`);
  }
}

/**
 * Maps each closure found in `saved` to the one at the same place in `fresh` (an object built by
 * the same constructor): a copy of `saved` made with these acts on its own state, not saved's.
 */
export function pairClosures(saved: object, fresh: object, out = new Map<unknown, unknown>(), seen = new Set<object>()): Map<unknown, unknown> {
  if (seen.has(saved)) return out;
  seen.add(saved);
  for (const key of Object.keys(saved)) {
    const a = (saved as Record<string, unknown>)[key];
    const b = (fresh as Record<string, unknown>)[key];
    if (typeof a === "function" && typeof b === "function") {
      if (a !== b) out.set(a, b);
    } else if (isRecord(a) && isRecord(b)) {
      pairClosures(a, b, out, seen);
    }
  }
  return out;
}

function isRecord(v: unknown): v is object {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof Map) && !(v instanceof Set) && !(v instanceof ArrayBuffer);
}
