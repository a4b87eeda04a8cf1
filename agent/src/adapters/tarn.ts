// tarn 3.x Pool, the pool inside knex (a knex instance is taken for its `client.pool`). Gauges are
// the pool's own: cap = max, inUse = numUsed() (lent, or being validated for a caller), waiters =
// numPendingAcquires(), and numPendingCreates() as `opening` (in snapshot(); on the wire while above 0). acquire() is wrapped on
// the instance to time waits and capture the caller's line (it returns a PendingOperation whose
// `promise` is replaced by one derived from it); release() to time holds: tarn answers false for a
// resource it does not have on loan, which after a loan the adapter saw end is a double release.
import { AdapterCore, checkInstrumentOptions, claimTarget, type Failure, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape, SemscopeAdapterError } from "./adapter-error.js";
import { carryTransactionStacks, type StackCarry } from "./knex.js";
import { Loans } from "./loans.js";

const PKG = "tarn";
const UNDERSTANDS = "tarn 3.x Pool (knex 0.95 to 3.x)";

interface PendingOperationLike {
  promise: Promise<unknown>;
}

interface TarnPoolLike {
  acquire(): PendingOperationLike;
  release(resource: unknown): boolean;
  numUsed(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  readonly max: number;
  readonly acquireTimeoutMillis: number;
}

const isObject = (t: unknown): t is Record<string, unknown> => t !== null && (typeof t === "object" || typeof t === "function");

/** Looks like a tarn Pool (the version check comes after). */
export function isTarnPool(target: unknown): boolean {
  return isObject(target) && typeof target.acquire === "function" && typeof target.release === "function" && typeof target.numPendingAcquires === "function" && typeof target.numPendingCreates === "function";
}

/** Looks like a knex instance: a function with a `client` that acquires connections. */
export function isKnex(target: unknown): boolean {
  if (typeof target !== "function") return false;
  const t = target as unknown as { client?: unknown; transaction?: unknown };
  return isObject(t.client) && typeof t.client.acquireConnection === "function" && typeof t.transaction === "function";
}

/** A knex instance's pool, refused clearly when it has none (no connection configured yet, or destroyed). */
function poolOf(target: object): object {
  if (!isKnex(target)) return target;
  const pool = (target as { client: { pool?: unknown } }).client.pool;
  if (!isTarnPool(pool)) {
    throw new SemscopeAdapterError("knex", "this knex instance has no tarn pool (no connection configured, destroyed, or an external pool): instrument it once knex has its pool, or instrument the pool itself", UNDERSTANDS);
  }
  return pool as object;
}

export function instrumentTarn(target: object, options: InstrumentOptions): InstrumentHandle {
  const poolObject = poolOf(target);
  requireShape(PKG, UNDERSTANDS, poolObject, { acquire: "function", release: "function", numUsed: "function", numPendingAcquires: "function", numPendingCreates: "function", max: "number", acquireTimeoutMillis: "number" });
  const pool = poolObject as TarnPoolLike;
  requirePatchable(PKG, UNDERSTANDS, poolObject, ["acquire", "release"]);
  const o = checkInstrumentOptions(PKG, options);
  claimTarget(PKG, poolObject);

  const own = { acquire: pool.acquire, release: pool.release };
  const undo: (() => void)[] = [];
  const core = new AdapterCore(o, {
    kind: "tarn",
    // tarn hands resources to waiters with pendingAcquires.shift() (a failed validation puts the waiter back in front).
    queue: "fifo",
    blind: [],
    maxWaiters: null,
    acquireTimeoutMs: pool.acquireTimeoutMillis,
    gauges: () => ({ cap: pool.max, inUse: pool.numUsed(), waiters: pool.numPendingAcquires(), opening: pool.numPendingCreates() }),
    restore: () => {
      for (const u of undo) u();
      loans.clear();
      releaseTarget(poolObject);
    },
  });
  const loans = new Loans(core);
  const carry: StackCarry = { stack: undefined };
  if (poolObject !== target) {
    const client = (target as unknown as { client: object }).client;
    if (typeof (client as { transaction?: unknown }).transaction === "function") undo.push(carryTransactionStacks(client, carry, () => core.tracking && core.stacks));
  }

  const acquire = sameShape(function acquire(this: unknown): unknown {
    if (!core.tracking || this !== pool) return own.acquire.call(this);
    const w = core.startWait(acquire, carry.stack);
    const op = own.acquire.call(this);
    // The caller (knex: `await pool.acquire().promise`) reads `promise` after acquire() returns;
    // tarn's own handlers stay on the promise they were attached to.
    op.promise = loans.follow(op.promise, w, failureOf);
    return op;
  }, own.acquire);

  const release = sameShape(function release(this: unknown, resource: unknown): boolean {
    const ok = own.release.call(this, resource);
    if (core.tracking && this === pool) loans.returned(resource, ok, release);
    return ok;
  }, own.release);

  undo.push(patchMethod(pool, "acquire", acquire));
  undo.push(patchMethod(pool, "release", release));
  return core;
}

function failureOf(err: unknown): Failure {
  // tarn's TimeoutError sets no `name`: its class is what tells it.
  if (err instanceof Error && (err.constructor.name === "TimeoutError" || err.name === "TimeoutError")) return "timeout";
  // Pending acquires refused by pool.destroy().
  if (err instanceof Error && err.message === "aborted") return "rejection";
  return "error";
}
