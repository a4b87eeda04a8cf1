// generic-pool 3.x Pool. Gauges are the pool's own: cap = max, inUse = borrowed, waiters = pending.
// acquire() is wrapped on the instance to time waits and capture the caller's line; release() and
// destroy() (both end a loan) to time holds. A release or destroy of a resource the adapter saw
// lent and already returned is a double release: counted, and the pool's own rejection
// ("Resource not currently part of this pool") is returned unchanged.
import { AdapterCore, checkInstrumentOptions, claimTarget, type Failure, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape } from "./adapter-error.js";
import { Loans } from "./loans.js";

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
  const loans = new Loans(core);

  const acquire = sameShape(function acquire(this: unknown, ...args: unknown[]): unknown {
    if (!core.tracking || this !== pool) return own.acquire.apply(this, args);
    const w = core.startWait(acquire);
    return loans.follow(own.acquire.apply(this, args) as Promise<unknown>, w, failureOf);
  }, own.acquire);

  const endLoan = (method: "release" | "destroy") => {
    const wrapper = sameShape(function (this: unknown, ...args: unknown[]): unknown {
      if (!core.tracking || this !== pool) return own[method].apply(this, args);
      loans.returned(args[0], pool.isBorrowedResource(args[0]), wrapper);
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
