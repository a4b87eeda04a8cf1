// bottleneck 2.x. A job holds `weight` of maxConcurrent from the moment the limiter registers it
// (its weight counts in the store's running total, through its minTime delay and its run) until
// the limiter frees it. Gauges are the limiter's own: cap = maxConcurrent, inUse = the local
// store's running weight, waiters = jobs received or queued (counts()). Every schedule(), submit(),
// wrap() and job() call reaches the instance's _receive(job) (wait starts), _run (registered:
// granted) and _free (released); a job dropped (highWater strategies, stop()) or past its
// `expiration` is seen on the job itself. With a Redis datastore the cap is the cluster's: the
// limiter is reported with scope "global", inUse = this process's registered weight, and a
// read-only poll of the cluster's running total and running clients fills `global`
// (bottleneck-redis.ts).
import type { Sample } from "../../../shared/protocol/types.js";
import { AdapterCore, checkInstrumentOptions, claimTarget, type AdapterInfo, type CheckedOptions, type CoreConfig, type Hold, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape } from "./adapter-core.js";
import { requirePatchable, requireShape, SemscopeAdapterError } from "./adapter-error.js";
import { BottleneckClusterWatch, type ClusterClient } from "./bottleneck-redis.js";
import type { Call } from "./call-list.js";
import { packageFrames, startCallerWait } from "./caller-frames.js";

const PKG = "bottleneck";
const UNDERSTANDS = "bottleneck 2.x";
const FRAMES = packageFrames("bottleneck");

type Fn = (this: unknown, ...args: unknown[]) => unknown;
type JobMethod = (this: JobLike, ...args: unknown[]) => unknown;

interface StoreOptions {
  maxConcurrent: number | null;
  reservoir: number | null;
  highWater: number | null;
}

interface JobLike {
  options: { id: string; weight: number; expiration: number | null };
  doDrop: JobMethod;
  doExpire: JobMethod;
  [CALL]?: Call;
}

interface BottleneckLike {
  _receive: Fn;
  _run: Fn;
  _free: Fn;
  readonly id: string;
  readonly datastore: string;
  readonly _store: { storeOptions: StoreOptions; _running?: number; clientId?: string; connection?: { client?: ClusterClient & { defineCommand?: unknown } } };
  counts(): Record<string, number>;
}

/** The call a job's wait and hold are kept on (a symbol: invisible to the job's own code and events). */
const CALL = Symbol("semscope.call");

/** Options beyond InstrumentOptions, for a limiter on a Redis datastore. */
export interface BottleneckOptions extends InstrumentOptions {
  /** How often the cluster's running total is read from Redis (default 1000 ms). */
  pollIntervalMs?: number;
}

export function isBottleneck(target: unknown): boolean {
  if (target === null || typeof target !== "object") return false;
  const t = target as Record<string, unknown>;
  return typeof t.schedule === "function" && typeof t.submit === "function" && typeof t.currentReservoir === "function" && typeof t.counts === "function";
}

class BottleneckAdapter extends AdapterCore {
  watch: BottleneckClusterWatch | undefined;

  override describe(): AdapterInfo {
    const base = super.describe();
    return this.watch === undefined ? base : { ...base, scope: "global" };
  }

  override sample(): Sample {
    const s = super.sample();
    const read = this.watch?.fresh;
    if (read !== undefined) s.global = { inUse: read.inUse, holders: read.holders, own: read.own };
    return s;
  }

  override untrack(): void {
    this.watch?.stop();
    super.untrack();
  }
}

