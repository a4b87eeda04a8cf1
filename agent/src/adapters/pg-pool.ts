// node-postgres Pool (pg 8.x, pg-pool 3.x). Gauges are the pool's own: cap = options.max, inUse =
// totalCount − idleCount (clients checked out, or being opened for a caller), waiters =
// waitingCount. connect() is wrapped on the instance to time waits and capture the caller's line;
// each checked-out client's release() (which the pool assigns afresh per checkout) is wrapped to
// time holds and to count a second release, whose error is the pool's own and is let through.
import { AdapterCore, checkInstrumentOptions, claimTarget, type Failure, type Hold, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape, SemscopeAdapterError } from "./adapter-error.js";

const PKG = "pg";
const UNDERSTANDS = "pg 8.x (pg-pool 3.x) Pool";

type Callback = (err: unknown, client?: PgClientLike, done?: (err?: unknown) => void) => unknown;
type Release = (this: unknown, ...args: unknown[]) => unknown;

interface PgClientLike {
  release: Release;
}

/** One checkout: the client, the pool's release() for it, and the wrapper the caller got. */
interface Checkout {
  fn: Release;
  readonly own: Release;
  readonly client: PgClientLike;
}

interface PgPoolLike {
  connect(cb?: Callback): Promise<PgClientLike> | undefined;
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly ending: boolean;
  readonly options: { max: number; connectionTimeoutMillis?: number };
}

/** Looks like a node-postgres Pool (of any version: the version check comes after). */
export function isPgPool(target: unknown): boolean {
  if (target === null || typeof target !== "object") return false;
  const t = target as Record<string, unknown>;
  return typeof t.connect === "function" && typeof t.query === "function" && "waitingCount" in t && "idleCount" in t;
}

export function instrumentPgPool(target: object, options: InstrumentOptions): InstrumentHandle {
  requireShape(PKG, UNDERSTANDS, target, { connect: "function", query: "function", end: "function", totalCount: "number", idleCount: "number", waitingCount: "number", options: "object", ending: "boolean" });
  const pool = target as PgPoolLike;
  if (typeof pool.options.max !== "number" || !(pool.options.max >= 1)) {
    throw new SemscopeAdapterError(PKG, `options.max is ${String(pool.options.max)}, not a pool size`, UNDERSTANDS);
  }
  requirePatchable(PKG, UNDERSTANDS, target, ["connect"]);
  const o = checkInstrumentOptions(PKG, options);
  claimTarget(PKG, target);

  const original = pool.connect as (this: unknown, ...args: unknown[]) => Promise<PgClientLike> | undefined;
  let unpatch: () => void = () => undefined;

  const core: AdapterCore = new AdapterCore(o, {
    kind: "pg-pool",
    // pg-pool hands clients to waiters with _pendingQueue.shift(): first come, first served.
    queue: "fifo",
    blind: [],
    maxWaiters: null,
    acquireTimeoutMs: pool.options.connectionTimeoutMillis || null,
    gauges: () => ({ cap: pool.options.max, inUse: pool.totalCount - pool.idleCount, waiters: pool.waitingCount }),
    restore: () => {
      unpatch();
      // Clients still checked out get the pool's own release() back (each hold keeps its checkout).
      for (const h of core.holdsNow()) {
        const c = h.ext as Checkout | undefined;
        if (c !== undefined && c.client.release === c.fn) c.client.release = c.own;
      }
      releaseTarget(target);
    },
  });

  const checkedOut = (client: PgClientLike, hold: Hold): Release => {
    const own = client.release;
    // One per checkout, so built without defineProperty (no sameShape) and anonymous (a named
    // function gets a name-keeping helper call per creation under some bundlers), like pg's own
    // release: (err) => …, one parameter, no name.
    // Kept on the hold, not in a Map: a Map entry added and deleted per checkout gets promoted out
    // of the young generation and costs full collections.
    const box: Checkout = { fn: own, own, client };
    box.fn = function (this: unknown, err?: unknown): unknown {
      core.released(hold, box.fn);
      // A second call: pg throws "Release called on client which has already been released to the
      // pool."; counted above, thrown here unchanged.
      return own.call(this, err);
    };
    hold.ext = box;
    client.release = box.fn;
    return box.fn;
  };

  const connect = sameShape(function connect(this: PgPoolLike, ...args: unknown[]): unknown {
    if (!core.tracking) return original.apply(this, args);
    if (this !== pool) return original.apply(this, args);
    if (pool.ending) {
      core.failed(core.startWait(connect), "rejection");
      return original.apply(this, args);
    }
    const w = core.startWait(connect);
    const cb = args[0];
    if (typeof cb === "function") {
      args[0] = function (this: unknown, err: unknown, client?: PgClientLike, done?: (e?: unknown) => void): unknown {
        if (err !== undefined && err !== null) {
          core.failed(w, failureOf(err));
          return (cb as Callback).call(this, err, client, done);
        }
        const release = checkedOut(client as PgClientLike, core.granted(w));
        return (cb as Callback).call(this, err, client, release);
      };
      return original.apply(this, args);
    }
    const p = original.apply(this, args) as Promise<PgClientLike>;
    // The caller's promise settles with the pool's own client or error (same identity); a caller
    // that ignores a rejection still gets an unhandled rejection, as without the adapter.
    return p.then(
      (client) => {
        checkedOut(client, core.granted(w));
        return client;
      },
      (err: unknown) => {
        core.failed(w, failureOf(err));
        throw err;
      },
    );
  }, original);
  unpatch = patchMethod(pool, "connect", connect);
  return core;
}

function failureOf(err: unknown): Failure {
  const m = err instanceof Error ? err.message : "";
  if (/timeout exceeded when trying to connect/.test(m)) return "timeout";
  if (/Cannot use a pool after calling end/.test(m)) return "rejection";
  return "error";
}
