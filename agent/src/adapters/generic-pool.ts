// generic-pool 3.x Pool. Gauges are the pool's own: cap = max, inUse = borrowed, waiters = pending.
// acquire() is wrapped on the instance to time waits and capture the caller's line; release() and
// destroy() (both end a loan) to time holds. A release or destroy of a resource the adapter saw
// lent and already returned is a double release: counted, and the pool's own rejection
// ("Resource not currently part of this pool") is returned unchanged.
import { AdapterCore, checkInstrumentOptions, claimTarget, type Failure, type Hold, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape } from "./adapter-error.js";

const PKG = "generic-pool";
const UNDERSTANDS = "generic-pool 3.x Pool";

type Method = (this: unknown, ...args: unknown[]) => unknown;

interface GenericPoolLike {
  acquire: Method;
  release: Method;
  destroy: Method;
  readonly max: number;
  readonly borrowed: number;
  readonly pending: number;
  isBorrowedResource(resource: unknown): boolean;
}

export function isGenericPool(target: unknown): boolean {
  if (target === null || typeof target !== "object") return false;
  const t = target as Record<string, unknown>;
  return typeof t.acquire === "function" && typeof t.release === "function" && typeof t.drain === "function" && "spareResourceCapacity" in t;
}

export function instrumentGenericPool(target: object, options: InstrumentOptions): InstrumentHandle {
  requireShape(PKG, UNDERSTANDS, target, { acquire: "function", release: "function", destroy: "function", use: "function", isBorrowedResource: "function", max: "number", borrowed: "number", pending: "number" });
  const pool = target as GenericPoolLike;
  requirePatchable(PKG, UNDERSTANDS, target, ["acquire", "release", "destroy"]);
  const o = checkInstrumentOptions(PKG, options);
  claimTarget(PKG, target);
  const config = (target as { _config?: { acquireTimeoutMillis?: number; maxWaitingClients?: number; priorityRange?: number } })._config;

  const own = { acquire: pool.acquire, release: pool.release, destroy: pool.destroy };
  /** Resources on loan through the adapter (a leaked one stays here: it is what the leak report names). */
  const loans = new Map<unknown, Hold>();
  /** Resources returned through the adapter, to tell a second return from a foreign resource. */
  const returned = new WeakMap<object, Hold>();
  const undo: (() => void)[] = [];

  const core = new AdapterCore(o, {
    kind: "generic-pool",
    // One priority level is plain FIFO; more make it a priority queue.
    queue: (config?.priorityRange ?? 1) > 1 ? "priority" : "fifo",
    blind: [],
    maxWaiters: config?.maxWaitingClients ?? null,
    acquireTimeoutMs: config?.acquireTimeoutMillis ?? null,
    gauges: () => ({ cap: pool.max, inUse: pool.borrowed, waiters: pool.pending }),
    restore: () => {
      for (const u of undo) u();
      loans.clear();
      releaseTarget(target);
    },
  });

  const acquire = sameShape(function acquire(this: unknown, ...args: unknown[]): unknown {
    if (!core.tracking || this !== pool) return own.acquire.apply(this, args);
    const w = core.startWait(acquire);
    const p = own.acquire.apply(this, args) as Promise<unknown>;
    return p.then(
      (resource) => {
        const h = core.granted(w);
        loans.set(resource, h);
        return resource;
      },
      (err: unknown) => {
        core.failed(w, failureOf(err));
        throw err;
      },
    );
  }, own.acquire);

  const endLoan = (method: "release" | "destroy") => {
    const wrapper = sameShape(function (this: unknown, ...args: unknown[]): unknown {
      if (!core.tracking || this !== pool) return own[method].apply(this, args);
      const resource = args[0];
      const h = loans.get(resource);
      if (h !== undefined && pool.isBorrowedResource(resource)) {
        loans.delete(resource);
        core.released(h, wrapper);
        if (resource !== null && typeof resource === "object") returned.set(resource, h);
      } else if (resource !== null && typeof resource === "object" && returned.has(resource) && !pool.isBorrowedResource(resource)) {
        core.doubleRelease(returned.get(resource), wrapper);
      }
      return own[method].apply(this, args);
    }, own[method]);
    return wrapper;
  };

  undo.push(patchMethod(pool, "acquire", acquire));
  undo.push(patchMethod(pool, "release", endLoan("release")));
  undo.push(patchMethod(pool, "destroy", endLoan("destroy")));
  return core;
}

function failureOf(err: unknown): Failure {
  if (err instanceof Error && err.name === "TimeoutError") return "timeout";
  const m = err instanceof Error ? err.message : "";
  if (/max waitingClients count exceeded|pool is draining/.test(m)) return "rejection";
  return "error";
}
