// Buffers of a replay's cores that are done with, kept to be written over by the next restore or
// copy (state-copy.ts) instead of allocating new ones: a new ArrayBuffer is zeroed and faulted in
// page by page, and V8 counts it as external memory that starts a mark-compact of the whole heap
// every 64 MB or so, where writing over one in use already is a plain copy. A core holds about a
// thousand buffers, most of them small (an alert rule's window), each an allocation of its own.
/** About two of a long recording's cores (100 semaphores hold ~15 MB of history rings). */
export const DEFAULT_RECYCLE_BYTES = 32 * 1024 * 1024;

const isShared = (b: object): boolean => typeof SharedArrayBuffer === "function" && b instanceof SharedArrayBuffer;

export class BufferRecycler {
  private readonly free = new Map<string, ArrayBufferLike[]>();
  /** Buffers held, so one given twice is held once. */
  private readonly held = new WeakSet<ArrayBufferLike>();
  /** The buffers a copy made for each core it made (see own). */
  private readonly owned = new WeakMap<object, ArrayBufferLike[]>();
  /** Bytes held. */
  bytes = 0;

  constructor(private readonly maxBytes = DEFAULT_RECYCLE_BYTES) {}

  /** Tells that `buffers` are `root`'s own, all it needs given back when done with (no look through it). */
  own(root: object, buffers: ArrayBufferLike[]): void {
    this.owned.set(root, buffers);
  }

  /**
   * Keeps the buffers of `root` (a core nothing reads or writes any more), within maxBytes: those
   * it was told of (own), else every one reachable from it. Frozen objects and functions are
   * passed over: a copy shares those (state-copy.ts), so what they reach may be another core's.
   */
  give(root: object): void {
    const own = this.owned.get(root);
    if (own !== undefined) {
      this.owned.delete(root);
      for (const b of own) this.keep(b);
      return;
    }
    const seen = new Set<object>();
    const stack: unknown[] = [root];
    while (stack.length > 0) {
      const v = stack.pop();
      if (typeof v !== "object" || v === null || seen.has(v) || Object.isFrozen(v)) continue;
      seen.add(v);
      if (v instanceof ArrayBuffer || isShared(v)) {
        this.keep(v as ArrayBufferLike);
      } else if (ArrayBuffer.isView(v)) {
        stack.push(v.buffer);
      } else if (Array.isArray(v)) {
        for (const x of v) stack.push(x);
      } else if (v instanceof Map) {
        for (const [k, x] of v as Map<unknown, unknown>) stack.push(k, x);
      } else if (v instanceof Set) {
        for (const x of v as Set<unknown>) stack.push(x);
      } else {
        for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }

  /** A kept buffer of exactly `byteLength` bytes (its contents whatever they were), or undefined. */
  take(byteLength: number, shared: boolean): ArrayBufferLike | undefined {
    const b = this.free.get(key(byteLength, shared))?.pop();
    if (b === undefined) return undefined;
    this.held.delete(b);
    this.bytes -= b.byteLength;
    return b;
  }

  private keep(b: ArrayBufferLike): void {
    if (b.byteLength === 0 || this.held.has(b) || this.bytes + b.byteLength > this.maxBytes) return;
    const k = key(b.byteLength, isShared(b));
    const list = this.free.get(k) ?? [];
    list.push(b);
    this.free.set(k, list);
    this.held.add(b);
    this.bytes += b.byteLength;
  }
}

const key = (byteLength: number, shared: boolean): string => `${shared ? "s" : "a"}${byteLength}`;
