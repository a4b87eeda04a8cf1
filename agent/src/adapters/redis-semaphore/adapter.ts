// redis-semaphore 5.x: a fleet-wide cap on Redis. A redis-semaphore Semaphore object is one
// holder (one identifier, one permit), so a service makes one per acquire; instrumenting one of
// them instruments every Semaphore of its class on the same Redis key in this process (tryAcquire
// and release are wrapped on the class's prototype; acquire() goes through tryAcquire). The agent
// reports it with scope "global", cap = the global limit and inUse = this process's holders; a
// background read of the sorted set adds the fleet's in-use and holder identifiers (`global`).
//
// Redis down or slow (docs/instrumenting.md, "redis-semaphore"): an acquire waiting on Redis is
// answered within redisTimeoutMs + pollIntervalMs of Redis being found away, never left hanging
// on ioredis's offline queue: onRedisDown "fail" (default) rejects with
// SemscopeRedisUnavailableError; "local" grants from a local cap of localPermits instead.
import { emitEvent } from "../../registry.js";
import type { Sample } from "../../../../shared/protocol/types.js";
import { PAYLOAD_LIMITS } from "../../../../shared/protocol/payload-limits.js";
import {
  AdapterCore,
  checkInstrumentOptions,
  claimTarget,
  patchMethod,
  releaseTarget,
  sameShape,
  type AdapterInfo,
  type CheckedOptions,
  type CoreConfig,
  type Hold,
  type InstrumentHandle,
  type Wait,
} from "../adapter-core.js";
import { SemscopeAdapterError } from "../adapter-error.js";
import { SemscopeRedisUnavailableError } from "./errors.js";
import { LocalCap } from "./local-cap.js";
import { checkRedisOptions, type RedisSemaphoreOptions } from "./options.js";
import { checkRedisSemaphore, PKG, UNDERSTANDS, type RedisSemaphoreLike, type Release, type TryAcquire } from "./shape.js";
import { RedisWatch } from "./watch.js";

interface Held {
  readonly hold: Hold;
  readonly mode: "redis" | "local";
}

/**
 * Permits an instance takes: a MultiSemaphore (a subclass, so its calls reach the patched
 * prototype) on the same key holds `_permits` members `<identifier>_<i>`; a Semaphore one.
 */
function permitsOf(inst: RedisSemaphoreLike): number {
  return inst._kind === "multi-semaphore" && typeof inst._permits === "number" ? inst._permits : 1;
}

interface State {
  readonly cap: number;
  readonly lockTimeoutMs: number;
  readonly onRedisDown: "fail" | "local";
  readonly timeoutMs: number;
  readonly held: Map<RedisSemaphoreLike, Held>;
  /** Permits the held instances hold (a MultiSemaphore holds several). */
  heldPermits: number;
  /** Holders whose lease lapsed (onLockLost); closed in the core when the caller releases. */
  readonly lost: Map<RedisSemaphoreLike, Hold>;
  /** The last hold each instance released: a second release() of it is a double release. */
  readonly releasedHolds: WeakMap<RedisSemaphoreLike, Hold>;
  readonly guarded: WeakSet<RedisSemaphoreLike>;
  readonly local: LocalCap | undefined;
  watch: RedisWatch | undefined;
  pending: number;
  leaseExpiries: number;
  lastLeaseExpiries: number;
  refreshFailures: number;
}

// One patch per prototype, dispatching on the Redis key: instances of other keys pass straight through.
interface ProtoPatch {
  readonly byKey: Map<string, RedisSemaphoreAdapter>;
  unpatch(): void;
}
const PATCHES = new WeakMap<object, ProtoPatch>();

class RedisSemaphoreAdapter extends AdapterCore {
  // Assigned after super(), which registers the adapter: until then the overrides fall back.
  st: State | undefined;

  override describe(): AdapterInfo {
    const base = super.describe();
    return { ...base, scope: "global", leaseTimeoutMs: this.st?.lockTimeoutMs ?? null };
  }

