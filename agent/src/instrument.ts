// instrument(target, options): the pools and limiters a service already has, reported like our own
// Semaphore (docs/agent-api.md, "Instrumenting what a service already has"). Recognised by shape, since
// the agent depends on none of these packages; each adapter then checks the shape of the version it
// was written for and refuses anything else with a SemscopeAdapterError.
import type { InstrumentHandle, InstrumentOptions } from "./adapters/adapter-core.js";
import { SemscopeAdapterError } from "./adapters/adapter-error.js";
import { instrumentAsyncMutex, isAsyncMutexSemaphore } from "./adapters/async-mutex.js";
import { instrumentGenericPool, isGenericPool } from "./adapters/generic-pool.js";
import { instrumentPgPool, isPgPool } from "./adapters/pg-pool.js";
import { instrumentPLimit, isPLimit, type PLimitHandle } from "./adapters/p-limit.js";
import { instrumentPQueue, isPQueue } from "./adapters/p-queue.js";
import { instrumentMysql2, isMysql2Pool, isMysql2PromisePool } from "./adapters/mysql2.js";
import { instrumentTarn, isKnex, isTarnPool } from "./adapters/tarn.js";
import { instrumentRedisSemaphore, type RedisSemaphoreHandle } from "./adapters/redis-semaphore/adapter.js";
import type { RedisSemaphoreOptions } from "./adapters/redis-semaphore/options.js";
import { isRedisSemaphore } from "./adapters/redis-semaphore/shape.js";
import { instrumentUndici, isUndiciDispatcher } from "./adapters/undici.js";
import { instrumentBottleneck, isBottleneck, type BottleneckOptions } from "./adapters/bottleneck.js";
import { instrumentPiscina, isPiscina } from "./adapters/piscina.js";

export const SUPPORTED_TARGETS =
  "a node-postgres Pool (pg 8.x), a generic-pool 3.x Pool, a p-limit 7.x limit, a p-queue 9.x queue, an async-mutex Semaphore, a redis-semaphore 5.x Semaphore" +
  ", a tarn 3.x Pool or a knex instance (its tarn pool), a mysql2 3.x Pool (callback or promise)" +
  ", an undici 7.x Pool or Agent, a bottleneck 2.x limiter, a piscina 5.x pool";

/** p-limit's limit function: its handle also carries `limit`, the timed drop-in. */
export function instrument(target: PLimitTarget, options: InstrumentOptions): PLimitHandle;
/** The options beyond InstrumentOptions (redis, onRedisDown, ...) apply to a redis-semaphore Semaphore only. */
export function instrument(target: object, options: RedisSemaphoreOptions): InstrumentHandle | RedisSemaphoreHandle;
export function instrument(target: object, options: RedisSemaphoreOptions): InstrumentHandle {
  if (target === null || (typeof target !== "object" && typeof target !== "function")) {
    throw new SemscopeAdapterError("unknown", `the target must be a pool, limiter or semaphore object, got ${target === null ? "null" : typeof target}; supported: ${SUPPORTED_TARGETS}`);
  }
  // Order matters only where shapes overlap: a pg Pool also has connect/query/end, a generic-pool
  // also has acquire/release, an async-mutex Semaphore also has acquire.
  if (isRedisSemaphore(target)) return instrumentRedisSemaphore(target, options);
  if (isPLimit(target)) return instrumentPLimit(target, options);
  if (isPgPool(target)) return instrumentPgPool(target, options);
  if (isMysql2Pool(target) || isMysql2PromisePool(target)) return instrumentMysql2(target, options);
  if (isTarnPool(target) || isKnex(target)) return instrumentTarn(target, options);
  if (isGenericPool(target)) return instrumentGenericPool(target, options);
  if (isPQueue(target)) return instrumentPQueue(target, options);
  if (isAsyncMutexSemaphore(target)) return instrumentAsyncMutex(target, options);
  if (isUndiciDispatcher(target)) return instrumentUndici(target, options);
  if (isBottleneck(target)) return instrumentBottleneck(target, options as BottleneckOptions);
  if (isPiscina(target)) return instrumentPiscina(target, options);
  throw new SemscopeAdapterError("unknown", `not a target any adapter recognises; supported: ${SUPPORTED_TARGETS}`);
}

/** What p-limit's pLimit() returns, as far as recognising it goes. */
export interface PLimitTarget {
  (...args: never[]): unknown;
  readonly activeCount: number;
  readonly pendingCount: number;
}
