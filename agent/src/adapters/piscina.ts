// piscina 5.x worker-thread pool. A permit is a task on a thread: cap = maxThreads ×
// concurrentTasksPerWorker, waiters = the pool's own queueSize. run() is wrapped on the instance
// (its wait starts at the call, its hold ends when its promise settles). Piscina keeps its
// threads and the moment a task reaches one private, so the adapter infers it: the tasks given to
// run() and not finished, less those still queued, are on a thread (inUse is that number), and the
// oldest waiting calls are granted up to it, just after each run(), after each finished task and at
// each sample. Piscina mostly takes its queue in order, but a task its balancer could not place
// goes back to the tail (unless stricterFIFO): the counts stay exact, while a wait or run time may
// be matched to another waiting call.
import { AdapterCore, checkInstrumentOptions, claimTarget, type Failure, type Hold, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape, SemscopeAdapterError } from "./adapter-error.js";
import type { Call } from "./call-list.js";

const PKG = "piscina";
const UNDERSTANDS = "piscina 5.x";

type Fn = (this: unknown, ...args: unknown[]) => unknown;

interface PiscinaLike {
  run: Fn;
  readonly queueSize: number;
  readonly options: { maxThreads: number; concurrentTasksPerWorker: number; maxQueue: number; taskQueue?: unknown };
}

export function isPiscina(target: unknown): boolean {
  if (target === null || typeof target !== "object") return false;
  const t = target as Record<string, unknown>;
  return typeof t.run === "function" && typeof t.close === "function" && "queueSize" in t && "threads" in t && "utilization" in t;
}

export function instrumentPiscina(target: object, options: InstrumentOptions): InstrumentHandle {
  requireShape(PKG, UNDERSTANDS, target, { run: "function", close: "function", destroy: "function", queueSize: "number", maxThreads: "number", completed: "number", utilization: "number", options: "object", threads: "object", needsDrain: "boolean" });
  const pool = target as PiscinaLike;
  const { maxThreads, concurrentTasksPerWorker } = pool.options;
  if (!(Number.isFinite(maxThreads) && maxThreads >= 1 && Number.isFinite(concurrentTasksPerWorker) && concurrentTasksPerWorker >= 1)) {
    throw new SemscopeAdapterError(PKG, `maxThreads ${maxThreads} × concurrentTasksPerWorker ${concurrentTasksPerWorker} is not a pool size`, UNDERSTANDS);
  }
  requirePatchable(PKG, UNDERSTANDS, target, ["run"]);
  const o = checkInstrumentOptions(PKG, options);
  claimTarget(PKG, target);
  const cap = maxThreads * concurrentTasksPerWorker;
  const own = pool.run;
  let unpatch: () => void = () => undefined;

  /** run() calls not yet granted, oldest first (from `head`); some may have failed meanwhile. */
  let waiting: Call[] = [];
  let head = 0;
  /** run() calls whose promise has not settled. */
  let inFlight = 0;
  /** Calls granted and not settled. */
  let running = 0;

  const reconcile = (): void => {
    const onThreads = Math.min(cap, inFlight - pool.queueSize);
    while (running < onThreads && head < waiting.length) {
      const c = waiting[head++]!;
      if (c.done) continue;
      core.granted(c);
      running++;
    }
    // Drop the granted prefix now and then, so the array does not grow for the pool's lifetime.
    if (head >= 1024 && head * 2 >= waiting.length) {
      waiting = waiting.slice(head);
      head = 0;
    }
  };

  const core = new AdapterCore(o, {
    kind: "piscina",
    // Its queue is FIFO (see above for the tasks it puts back at the tail).
    queue: "fifo",
    blind: [],
    maxWaiters: Number.isFinite(pool.options.maxQueue) ? pool.options.maxQueue : null,
    acquireTimeoutMs: null,
    gauges: () => {
      reconcile();
      return { cap, inUse: running, waiters: pool.queueSize };
    },
    restore: () => {
      unpatch();
      releaseTarget(target);
    },
  });

  const settled = (c: Call, err: unknown, ok: boolean): void => {
    inFlight--;
    if (c.seq === 0 && !c.done) {
      const why = ok ? undefined : failureOf(err);
      if (why !== undefined) {
        core.failed(c, why);
        reconcile();
        return;
      }
      // It ran, on a thread that picked it up between two looks: granted and released at once.
      core.granted(c);
      running++;
    }
    if (c.seq !== 0 && !c.released) {
      running--;
      core.released(c as Hold, run);
    }
    reconcile();
  };

  const run = sameShape(function run(this: unknown, ...args: unknown[]): unknown {
    if (!core.tracking || this !== pool) return own.apply(this, args);
    const c = core.startWait(run) as Call;
    waiting.push(c);
    inFlight++;
    const p = own.apply(this, args) as Promise<unknown>;
    // The caller's promise settles with piscina's own value or error, one microtask later.
    const derived = p.then(
      (v) => {
        settled(c, undefined, true);
        return v;
      },
      (err: unknown) => {
        settled(c, err, false);
        throw err;
      },
    );
    // After the reaction above when piscina refused the call at once (its promise already
    // rejected), so a refused call is not counted as on a thread.
    queueMicrotask(reconcile);
    return derived;
  }, own);
  unpatch = patchMethod(target, "run", run);
  return core;
}

/** Why a task that never reached a thread ended; undefined for an error the task itself threw. */
function failureOf(err: unknown): Failure | undefined {
  const name = (err as { name?: unknown } | null)?.name;
  const message = err instanceof Error ? err.message : "";
  if (name === "AbortError") return "abort";
  if (/^(Task queue is at limit|No task queue available|Terminating worker thread)/.test(message)) return "rejection";
  // run()'s own argument checks.
  if (/^(options must be an object|\w+ argument must be an? \w+|filename must be provided)/.test(message)) return "error";
  return undefined;
}
