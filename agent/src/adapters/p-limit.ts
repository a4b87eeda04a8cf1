// p-limit 7.x. The limit is a closure: its calls cannot be intercepted in place (its properties
// are non-configurable and its queue is private), so the adapter reads the gauges the function
// exposes (cap = concurrency, inUse = activeCount, waiters = pendingCount) and offers
// `handle.limit`, a drop-in function over the same limit that also times each call. Counts and
// times cover calls made through handle.limit only; calls made on the target itself show in the
// gauges and nowhere else, which is why those fields are listed as blind.
import { AdapterCore, checkInstrumentOptions, claimTarget, type InstrumentHandle, type InstrumentOptions, releaseTarget } from "./adapter-core.js";
import { requireShape } from "./adapter-error.js";

const PKG = "p-limit";
const UNDERSTANDS = "p-limit 7.x";

type Task = (...args: never[]) => unknown;

/** The shape of p-limit's LimitFunction, as far as the adapter uses and offers it. */
export interface LimitLike {
  <A extends unknown[], R>(fn: (...args: A) => R | PromiseLike<R>, ...args: A): Promise<R>;
  readonly activeCount: number;
  readonly pendingCount: number;
  concurrency: number;
  clearQueue(): void;
  map<T, R>(iterable: Iterable<T>, fn: (value: T, index: number) => R | PromiseLike<R>): Promise<R[]>;
}

export interface PLimitHandle extends InstrumentHandle {
  /** Use in place of the target to have each call's wait and run time measured. */
  readonly limit: LimitLike;
}

export function isPLimit(target: unknown): boolean {
  if (typeof target !== "function") return false;
  return "activeCount" in target && "pendingCount" in target;
}

export function instrumentPLimit(target: object, options: InstrumentOptions): PLimitHandle {
  // concurrency (get/set) and clearQueue are what 7.x has and 3.x lacks.
  requireShape(PKG, UNDERSTANDS, target, { activeCount: "number", pendingCount: "number", concurrency: "number", clearQueue: "function", map: "function" });
  const own = target as LimitLike;
  // Its concurrency can be set: it takes an adaptive limit and a replica share (../adjustable-cap.ts).
  const o = checkInstrumentOptions(PKG, options, true);
  claimTarget(PKG, target);

  const core = new AdapterCore(o, {
    kind: "p-limit",
    // yocto-queue: first in, first out.
    queue: "fifo",
    blind: ["acquired", "released", "waitMs", "holdMs", "oldestWaitMs", "longestHoldMs"],
    maxWaiters: null,
    acquireTimeoutMs: null,
    gauges: () => ({ cap: own.concurrency, inUse: own.activeCount, waiters: own.pendingCount }),
    restore: () => releaseTarget(target),
  });

  const limit = function limit(this: unknown, fn: Task, ...args: unknown[]): Promise<unknown> {
    if (!core.tracking || typeof fn !== "function") return (own as unknown as (...a: unknown[]) => Promise<unknown>)(fn, ...args);
    const w = core.startWait(limit);
    let hold: ReturnType<typeof core.granted> | undefined;
    // Only p-limit calls it, with the arguments given to limit(): no need to copy fn's shape (and
    // anonymous: a named function gets a name-keeping helper call per creation under some bundlers).
    args.unshift(function (this: unknown, ...targs: never[]): unknown {
      hold = core.granted(w);
      return fn.apply(this, targs);
    });
    return (own as unknown as (...a: unknown[]) => Promise<unknown>)(...args).then(
      (v) => {
        if (hold !== undefined) core.released(hold, limit);
        return v;
      },
      (err: unknown) => {
        if (hold !== undefined) core.released(hold, limit);
        else core.failed(w, "abort");
        throw err;
      },
    );
  };
  Object.defineProperties(limit, {
    activeCount: { get: () => own.activeCount },
    pendingCount: { get: () => own.pendingCount },
    concurrency: {
      get: () => own.concurrency,
      set: (n: number) => {
        own.concurrency = n;
      },
    },
    clearQueue: {
      value() {
        core.forgetWaits();
        own.clearQueue();
      },
    },
    map: {
      // As p-limit's own: a bad iterable is a rejected promise, and calls already queued before it
      // threw are observed here, so their rejections are not left unhandled.
      async value<T, R>(iterable: Iterable<T>, fn: (value: T, index: number) => R | PromiseLike<R>): Promise<R[]> {
        const calls: Promise<R>[] = [];
        try {
          Array.from(iterable, (v, i) => calls.push(limit(fn as Task, v, i) as Promise<R>));
        } catch (err) {
          for (const c of calls) c.catch(() => undefined);
          throw err;
        }
        return Promise.all(calls);
      },
    },
  });
  Object.defineProperty(core, "limit", { value: limit, enumerable: true });
  core.adjustCap({
    cap: () => own.concurrency,
    // p-limit refuses a concurrency of 0, which a rotating replica budget's off turn asks for: it keeps 1.
    setCap: (n) => {
      own.concurrency = Math.max(1, n);
    },
  });
  return core as AdapterCore & PLimitHandle;
}
