// The redis-semaphore adapter's own options (beyond name, budget and leakThresholdMs), checked
// at instrument() time so a bad one fails at start-up with an error that names it.
import { checkDuration, checkPositiveInt } from "../../options.js";
import type { InstrumentOptions } from "../adapter-core.js";
import { PKG, type RedisClientLike } from "./shape.js";

/** A Redis call slower than this counts as Redis being down. */
export const DEFAULT_REDIS_TIMEOUT_MS = 1000;
/** How often the holder set is read (the hub's global view) and Redis's health checked. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;

export type OnRedisDown = "fail" | "local";

export interface RedisSemaphoreOptions extends InstrumentOptions {
  /** The ioredis client to read the holder set with; default the semaphore's own client. */
  redis?: RedisClientLike;
  /** What an acquire does while Redis is down or slower than redisTimeoutMs. Default "fail". */
  onRedisDown?: OnRedisDown;
  /** With onRedisDown "local": permits this process may grant on its own while Redis is down (≤ the global limit). */
  localPermits?: number;
  redisTimeoutMs?: number;
  pollIntervalMs?: number;
}

export interface CheckedRedisOptions {
  onRedisDown: OnRedisDown;
  localPermits: number | undefined;
  timeoutMs: number;
  intervalMs: number;
  reader: RedisClientLike;
}

export function checkRedisOptions(name: string, options: RedisSemaphoreOptions, cap: number, ownClient: RedisClientLike): CheckedRedisOptions {
  const what = `instrument(${PKG}) "${name}"`;
  const onRedisDown = options.onRedisDown ?? "fail";
  if (onRedisDown !== "fail" && onRedisDown !== "local") {
    throw new TypeError(`${what}: onRedisDown must be "fail" or "local", got ${JSON.stringify(onRedisDown)}`);
  }
  let localPermits: number | undefined;
  if (onRedisDown === "local") {
    if (options.localPermits === undefined) {
      throw new TypeError(`${what}: localPermits is required with onRedisDown "local" (the permits this process may grant on its own while Redis is down)`);
    }
    localPermits = checkPositiveInt(`${what}: localPermits`, options.localPermits);
    if (localPermits > cap) throw new RangeError(`${what}: localPermits ${localPermits} is above the global limit ${cap}`);
  } else if (options.localPermits !== undefined) {
    throw new TypeError(`${what}: localPermits only applies with onRedisDown "local"`);
  }
  const reader = options.redis ?? ownClient;
  if (reader === null || typeof reader !== "object" || typeof reader.eval !== "function") {
    throw new TypeError(`${what}: redis must be an ioredis client (it has no eval())`);
  }
  return {
    onRedisDown,
    localPermits,
    timeoutMs: positive(`${what}: redisTimeoutMs`, options.redisTimeoutMs, DEFAULT_REDIS_TIMEOUT_MS),
    intervalMs: positive(`${what}: pollIntervalMs`, options.pollIntervalMs, DEFAULT_POLL_INTERVAL_MS),
    reader,
  };
}

function positive(what: string, v: unknown, fallback: number): number {
  const d = checkDuration(what, v);
  if (d === undefined) return fallback;
  if (d <= 0) throw new RangeError(`${what} must be > 0, got ${d}`);
  return d;
}