  override sample(): Sample {
    const s = super.sample();
    const st = this.st;
    if (st === undefined) return s;
    s.leaseExpiries = st.leaseExpiries - st.lastLeaseExpiries;
    st.lastLeaseExpiries = st.leaseExpiries;
    const read = st.watch?.fresh;
    if (read !== undefined) {
      const own: string[] = [];
      for (const [inst, h] of st.held) {
        if (own.length >= PAYLOAD_LIMITS.maxGlobalHolders) break;
        if (h.mode !== "redis") continue;
        if (inst._kind !== "multi-semaphore") own.push(inst._identifier);
        else for (let i = 0; i < h.hold.weight && own.length < PAYLOAD_LIMITS.maxGlobalHolders; i++) own.push(`${inst._identifier}_${i}`);
      }
      s.global = { inUse: read.inUse, holders: read.holders.slice(0, PAYLOAD_LIMITS.maxGlobalHolders), own };
    }
    return s;
  }

  /** Redis is up, as far as the watch knows (for tests and a service's health route). */
  get redisUp(): boolean {
    return this.st?.watch?.down !== true;
  }

  async tryAcquire(inst: RedisSemaphoreLike, own: TryAcquire, ownRelease: Release, skip: (...a: never[]) => unknown, signal?: AbortSignal): Promise<boolean> {
    const st = this.st!;
    const watch = st.watch!;
    // An instance already holding (redis-semaphore lets it call again) is left to the library.
    if (st.held.has(inst)) return own.call(inst, signal);
    const w = this.startWait(skip);
    st.pending++;
    try {
      if (watch.down) return await this.whileDown(inst, w, watch.reason, undefined, signal);
      this.guard(inst);
      const attempt = own.call(inst, signal);
      const outcome = await new Promise<{ down: string } | { value: boolean } | { error: unknown }>((resolve) => {
        const off = watch.onDown((reason) => {
          off();
          resolve({ down: reason });
        });
        attempt.then(
          (value) => {
            off();
            resolve({ value });
          },
          (error: unknown) => {
            off();
            resolve({ error });
          },
        );
      });
      if ("down" in outcome) {
        // The library's attempt goes on in the background: a permit it still gets is handed back.
        attempt.then((ok) => (ok ? ownRelease.call(inst).catch(() => undefined) : undefined), () => undefined);
        return await this.whileDown(inst, w, outcome.down, undefined, signal);
      }
      if ("error" in outcome) {
        if (signal?.aborted === true) {
          this.failed(w, "abort");
          throw outcome.error;
        }
        const reason = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
        watch.suspect(reason);
        return await this.whileDown(inst, w, reason, outcome.error, signal);
      }
      if (!outcome.value) {
        this.failed(w, "timeout");
        return false;
      }
      this.hold(inst, w, "redis");
      return true;
    } finally {
      st.pending--;
    }
  }

  private async whileDown(inst: RedisSemaphoreLike, w: Wait, reason: string, cause: unknown, signal?: AbortSignal): Promise<boolean> {
    const st = this.st!;
    if (st.local === undefined) {
      this.failed(w, "rejection");
      throw new SemscopeRedisUnavailableError(this.name, reason, cause === undefined ? undefined : { cause });
    }
    let ok: boolean;
    try {
      ok = await st.local.acquire(inst._acquireOptions.acquireTimeout, signal, permitsOf(inst));
    } catch (err) {
      this.failed(w, "abort");
      throw err;
    }
    if (!ok) {
      this.failed(w, "timeout");
      return false;
    }
    this.hold(inst, w, "local");
    return true;
  }

  private hold(inst: RedisSemaphoreLike, w: Wait, mode: Held["mode"]): void {
    const st = this.st!;
    const hold = this.granted(w, permitsOf(inst));
    st.held.set(inst, { hold, mode });
    st.heldPermits += hold.weight;
  }

  private unhold(inst: RedisSemaphoreLike, h: Held): void {
    const st = this.st!;
    st.held.delete(inst);
    st.heldPermits -= h.hold.weight;
  }

