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
/** Marks the callbacks the adapter hands to getConnection(), so one mysql2 hands back to it is not wrapped twice. */
const OURS = Symbol("semscope.gotConnection");

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

/** mysql2 hands a queued callback back to getConnection() when the connection it waited for was removed: it is passed through. */
function ours<F extends (...args: never[]) => unknown>(fn: F): F {
  (fn as { [OURS]?: true })[OURS] = true;
  return fn;
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
  const connRelease: Method = function release(this: unknown): unknown {
    const conn = this as ConnectionLike;
    // Released and not lent again since: mysql2 returns at once; the adapter counts it.
    if (core.tracking && conn._released === true && conn._pool === pool) loans.returned(conn, false, connRelease);
    return (ownRelease as Method).call(this);
  };

  const lend = (conn: ConnectionLike): void => {
    if (conn.release !== connRelease && typeof conn.release === "function") {
      ownRelease ??= conn.release;
      if (conn.release === ownRelease) conn.release = connRelease;
    }
  };

  const getConnection = sameShape(function getConnection(this: unknown, cb: unknown): unknown {
    if (!core.tracking || this !== pool || typeof cb !== "function" || (cb as { [OURS]?: true })[OURS] === true) return own.getConnection.call(this, cb);
    const w = core.startWait(getConnection);
    // Passed inline, so anonymous: a named (or const-bound) function gets a name-keeping helper
    // call per creation under some bundlers.
    return own.getConnection.call(
      this,
      ours(function (this: unknown, err: unknown, conn?: ConnectionLike): unknown {
        if (err !== undefined && err !== null) {
          core.failed(w, failureOf(err));
          // mysql2 calls back with the error alone.
          return arguments.length === 1 ? (cb as Method).call(this, err) : (cb as Method).call(this, err, conn);
        }
        loans.lent(conn, core.granted(w));
        lend(conn as ConnectionLike);
        return (cb as Method).call(this, err, conn);
      }),
    );
  }, own.getConnection);

  const releaseConnection = sameShape(function releaseConnection(this: unknown, conn: unknown): unknown {
    // A connection mysql2 removed from the pool (destroyed, broken) comes here with no _pool: it
    // ends a loan if it was lent, and is never a second release.
    if (core.tracking && this === pool && conn !== null && typeof conn === "object") loans.returned(conn, (conn as ConnectionLike)._pool ? undefined : true, releaseConnection);
    return own.releaseConnection.call(this, conn);
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