export function instrumentBottleneck(target: object, options: BottleneckOptions): InstrumentHandle {
  requireShape(PKG, UNDERSTANDS, target, { schedule: "function", submit: "function", wrap: "function", counts: "function", queued: "function", _receive: "function", _run: "function", _free: "function", _store: "object", _states: "object" });
  const lim = target as BottleneckLike;
  const store = lim._store;
  if (store.storeOptions === null || typeof store.storeOptions !== "object") throw new SemscopeAdapterError(PKG, "its store has no storeOptions", UNDERSTANDS);
  const clustered = typeof store._running !== "number";
  const clusterClient = clustered ? store.connection?.client : undefined;
  // ioredis (datastore "ioredis", or an IORedisConnection) answers eval() with a promise; node_redis 3 takes callbacks.
  if (clustered && (typeof clusterClient?.eval !== "function" || typeof clusterClient.defineCommand !== "function")) {
    throw new SemscopeAdapterError(PKG, 'a Redis datastore on a client other than ioredis: use datastore "ioredis" (or an IORedisConnection)', UNDERSTANDS);
  }
  const permits = (options as Partial<InstrumentOptions> | null)?.permits;
  const maxConcurrent = store.storeOptions.maxConcurrent;
  if (maxConcurrent !== null && permits !== undefined) {
    throw new SemscopeAdapterError(PKG, `permits is for a limiter without maxConcurrent; this one has maxConcurrent: ${maxConcurrent}`, UNDERSTANDS);
  }
  if (maxConcurrent === null && permits === undefined) {
    throw new SemscopeAdapterError(PKG, "maxConcurrent is unset (no concurrency cap, only rates): pass permits as the cap to report", UNDERSTANDS);
  }
  const pollIntervalMs = options?.pollIntervalMs ?? 1000;
  if (!(Number.isFinite(pollIntervalMs) && pollIntervalMs >= 10)) throw new RangeError(`instrument(bottleneck): pollIntervalMs must be a number of ms >= 10, got ${String(pollIntervalMs)}`);
  requirePatchable(PKG, UNDERSTANDS, target, ["_receive", "_run", "_free"]);
  const o: CheckedOptions = checkInstrumentOptions(PKG, options);
  claimTarget(PKG, target);

  const own = { _receive: lim._receive, _run: lim._run, _free: lim._free };
  const undo: (() => void)[] = [];
  /** Weight registered through the adapter and not yet freed: this process's share of a cluster. */
  let heldWeight = 0;
  // updateSettings() may change maxConcurrent (read live) or unset it (then the last cap stands).
  let lastCap = maxConcurrent ?? o.permits!;
  const cap = (): number => (lastCap = store.storeOptions.maxConcurrent ?? o.permits ?? lastCap);
  const cfg: CoreConfig = {
    kind: "bottleneck",
    // Ten priority levels, FIFO within each (priority 5 by default).
    queue: "priority",
    // Jobs held back by minTime or an empty reservoir wait without the reason being known.
    blind: [],
    maxWaiters: store.storeOptions.highWater,
    acquireTimeoutMs: null,
    gauges: () => {
      const c = lim.counts();
      return { cap: cap(), inUse: clustered ? heldWeight : store._running!, waiters: (c.RECEIVED ?? 0) + (c.QUEUED ?? 0) };
    },
    restore: () => {
      for (const u of undo) u();
      releaseTarget(target);
    },
  };
  const core = new BottleneckAdapter(o, cfg);
  if (clustered) {
    core.watch = new BottleneckClusterWatch({ client: clusterClient!, id: lim.id, clientId: () => store.clientId ?? "", intervalMs: pollIntervalMs });
    core.watch.start();
  }

  const grant = (job: JobLike): void => {
    const c = job[CALL];
    if (c === undefined || c.done) return;
    core.granted(c, job.options.weight);
    heldWeight += job.options.weight;
  };
  const release = (job: JobLike, skip: (...args: never[]) => unknown): void => {
    const c = job[CALL];
    if (c === undefined || !c.done || c.released || c.seq === 0) return;
    heldWeight -= c.weight;
    core.released(c as Hold, skip);
  };

  const receive = sameShape(function _receive(this: unknown, job: unknown): unknown {
    if (!core.tracking || this !== target || job === null || typeof job !== "object") return own._receive.call(this, job);
    const j = job as JobLike;
    const w = startCallerWait(core, receive, FRAMES) as Call;
    j[CALL] = w;
    j.doDrop = trackedDrop;
    if (j.options.expiration != null) j.doExpire = trackedExpire;
    const r = own._receive.call(this, job);
    // false: a job with the same id exists; bottleneck rejects it.
    if (r === false && !w.done) core.failed(w, "rejection");
    return r;
  }, own._receive);
  const run = sameShape(function _run(this: unknown, index: unknown, job: unknown, wait: unknown): unknown {
    if (core.tracking && this === target) grant(job as JobLike);
    return own._run.call(this, index, job, wait);
  }, own._run);
  const free = sameShape(function _free(this: unknown, ...args: unknown[]): unknown {
    if (core.tracking && this === target) release(args[1] as JobLike, free);
    return own._free.apply(this, args);
  }, own._free);

  // Shared by every tracked job (no closure per job); `this` is the job, its own prototype has the original.
  function trackedDrop(this: JobLike, ...args: unknown[]): unknown {
    const dropped = (Object.getPrototypeOf(this) as JobLike).doDrop.apply(this, args);
    const c = this[CALL];
    if (dropped === true && c !== undefined && core.tracking) {
      if (!c.done) core.failed(c, "rejection");
      else release(this, trackedDrop);
    }
    return dropped;
  }
  function trackedExpire(this: JobLike, ...args: unknown[]): unknown {
    const c = this[CALL];
    // The job's slot is freed while its task may still run: a lease expiry, as for p-queue's timeout.
    if (c !== undefined && c.done && !c.released && c.seq !== 0 && core.tracking) {
      heldWeight -= c.weight;
      core.expired(c as Hold);
    }
    return (Object.getPrototypeOf(this) as JobLike).doExpire.apply(this, args);
  }

  undo.push(patchMethod(target, "_receive", receive));
  undo.push(patchMethod(target, "_run", run));
  undo.push(patchMethod(target, "_free", free));
  return core;
}
