// mysql2 3.x Pool (createPool; a promise pool from mysql2/promise is taken for its core pool).
// Gauges are the pool's own: cap = connectionLimit, inUse = all connections − free ones (lent, or
// being opened for a caller), waiters = the queue of callbacks waiting for a connection.
// getConnection() is wrapped on the instance (query(), execute() and the promise API all go
// through it) to time waits and capture the caller's line; releaseConnection(), which every end
// of a loan reaches (conn.release(), conn.destroy(), pool.releaseConnection()), to time holds.
// mysql2 ignores a second conn.release() before the pool reaches it, so each lent connection's
// own release() is wrapped once, to count that second call.
import { AdapterCore, checkInstrumentOptions, claimTarget, type Failure, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape, SemscopeAdapterError } from "./adapter-error.js";
import { Loans } from "./loans.js";

const PKG = "mysql2";
const UNDERSTANDS = "mysql2 3.x Pool (createPool, callback or promise API)";
/** The name of the callbacks the adapter hands to getConnection(), so one handed back to it is not wrapped twice. */
const WRAPPED = "semscopeGotConnection";

type Method = (this: unknown, ...args: unknown[]) => unknown;

interface RingQueueLike {
  readonly length: number;
  get(i: number): unknown;
}

interface ConnectionLike {
  release: Method;
  _released?: boolean;
  _pool?: unknown;
}

interface Mysql2PoolLike {
  getConnection: Method;
  releaseConnection: Method;
  readonly config: { connectionLimit: number; queueLimit?: number; waitForConnections?: boolean };
  readonly _allConnections: RingQueueLike;
  readonly _freeConnections: RingQueueLike;
  readonly _connectionQueue: RingQueueLike;
}

const isObject = (t: unknown): t is Record<string, unknown> => t !== null && typeof t === "object";

/** Looks like a mysql2 core Pool (the version check comes after). */
export function isMysql2Pool(target: unknown): boolean {
  return isObject(target) && typeof target.getConnection === "function" && typeof target.releaseConnection === "function" && "_connectionQueue" in target && "_freeConnections" in target;
}

/** Looks like mysql2/promise's Pool: its core pool is `pool`. */
export function isMysql2PromisePool(target: unknown): boolean {
  return isObject(target) && typeof target.getConnection === "function" && isMysql2Pool(target.pool);
}

export function instrumentMysql2(target: object, options: InstrumentOptions): InstrumentHandle {
  const poolObject = isMysql2PromisePool(target) ? (target as { pool: object }).pool : target;
  requireShape(PKG, UNDERSTANDS, poolObject, { getConnection: "function", releaseConnection: "function", config: "object", _allConnections: "object", _freeConnections: "object", _connectionQueue: "object" });
  const pool = poolObject as Mysql2PoolLike;
  if (typeof pool.config.connectionLimit !== "number" || !(pool.config.connectionLimit >= 1)) {
    throw new SemscopeAdapterError(PKG, `connectionLimit is ${String(pool.config.connectionLimit)}: an unlimited pool has no cap to watch`, UNDERSTANDS);
  }
  requirePatchable(PKG, UNDERSTANDS, poolObject, ["getConnection", "releaseConnection"]);
  const o = checkInstrumentOptions(PKG, options);
  claimTarget(PKG, poolObject);

  const own = { getConnection: pool.getConnection, releaseConnection: pool.releaseConnection };
  const undo: (() => void)[] = [];
  const core = new AdapterCore(o, {
    kind: "mysql2",
    // Waiting callbacks are served with _connectionQueue.shift().
    queue: "fifo",
    blind: [],
    maxWaiters: pool.config.waitForConnections === false ? 0 : pool.config.queueLimit || null,
    acquireTimeoutMs: null,
    gauges: () => ({ cap: pool.config.connectionLimit, inUse: pool._allConnections.length - pool._freeConnections.length, waiters: pool._connectionQueue.length }),
    restore: () => {
      for (const u of undo) u();
      // Connections still in the pool get their own release() back (mysql2's prototype method shows through).
      const all = pool._allConnections;
      for (let i = 0; i < all.length; i++) {
        const c = all.get(i) as ConnectionLike;
        if (Object.prototype.hasOwnProperty.call(c, "release") && c.release === connRelease) delete (c as { release?: unknown }).release;
      }
      loans.clear();
      releaseTarget(poolObject);
    },
  });
  const loans = new Loans(core);

  let ownRelease: Method | undefined;
  // One function for every connection (it reads `this`), put on each connection the first time it is lent.
  const connRelease: Method = function release(this: unknown, ...args: unknown[]): unknown {
    const conn = this as ConnectionLike;
    // Released and not lent again since: mysql2 returns at once; the adapter counts it.
    if (core.tracking && conn._released === true && conn._pool === pool) loans.returned(conn, false, connRelease);
    return (ownRelease as Method).apply(this, args);
  };

  const lend = (conn: ConnectionLike): void => {
    if (conn.release !== connRelease && typeof conn.release === "function") {
      ownRelease ??= conn.release;
      if (conn.release === ownRelease) conn.release = connRelease;
    }
  };

  const getConnection = sameShape(function getConnection(this: unknown, ...args: unknown[]): unknown {
    const cb = args[0];
    if (!core.tracking || this !== pool || typeof cb !== "function" || cb.name === WRAPPED) return own.getConnection.apply(this, args);
    const w = core.startWait(getConnection);
    // Named so that getConnection() can tell it when mysql2 hands it back (a waiter re-queued after its connection was removed).
    args[0] = function semscopeGotConnection(this: unknown, ...a: unknown[]): unknown {
      const err = a[0];
      if (err !== undefined && err !== null) core.failed(w, failureOf(err));
      else {
        const conn = a[1] as ConnectionLike;
        loans.lent(conn, core.granted(w));
        lend(conn);
      }
      return (cb as Method).apply(this, a);
    };
    return own.getConnection.apply(this, args);
  }, own.getConnection);

  const releaseConnection = sameShape(function releaseConnection(this: unknown, ...args: unknown[]): unknown {
    if (core.tracking && this === pool) {
      const conn = args[0] as ConnectionLike | undefined;
      // A connection mysql2 removed from the pool (destroyed, broken) comes here with no _pool: it
      // ends a loan if it was lent, and is never a second release.
      if (conn !== null && typeof conn === "object") loans.returned(conn, !conn._pool || loans.holdOf(conn) !== undefined, releaseConnection);
    }
    return own.releaseConnection.apply(this, args);
  }, own.releaseConnection);

  undo.push(patchMethod(pool, "getConnection", getConnection));
  undo.push(patchMethod(pool, "releaseConnection", releaseConnection));
  return core;
}

function failureOf(err: unknown): Failure {
  const m = err instanceof Error ? err.message : "";
  if (m === "Pool is closed." || m === "No connections available." || m === "Queue limit reached.") return "rejection";
  return "error";
}
