// One outbound destination's sending loop: sends what its owner has waiting, one request at a
// time, and after a failure waits with exponential backoff and jitter before trying again. The
// owner keeps the waiting work (and its bound); the loop only decides when to send.

export interface RetryPolicy {
  /** The wait after a first failure; each further failure doubles it... */
  readonly initialMs: number;
  /** ...up to this. */
  readonly maxMs: number;
  /** One request's time limit. */
  readonly timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { initialMs: 500, maxMs: 30_000, timeoutMs: 5000 };

/** Work gathered this long after the first change is sent together. */
const GATHER_MS = 20;

export interface DeliveryStats {
  /** Requests the destination accepted. */
  sent: number;
  /** Requests that failed (refused, timed out, unreachable). */
  failures: number;
  /** The last failure's reason, null once a request succeeds. */
  lastError: string | null;
}

export interface DeliveryWork {
  hasWork(): boolean;
  /** Sends one request's worth; rejects when the destination did not accept it. */
  sendOnce(timeoutMs: number): Promise<void>;
  /** Called on the first success after failures (the destination may have lost what it had). */
  recovered(): void;
}

export class DeliveryLoop {
  readonly stats: DeliveryStats = { sent: 0, failures: 0, lastError: null };
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private failedInARow = 0;
  private closed = false;

  constructor(
    private readonly work: DeliveryWork,
    private readonly retry: RetryPolicy,
  ) {}

  /** There is new work: send it soon, unless a send or a backoff wait is already under way. */
  kick(): void {
    if (this.closed || this.timer !== undefined || this.inFlight !== undefined) return;
    this.schedule(this.failedInARow > 0 ? this.backoffMs() : GATHER_MS);
  }

  /** Stops the loop; one last send of what waits, within `deadlineMs`. Never rejects. */
  async close(deadlineMs: number): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    if (!this.work.hasWork()) return;
    await this.work.sendOnce(Math.min(deadlineMs, this.retry.timeoutMs)).then(
      () => void this.stats.sent++,
      () => void this.stats.failures++,
    );
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.inFlight = this.run().finally(() => (this.inFlight = undefined));
    }, ms);
    this.timer.unref();
  }

  private backoffMs(): number {
    const base = Math.min(this.retry.maxMs, this.retry.initialMs * 2 ** (this.failedInARow - 1));
    return base * (0.8 + Math.random() * 0.4);
  }

  private async run(): Promise<void> {
    if (this.closed || !this.work.hasWork()) return;
    try {
      await this.work.sendOnce(this.retry.timeoutMs);
      this.stats.sent++;
      this.stats.lastError = null;
      if (this.failedInARow > 0) {
        this.failedInARow = 0;
        this.work.recovered();
      }
    } catch (err) {
      this.failedInARow++;
      this.stats.failures++;
      this.stats.lastError = err instanceof Error ? err.message : String(err);
    }
    if (this.closed || !this.work.hasWork()) return;
    this.schedule(this.failedInARow > 0 ? this.backoffMs() : 0);
  }
}

/** POSTs JSON; rejects on a network error, a time-out or a non-2xx answer. */
export async function postJson(url: string, body: unknown, timeoutMs: number): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "User-Agent": "semscope-hub" },
    body: JSON.stringify(body),
    redirect: "error",
    signal: AbortSignal.timeout(timeoutMs),
  });
  // Drain the answer so the connection can be reused; only its status matters.
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url}: HTTP ${res.status}${text === "" ? "" : ` ${text.slice(0, 200)}`}`);
}