  release(inst: RedisSemaphoreLike, own: Release, skip: (...a: never[]) => unknown): Promise<void> {
    const st = this.st!;
    const h = st.held.get(inst);
    if (h === undefined) {
      const lost = st.lost.get(inst);
      if (lost !== undefined) {
        st.lost.delete(inst);
        this.released(lost, skip);
        st.releasedHolds.set(inst, lost);
      } else {
        // redis-semaphore ignores a second release(); the core counts it (and reports its stack).
        const prev = st.releasedHolds.get(inst);
        if (prev !== undefined) this.released(prev, skip);
      }
      return own.call(inst);
    }
    this.unhold(inst, h);
    st.releasedHolds.set(inst, h.hold);
    this.released(h.hold, skip);
    if (h.mode === "local") {
      st.local?.release(h.hold.weight);
      return Promise.resolve();
    }
    // The library stops the refresh at once, then removes the member. A caller is not kept waiting
    // on a Redis that cannot answer: past the bound the lease is left to lapse on its own (and the
    // removal, if ioredis queued it, lands when Redis is back).
    const removal = own.call(inst);
    return new Promise<void>((resolve, reject) => {
      const bound = setTimeout(() => {
        this.st?.watch?.suspect("release not answered in time");
        resolve();
      }, st.timeoutMs);
      bound.unref?.();
      removal.then(
        () => {
          clearTimeout(bound);
          resolve();
        },
        (err: unknown) => {
          clearTimeout(bound);
          // Redis away: the lease lapses by itself; anything else is the library's to report.
          if (this.st?.watch?.down === true || isConnectionError(err)) resolve();
          else reject(err);
        },
      );
    });
  }

  /**
   * Per instance, once, before its first acquire: a refresh that fails because Redis is away would
   * be an unhandled rejection in redis-semaphore's timer (a crash under Node's default); it is
   * counted and the next refresh tries again. A lapsed lease still reaches onLockLost as before.
   */
  private guard(inst: RedisSemaphoreLike): void {
    const st = this.st!;
    if (st.guarded.has(inst)) return;
    st.guarded.add(inst);
    const refresh = inst._processRefresh;
    const lockLost = inst._onLockLost;
    let lostThrew = false;
    const adapterLockLost = (i: RedisSemaphoreLike) => this.lockLost(i);
    inst._onLockLost = function onLockLost(this: unknown, err: Error) {
      adapterLockLost(inst);
      try {
        lockLost.call(this, err);
      } catch (e) {
        lostThrew = true;
        throw e;
      }
    };
    inst._processRefresh = async () => {
      try {
        await refresh();
      } catch (err) {
        if (lostThrew) {
          lostThrew = false;
          throw err;
        }
        const s = this.st;
        if (s !== undefined) s.refreshFailures++;
        s?.watch?.suspect(err instanceof Error ? err.message : String(err));
      }
    };
  }

  private lockLost(inst: RedisSemaphoreLike): void {
    const st = this.st;
    const h = st?.held.get(inst);
    if (st === undefined || h === undefined || !this.tracking) return;
    this.unhold(inst, h);
    st.lost.set(inst, h.hold);
    st.leaseExpiries++;
    emitEvent({
      t: Date.now(),
      id: this.id,
      type: "lease_expired",
      holderId: inst._identifier,
      heldMs: performance.now() - h.hold.grantedAt,
      detail: { kind: "redis-semaphore", lockTimeoutMs: st.lockTimeoutMs },
    });
  }

  /** Refreshes redis-semaphore could not make (Redis away) since instrument(). */
  get refreshFailures(): number {
    return this.st?.refreshFailures ?? 0;
  }
}

function isConnectionError(err: unknown): boolean {
  const m = err instanceof Error ? err.message : "";
  return /Connection is closed|enableOfflineQueue|max retries per request|ECONNREFUSED|ECONNRESET|EPIPE|Command timed out/i.test(m);
}

export type RedisSemaphoreHandle = InstrumentHandle & { readonly redisUp: boolean; readonly refreshFailures: number };

