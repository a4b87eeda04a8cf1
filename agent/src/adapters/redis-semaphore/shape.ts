// What the adapter reads of a redis-semaphore 5.x Semaphore and of an ioredis-like client. The
// agent does not depend on either package: it checks the shape, and a target that looks like
// redis-semaphore but lacks what 5.x has is refused with a SemscopeAdapterError.
import { requireShape, SemscopeAdapterError } from "../adapter-error.js";

export const PKG = "redis-semaphore";
export const UNDERSTANDS = "redis-semaphore 5.x Semaphore (not Mutex, MultiSemaphore or Redlock*) on ioredis 5.x";

/** The few client calls the adapter makes (ioredis 5 has them all). */
export interface RedisClientLike {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  readonly status?: string;
  on?(event: string, listener: (...args: unknown[]) => void): unknown;
  off?(event: string, listener: (...args: unknown[]) => void): unknown;
}

export type TryAcquire = (this: RedisSemaphoreLike, abortSignal?: AbortSignal) => Promise<boolean>;
export type Release = (this: RedisSemaphoreLike) => Promise<void>;

/** redis-semaphore 5.x's Semaphore, as far as the adapter touches it (its protected members included). */
export interface RedisSemaphoreLike {
  readonly _kind: string;
  /** The Redis key: `semaphore:<key>` (a sorted set: identifier → time of its last acquire or refresh). */
  readonly _key: string;
  readonly _limit: number;
  /** A MultiSemaphore's permits per acquire (its _kind is "multi-semaphore"). */
  readonly _permits?: number;
  readonly _client: RedisClientLike;
  readonly _identifier: string;
  readonly _acquireOptions: { lockTimeout: number; acquireTimeout: number; retryInterval: number };
  _acquired: boolean;
  _processRefresh: () => Promise<void>;
  _onLockLost: (err: Error) => void;
  tryAcquire: TryAcquire;
  release: Release;
  acquire(abortSignal?: AbortSignal): Promise<void>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object";
}

/** A redis-semaphore Semaphore instance (by its shape; the Redlock and Multi variants are not). */
export function isRedisSemaphore(target: unknown): boolean {
  if (!isObject(target)) return false;
  return (
    target._kind === "semaphore" &&
    typeof target._key === "string" &&
    target._key.startsWith("semaphore:") &&
    typeof target.tryAcquire === "function" &&
    typeof target.release === "function" &&
    typeof target.acquire === "function"
  );
}

/** Throws SemscopeAdapterError unless `target` has everything of 5.x the adapter relies on. */
export function checkRedisSemaphore(target: unknown): asserts target is RedisSemaphoreLike {
  if (!isRedisSemaphore(target)) {
    throw new SemscopeAdapterError(PKG, "not a redis-semaphore Semaphore (a Mutex, MultiSemaphore or Redlock variant is not supported)", UNDERSTANDS);
  }
  const t = target as Record<string, unknown>;
  if (Array.isArray(t._clients)) throw new SemscopeAdapterError(PKG, "a Redlock semaphore spans several Redis servers; instrument a single-server Semaphore", UNDERSTANDS);
  requireShape(PKG, UNDERSTANDS, target as object, {
    _limit: "number",
    _client: "object",
    _acquireOptions: "object",
    _processRefresh: "function",
    _onLockLost: "function",
    stopRefresh: "function",
  });
  const o = t._acquireOptions as Record<string, unknown>;
  requireShape(PKG, UNDERSTANDS, o, { lockTimeout: "number", acquireTimeout: "number" });
  if (typeof t._identifier !== "string") throw new SemscopeAdapterError(PKG, 'this target has no string "_identifier"', UNDERSTANDS);
  if (typeof (t._client as Record<string, unknown>).eval !== "function") {
    throw new SemscopeAdapterError(PKG, "its Redis client has no eval(): an ioredis-compatible client is needed", UNDERSTANDS);
  }
}
