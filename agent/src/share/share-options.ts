// The options of a budget shared across replicas (docs/agent-api.md, "A budget shared across
// replicas"), checked before anything is built.
import { checkDuration, describe } from "../options.js";
import type { RedisClientLike } from "../adapters/redis-semaphore/shape.js";
import { implicitService } from "../reporter/identity.js";

/** Where the live replicas of a shared budget meet: a Redis the service already runs. */
export interface ShareCoordinator {
  /** An ioredis 5 client (or anything with its eval() and status). */
  redis: RedisClientLike;
  /** The service whose replicas share the budget; default SEMSCOPE_SERVICE, else as connect() names it. Give connect()'s if you give it one. */
  service?: string;
  /** How long a replica stays a member without a heartbeat (default 3000 ms). */
  leaseMs?: number;
  /** How often a replica renews its lease and reads the others (default leaseMs / 3). */
  heartbeatMs?: number;
  /** A heartbeat not answered within this counts as failed (default heartbeatMs). */
  timeoutMs?: number;
  /** With more live replicas than the budget, how long each holds its single permit before passing it on (default 10 × leaseMs, ≥ 2 × leaseMs). */
  turnMs?: number;
  /** Prefix of the Redis key (default "semscope:share:"); the key is `<prefix><service>:<name>`. */
  keyPrefix?: string;
}

export const DEFAULT_LEASE_MS = 3000;
export const DEFAULT_KEY_PREFIX = "semscope:share:";
/** A lease shorter than this would lapse between two heartbeats on a busy event loop. */
const MIN_LEASE_MS = 100;

export interface ShareConfig {
  redis: RedisClientLike;
  key: string;
  leaseMs: number;
  heartbeatMs: number;
  timeoutMs: number;
  turnMs: number;
}

export function checkShareOptions(name: string, share: unknown, coordinator: unknown, budget: number | undefined): ShareConfig | undefined {
  if (share === undefined) {
    if (coordinator !== undefined) throw new TypeError(`Semaphore "${name}": coordinator is for share: "replicas"; set share too`);
    return undefined;
  }
  if (share !== "replicas") throw new RangeError(`Semaphore "${name}": share must be "replicas", got ${describe(share)}`);
  if (budget === undefined) throw new TypeError(`Semaphore "${name}": share: "replicas" divides a budget; set budget too`);
  if (coordinator === null || typeof coordinator !== "object") {
    throw new TypeError(`Semaphore "${name}": share: "replicas" needs a coordinator ({ redis }), got ${describe(coordinator)}`);
  }
  const c = coordinator as Partial<ShareCoordinator>;
  if (c.redis === null || typeof c.redis !== "object" || typeof c.redis.eval !== "function") {
    throw new TypeError(`Semaphore "${name}": coordinator.redis must be an ioredis client (with eval()), got ${describe(c.redis)}`);
  }
  if (c.service !== undefined && (typeof c.service !== "string" || c.service === "")) {
    throw new TypeError(`Semaphore "${name}": coordinator.service must be a non-empty string, got ${describe(c.service)}`);
  }
  if (c.keyPrefix !== undefined && typeof c.keyPrefix !== "string") throw new TypeError(`coordinator.keyPrefix must be a string, got ${describe(c.keyPrefix)}`);
  const leaseMs = checkDuration("coordinator.leaseMs", c.leaseMs) ?? DEFAULT_LEASE_MS;
  if (leaseMs < MIN_LEASE_MS) throw new RangeError(`coordinator.leaseMs must be ≥ ${MIN_LEASE_MS}, got ${leaseMs}`);
  const heartbeatMs = checkDuration("coordinator.heartbeatMs", c.heartbeatMs) ?? Math.round(leaseMs / 3);
  if (heartbeatMs <= 0 || heartbeatMs >= leaseMs) throw new RangeError(`coordinator.heartbeatMs must be > 0 and below leaseMs (${leaseMs}), got ${heartbeatMs}`);
  const timeoutMs = checkDuration("coordinator.timeoutMs", c.timeoutMs) ?? heartbeatMs;
  if (timeoutMs <= 0) throw new RangeError(`coordinator.timeoutMs must be > 0, got ${timeoutMs}`);
  // A turn shorter than that would spend most of itself in the handover (a lease with the permit unused).
  const turnMs = checkDuration("coordinator.turnMs", c.turnMs) ?? 10 * leaseMs;
  if (turnMs < 2 * leaseMs) throw new RangeError(`coordinator.turnMs must be ≥ 2 × leaseMs (${2 * leaseMs}), got ${turnMs}`);
  const service = c.service ?? implicitService();
  return { redis: c.redis, key: `${c.keyPrefix ?? DEFAULT_KEY_PREFIX}${service}:${name}`, leaseMs, heartbeatMs, timeoutMs, turnMs };
}

