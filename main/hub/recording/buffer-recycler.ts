// Buffers of a replay's cores that are done with, kept to be written over by the next restore or
// copy (state-copy.ts) instead of allocating new ones: a new ArrayBuffer is zeroed and faulted in
// page by page, and V8 counts it as external memory that starts a mark-compact of the whole heap
// every 64 MB or so, where writing over one in use already is a plain copy. A core holds about a
// thousand buffers, most of them small (an alert rule's window), each an allocation of its own.
// Its class instances are kept too, for a copy to write their fields over: one made by its
// constructor has the hidden class the engine's compiled code expects, where an object made
// from its prototype alone has another, and code meeting both is thrown away and compiled again.
/** About two of a long recording's cores (100 semaphores hold ~15 MB of history rings). */
export const DEFAULT_RECYCLE_BYTES = 32 * 1024 * 1024;
/** Class instances kept at most: about two cores of 1,000 semaphores (~10 each). */
export const DEFAULT_RECYCLE_OBJECTS = 20_000;

const isShared = (b: object): boolean => typeof SharedArrayBuffer === "function" && b instanceof SharedArrayBuffer;

/** An instance of a class of the program's (not a plain object, a collection or a built-in a copy makes otherwise). */
export const isClassInstance = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto !== null && proto !== Object.prototype && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof Map) && !(v instanceof Set) && !(v instanceof Date) && !(v instanceof RegExp) && !(v instanceof ArrayBuffer) && !isShared(v);
};

export class BufferRecycler {
  private readonly free = new Map<string, ArrayBufferLike[]>();
  /** Class instances held, by prototype. */
  private readonly instances = new Map<object, object[]>();
  /** Buffers and instances held, so one given twice is held (and handed out) once. */
  private readonly held = new WeakSet<object>();
  /** The buffers and instances a copy made for each core it made (see own). */
  private readonly owned = new WeakMap<object, { buffers: ArrayBufferLike[]; instances: object[] }>();
  /** Bytes held. */
  bytes = 0;
  /** Class instances held. */
  objects = 0;

  constructor(
    private readonly maxBytes = DEFAULT_RECYCLE_BYTES,
    private readonly maxObjects = DEFAULT_RECYCLE_OBJECTS,
  ) {}

  /** Tells that `buffers` and `instances` are `root`'s own, all it needs given back when done with (no look through it). */
  own(root: object, buffers: ArrayBufferLike[], instances: object[] = []): void {
    this.owned.set(root, { buffers, instances });
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
      for (const b of own.buffers) this.keep(b);
      for (const o of own.instances) this.keepInstance(o);
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
        if (v !== root && isClassInstance(v)) this.keepInstance(v);
        for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }

  /**
   * A kept instance of `proto` whose own fields are `keys`, in that order (what it holds
   * otherwise), or undefined: written over field by field, it keeps its hidden class.
   */
  takeInstance(proto: object, keys: readonly string[]): object | undefined {
    const list = this.instances.get(proto);
    if (list === undefined) return undefined;
    for (let tries = 0; tries < 4 && list.length > 0; tries++) {
      const o = list.pop() as object;
      this.held.delete(o);
      this.objects--;
      if (sameKeys(Object.keys(o), keys)) return o;
    }
    return undefined;
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

  private keepInstance(o: object): void {
    if (this.held.has(o) || this.objects >= this.maxObjects) return;
    const proto = Object.getPrototypeOf(o) as object;
    const list = this.instances.get(proto) ?? [];
    list.push(o);
    this.instances.set(proto, list);
    this.held.add(o);
    this.objects++;
  }
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const key = (byteLength: number, shared: boolean): string => `${shared ? "s" : "a"}${byteLength}`;
