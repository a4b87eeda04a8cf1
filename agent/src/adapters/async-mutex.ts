// async-mutex Semaphore (0.5.x; 0.4.x has the same shape without priorities). The semaphore does
// not know its own cap (getValue() is what is free now), so `permits` is required. inUse = permits
// − getValue() and waiters = its queue length: the target's own numbers. acquire() is wrapped on
// the instance (runExclusive goes through it), and each releaser it hands out is wrapped to time
// the hold; async-mutex ignores a second call of a releaser, the adapter counts it.
import { AdapterCore, checkInstrumentOptions, claimTarget, type Failure, type Hold, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape, SemscopeAdapterError } from "./adapter-error.js";

const PKG = "async-mutex";
const UNDERSTANDS = "async-mutex 0.4–0.5 Semaphore";

type Method = (this: unknown, ...args: unknown[]) => unknown;
type Releaser = (this: unknown, ...args: unknown[]) => unknown;

interface MutexSemaphoreLike {
  acquire: Method;
  getValue(): number;
  readonly _queue: unknown[];
}

export function isAsyncMutexSemaphore(target: unknown): boolean {
  if (target === null || typeof target !== "object") return false;
  const t = target as Record<string, unknown>;
  return typeof t.acquire === "function" && typeof t.runExclusive === "function" && typeof t.waitForUnlock === "function" && typeof t.cancel === "function";
}

export function instrumentAsyncMutex(target: object, options: InstrumentOptions): InstrumentHandle {
  const t = target as Record<string, unknown>;
  if (typeof t.getValue !== "function") {
    throw new SemscopeAdapterError(PKG, "this looks like an async-mutex Mutex: instrument a Semaphore (a Mutex is new Semaphore(1) with a different API)", UNDERSTANDS);
  }
  if (!Array.isArray(t._queue)) {
    throw new SemscopeAdapterError(PKG, "no waiter queue found: a withTimeout()/tryAcquire() decorator, or an unknown version; instrument the Semaphore itself", UNDERSTANDS);
  }
  requireShape(PKG, UNDERSTANDS, target, { acquire: "function", release: "function", runExclusive: "function", getValue: "function", setValue: "function", cancel: "function" });
  const sem = target as MutexSemaphoreLike;
  requirePatchable(PKG, UNDERSTANDS, target, ["acquire"]);
  const o = checkInstrumentOptions(PKG, options);
  if (o.permits === undefined) {
    throw new TypeError(`instrument(${PKG}) "${o.name}": permits is required (an async-mutex Semaphore cannot tell its own cap; pass the number you constructed it with)`);
  }
  const cap = o.permits;
  claimTarget(PKG, target);
  const own = sem.acquire;
  let unpatch: () => void = () => undefined;

  const core = new AdapterCore(o, {
    kind: "async-mutex",
    // Priority order, FIFO among equals (0.5); with no priorities given, plain FIFO.
    queue: "priority",
    blind: [],
    maxWaiters: null,
    acquireTimeoutMs: null,
    gauges: () => ({ cap, inUse: cap - sem.getValue(), waiters: sem._queue.length }),
    restore: () => {
      unpatch();
      releaseTarget(target);
    },
  });

  const acquire = sameShape(function acquire(this: unknown, ...args: unknown[]): unknown {
    if (!core.tracking || this !== sem) return own.apply(this, args);
    const w = core.startWait(acquire);
    let p: Promise<[number, Releaser]>;
    try {
      p = own.apply(this, args) as Promise<[number, Releaser]>;
    } catch (err) {
      // A bad weight throws synchronously in async-mutex; it still does.
      core.failed(w, "error");
      throw err;
    }
    return p.then(
      (granted) => {
        const weight = args[0];
        const h = core.granted(w, typeof weight === "number" ? weight : 1);
        // async-mutex makes a fresh [value, releaser] per grant: its releaser is swapped in place.
        granted[1] = wrapReleaser(core, h, granted[1]);
        return granted;
      },
      (err: unknown) => {
        core.failed(w, failureOf(err));
        throw err;
      },
    );
  }, own);
  unpatch = patchMethod(sem, "acquire", acquire);
  return core;
}

/**
 * One per grant, so it is built without defineProperty (no sameShape) and as an anonymous function
 * (a named one gets a name-keeping helper call per creation under some bundlers), like
 * async-mutex's own releaser, which takes nothing.
 */
function wrapReleaser(core: AdapterCore, h: Hold, releaser: Releaser): Releaser {
  const box: { fn: Releaser } = { fn: releaser };
  box.fn = function (this: unknown): unknown {
    core.released(h, box.fn);
    return releaser.call(this);
  };
  return box.fn;
}

function failureOf(err: unknown): Failure {
  const m = err instanceof Error ? err.message : "";
  // async-mutex's E_CANCELED (cancel()) and E_TIMEOUT (withTimeout) are plain Errors with these messages.
  if (/request for lock canceled/.test(m)) return "abort";
  if (/timeout while waiting for mutex/.test(m)) return "timeout";
  return "error";
}
