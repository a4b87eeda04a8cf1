// The error a redis-semaphore acquire rejects with when Redis cannot answer and the adapter was
// told to fail fast (onRedisDown: "fail"), so a caller can tell "Redis is away" from "the fleet is
// at its cap" (redis-semaphore's own TimeoutError).

export class SemscopeRedisUnavailableError extends Error {
  override readonly name = "SemscopeRedisUnavailableError";
  readonly code = "SEMSCOPE_REDIS_UNAVAILABLE";
  constructor(
    readonly semaphore: string,
    /** What showed Redis to be away: a closed connection, a probe slower than the bound, a failed call. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`semaphore "${semaphore}": Redis is unavailable (${reason}); acquire refused at once (onRedisDown: "fail")`, options);
  }
}
