// The live replicas of one shared budget, kept in Redis: a sorted set of member id → lease end
// (Redis's own clock, so replicas' clocks never matter). A heartbeat renews this replica's lease,
// drops every lapsed one and reads the rest, in one atomic script; it answers Redis's time too,
// the clock every replica reads the same rotation turn from (split.ts).
import type { RedisClientLike } from "../adapters/redis-semaphore/shape.js";

export const HEARTBEAT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], 2 * lease)
local out = redis.call('ZRANGE', KEYS[1], 0, -1)
table.insert(out, 1, tostring(now))
return out`;

export const LEAVE_LUA = `return redis.call('ZREM', KEYS[1], ARGV[1])`;

/** Connection states in which ioredis would queue a command (or refuse it): not ready, so not sent. */
const NOT_READY: ReadonlySet<string> = new Set(["connecting", "connect", "reconnecting", "close", "end"]);
/** Of those, the ones a connection being made for the first time (or again) passes through. */
const CONNECTING: ReadonlySet<string> = new Set(["wait", "connecting", "connect"]);

export class RedisMembers {
  constructor(
    private readonly redis: RedisClientLike,
    readonly key: string,
    private readonly timeoutMs: number,
  ) {}

  /** Whether the client is still making its connection (a command now would only queue). */
  get connecting(): boolean {
    const status = this.redis.status;
    return status !== undefined && CONNECTING.has(status);
  }

  /** Renews `member`'s lease of `leaseMs` and resolves to the live members and Redis's time (ms), or rejects saying why. */
  heartbeat(member: string, leaseMs: number): Promise<{ live: string[]; nowMs: number }> {
    return this.call(HEARTBEAT_LUA, member, leaseMs).then((answer) => {
      const nowMs = Array.isArray(answer) ? Number(answer[0]) : NaN;
      if (!Array.isArray(answer) || !Number.isFinite(nowMs)) throw new Error("unexpected answer to the membership heartbeat");
      return { live: answer.slice(1).map((m) => String(m)), nowMs };
    });
  }

  /** Gives up `member`'s lease at once, so the others re-divide without waiting for it to lapse. */
  leave(member: string): Promise<void> {
    return this.call(LEAVE_LUA, member).then(() => undefined);
  }

  // Raced against timeoutMs, and not sent while ioredis would only queue it (its offline queue
  // would otherwise hold the call, and the heartbeat after it, until Redis came back).
  private call(script: string, ...args: (string | number)[]): Promise<unknown> {
    const status = this.redis.status;
    if (status !== undefined && NOT_READY.has(status)) return Promise.reject(new Error(`Redis connection ${status}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from Redis within ${this.timeoutMs} ms`)), this.timeoutMs);
      timer.unref?.();
      let p: Promise<unknown>;
      try {
        p = this.redis.eval(script, 1, this.key, ...args);
      } catch (err) {
        p = Promise.reject(err);
      }
      p.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }
}
