// p-queue 9.x. Gauges are the queue's own: cap = concurrency, inUse = pending (running tasks),
// waiters = size (queued tasks). add() is wrapped on the instance (addAll goes through it): the
// task function is wrapped to see the moment it starts (the end of its wait), and the promise
// add() returns to see its end. A task that hits the queue's own `timeout` frees its slot while
// it may still run: that is a lease expiry, counted as such.
import { AdapterCore, checkInstrumentOptions, claimTarget, type Hold, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape, SemscopeAdapterError } from "./adapter-error.js";

const PKG = "p-queue";
const UNDERSTANDS = "p-queue 9.x";

type Method = (this: unknown, ...args: unknown[]) => unknown;

interface PQueueLike {
  add: Method;
  concurrency: number;
  readonly pending: number;
  readonly size: number;
  timeout?: number;
}

export function isPQueue(target: unknown): boolean {
  if (target === null || typeof target !== "object") return false;
  const t = target as Record<string, unknown>;
  return typeof t.add === "function" && typeof t.addAll === "function" && typeof t.onIdle === "function" && "concurrency" in t;
}

export function instrumentPQueue(target: object, options: InstrumentOptions): InstrumentHandle {
  // runningTasks and isSaturated are 9.x: an 8.x queue has neither.
  requireShape(PKG, UNDERSTANDS, target, { add: "function", addAll: "function", onIdle: "function", clear: "function", concurrency: "number", pending: "number", size: "number", isSaturated: "boolean", runningTasks: "object" });
  const queue = target as PQueueLike;
  if (!Number.isFinite(queue.concurrency)) {
    throw new SemscopeAdapterError(PKG, `concurrency is ${queue.concurrency}: an unbounded queue has no cap to watch`, UNDERSTANDS);
  }
  requirePatchable(PKG, UNDERSTANDS, target, ["add", "clear"]);
  // Its concurrency can be set: it takes an adaptive limit and a replica share (../adjustable-cap.ts).
  const o = checkInstrumentOptions(PKG, options, true);
  claimTarget(PKG, target);
  const own = queue.add;
  const ownClear = (queue as unknown as { clear: Method }).clear;
  const undo: (() => void)[] = [];

  const core = new AdapterCore(o, {
    kind: "p-queue",
    // The default queueClass: highest priority first, FIFO among equals.
    queue: "priority",
    // Rate limits (interval/intervalCap) hold tasks back without a cap: not seen as such.
    blind: [],
    maxWaiters: null,
    acquireTimeoutMs: null,
    leaseTimeoutMs: () => queue.timeout ?? null,
    gauges: () => ({ cap: queue.concurrency, inUse: queue.pending, waiters: queue.size }),
    restore: () => {
      for (const u of undo) u();
      releaseTarget(target);
    },
  });

  const add = sameShape(function add(this: unknown, ...args: unknown[]): unknown {
    const fn = args[0];
    if (!core.tracking || this !== queue || typeof fn !== "function") return own.apply(this, args);
    const w = core.startWait(add);
    let hold: Hold | undefined;
    // Only p-queue calls it (with { signal }): no need to copy fn's shape.
    args[0] = function (this: unknown, ...targs: unknown[]): unknown {
      hold = core.granted(w);
      return (fn as Method).apply(this, targs);
    };
    const p = own.apply(this, args) as Promise<unknown>;
    return p.then(
      (v) => {
        if (hold !== undefined) core.released(hold, add);
        else core.failed(w, "error");
        return v;
      },
      (err: unknown) => {
        if (hold === undefined) core.failed(w, isAbort(err, args[1]) ? "abort" : "error");
        else if (isQueueTimeout(err)) core.expired(hold);
        else core.released(hold, add);
        throw err;
      },
    );
  }, own);
  // clear() drops queued tasks whose promises then never settle: their waits end there.
  const clear = sameShape(function clear(this: unknown, ...args: unknown[]): unknown {
    if (core.tracking && this === queue) core.forgetWaits();
    return ownClear.apply(this, args);
  }, ownClear);
  undo.push(patchMethod(queue, "add", add));
  undo.push(patchMethod(queue, "clear", clear));
  core.adjustCap({
    cap: () => queue.concurrency,
    // p-queue refuses a concurrency of 0, which a rotating replica budget's off turn asks for: it keeps 1.
    setCap: (n) => {
      queue.concurrency = Math.max(1, n);
    },
  });
  return core;
}

/** p-queue's own task timeout (p-timeout's TimeoutError with p-queue's message), not one the task threw. */
function isQueueTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === "TimeoutError" && err.message.startsWith("Task timed out after");
}

function isAbort(err: unknown, options: unknown): boolean {
  const signal = (options as { signal?: AbortSignal } | undefined)?.signal;
  return signal !== undefined && signal.aborted && err === signal.reason;
}
