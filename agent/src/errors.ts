// Typed errors, so callers can tell "the downstream is at capacity" from a bug.

export class SemaphoreTimeoutError extends Error {
  override readonly name = "SemaphoreTimeoutError";
  readonly code = "SEMSCOPE_TIMEOUT";
  constructor(
    readonly semaphore: string,
    readonly timeoutMs: number,
  ) {
    super(`semaphore "${semaphore}": no permit within ${timeoutMs} ms`);
  }
}

export class SemaphoreRejectedError extends Error {
  override readonly name = "SemaphoreRejectedError";
  readonly code = "SEMSCOPE_REJECTED";
  constructor(
    readonly semaphore: string,
    readonly maxWaiters: number,
  ) {
    super(`semaphore "${semaphore}" is at capacity: ${maxWaiters} waiters already queued`);
  }
}

export class SemaphoreClosedError extends Error {
  override readonly name = "SemaphoreClosedError";
  readonly code = "SEMSCOPE_CLOSED";
  constructor(readonly semaphore: string) {
    super(`semaphore "${semaphore}" is closed`);
  }
}

/** What an aborted acquire rejects with when the signal gave no reason of its own. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted", "AbortError");
}