export function instrumentRedisSemaphore(target: unknown, options: RedisSemaphoreOptions): RedisSemaphoreHandle {
  checkRedisSemaphore(target);
  const o: CheckedOptions = checkInstrumentOptions(PKG, options);
  const cap = target._limit;
  if (!Number.isSafeInteger(cap) || cap < 1) throw new SemscopeAdapterError(PKG, `its limit is ${String(cap)}, not a positive integer`, UNDERSTANDS);
  if (o.permits !== undefined && o.permits !== cap) {
    throw new RangeError(`instrument(${PKG}) "${o.name}": permits ${o.permits} differs from the semaphore's own limit ${cap} (leave it out: the limit is read from the semaphore)`);
  }
  const { onRedisDown, localPermits, timeoutMs, intervalMs, reader } = checkRedisOptions(o.name, options, cap, target._client);
  const local = localPermits === undefined ? undefined : new LocalCap(localPermits);
  const proto = Object.getPrototypeOf(target) as object;
  const existing = PATCHES.get(proto);
  if (existing?.byKey.has(target._key) === true) {
    throw new SemscopeAdapterError(PKG, `Redis key "${target._key}" is already instrumented in this process; untrack() the first handle before instrumenting it again`);
  }
  claimTarget(PKG, target);

  const st: State = {
    cap,
    lockTimeoutMs: target._acquireOptions.lockTimeout,
    onRedisDown,
    timeoutMs,
    held: new Map(),
    heldPermits: 0,
    lost: new Map(),
    releasedHolds: new WeakMap(),
    guarded: new WeakSet(),
    local,
    watch: undefined,
    pending: 0,
    leaseExpiries: 0,
    lastLeaseExpiries: 0,
    refreshFailures: 0,
  };
  const key = target._key;
  const cfg: CoreConfig = {
    kind: "redis-semaphore",
    // No queue: redis-semaphore polls Redis every retryInterval, so who gets a freed permit is a race.
    queue: "unknown",
    blind: ["queue"],
    maxWaiters: null,
    acquireTimeoutMs: target._acquireOptions.acquireTimeout,
    gauges: () => ({ cap, inUse: st.heldPermits, waiters: st.pending }),
    restore: () => {
      st.watch?.stop();
      const patch = PATCHES.get(proto);
      if (patch !== undefined && patch.byKey.get(key) === adapter) {
        patch.byKey.delete(key);
        if (patch.byKey.size === 0) {
          patch.unpatch();
          PATCHES.delete(proto);
        }
      }
      releaseTarget(target);
    },
  };
  const adapter = new RedisSemaphoreAdapter(o, cfg);
  adapter.st = st;
  st.watch = new RedisWatch({ reader, semClient: target._client, key, lockTimeoutMs: st.lockTimeoutMs, timeoutMs, intervalMs, maxHolders: PAYLOAD_LIMITS.maxGlobalHolders });
  patchPrototype(proto, target).byKey.set(key, adapter);
  st.watch.start();
  return adapter;
}

function patchPrototype(proto: object, sample: RedisSemaphoreLike): ProtoPatch {
  const existing = PATCHES.get(proto);
  if (existing !== undefined) return existing;
  const ownTry = sample.tryAcquire;
  const ownRelease = sample.release;
  const byKey = new Map<string, RedisSemaphoreAdapter>();
  const tryAcquire = sameShape(function tryAcquire(this: RedisSemaphoreLike, abortSignal?: AbortSignal): Promise<boolean> {
    const a = typeof this === "object" && this !== null ? byKey.get(this._key) : undefined;
    if (a === undefined || !a.tracking) return ownTry.call(this, abortSignal);
    return a.tryAcquire(this, ownTry, ownRelease, tryAcquire, abortSignal);
  }, ownTry);
  const release = sameShape(function release(this: RedisSemaphoreLike): Promise<void> {
    const a = typeof this === "object" && this !== null ? byKey.get(this._key) : undefined;
    if (a === undefined || !a.tracking) return ownRelease.call(this);
    return a.release(this, ownRelease, release);
  }, ownRelease);
  const undo = [patchMethod(proto, "tryAcquire", tryAcquire), patchMethod(proto, "release", release)];
  const patch: ProtoPatch = { byKey, unpatch: () => undo.forEach((u) => u()) };
  PATCHES.set(proto, patch);
  return patch;
}
