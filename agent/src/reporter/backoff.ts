// Reconnect delays: exponential backoff with FULL jitter (delay drawn uniformly from
// [0, min(cap, base·2^attempt))), so a fleet that lost its hub at the same instant is spread over
// the whole window and the hub's restart is not met by one wave of reconnects. socket.io-client's
// own backoff cannot do this: it jitters base·2^n by ±randomizationFactor and caps AFTERWARDS, so
// once base·2^n passes the cap every client waits exactly the cap, in lockstep, on every retry.

/** First retry window: a hub that blips comes back within half a second. */
export const BACKOFF_BASE_MS = 500;
/** Ceiling of the window: a hub that is down for good is still probed about once a minute. */
export const BACKOFF_CAP_MS = 30_000;

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({ baseMs: BACKOFF_BASE_MS, capMs: BACKOFF_CAP_MS });

/** The upper bound of the window for retry number `attempt` (0-based). */
export function backoffCeiling(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const a = Number.isFinite(attempt) && attempt > 0 ? Math.floor(attempt) : 0;
  // 2^a overflows to Infinity for huge a, which min() then caps: no special case needed.
  return Math.min(policy.capMs, policy.baseMs * Math.pow(2, a));
}

/**
 * The delay before retry number `attempt`, given `random()` in [0, 1) (Math.random in
 * production, a fixed sequence in tests): uniform in [0, backoffCeiling(attempt)).
 */
export function backoffDelay(attempt: number, random: () => number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  let r = random();
  // A misbehaving random source must not produce a negative or runaway delay.
  if (!(r >= 0)) r = 0;
  if (r >= 1) r = 1 - Number.EPSILON;
  return Math.floor(r * backoffCeiling(attempt, policy));
}

/** The attempt counter around backoffDelay: next() after each failure, reset() once connected. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly random: () => number = Math.random,
    private readonly policy: BackoffPolicy = DEFAULT_BACKOFF,
  ) {}

  get attempts(): number {
    return this.attempt;
  }

  next(): number {
    const delay = backoffDelay(this.attempt, this.random, this.policy);
    // Stop counting once the ceiling is reached, so the counter itself cannot grow without bound.
    if (backoffCeiling(this.attempt, this.policy) < this.policy.capMs) this.attempt++;
    return delay;
  }

  reset(): void {
    this.attempt = 0;
  }
}
