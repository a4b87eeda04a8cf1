// Watches Redis for the adapter: reads the fleet's holder set on a timer (for the hub's global
// view) and, from the same reads and the client's connection events, decides whether Redis is up.
// Every call is raced against `timeoutMs` and made only on a ready connection, so neither a slow
// Redis nor ioredis's offline queue can leave the agent (or an acquire waiting on it) hanging.
import type { RedisClientLike } from "./shape.js";

// redis-semaphore has no call to read the holder set, so the adapter reads the sorted set itself:
// a read-only Lua script gives the count and the identifiers in one atomic round trip, with the
// library's own expiry rule (a member whose score, its last acquire or refresh, is older than
// lockTimeout is not held) and without purging anything (the library purges on its next acquire).
export const READ_HOLDERS_LUA = `
local since = '(' .. ARGV[1]
local n = redis.call('zcount', KEYS[1], since, '+inf')
local ids = redis.call('zrangebyscore', KEYS[1], since, '+inf', 'LIMIT', 0, tonumber(ARGV[2]))
return { n, ids }`;

/** Connection states in which ioredis would queue or refuse a command: Redis counts as down. */
const DOWN_STATES: ReadonlySet<string> = new Set(["reconnecting", "close", "end"]);

export interface GlobalRead {
  inUse: number;
  holders: string[];
  /** Date.now() when the answer came. */
  at: number;
}

export interface WatchConfig {
  /** The client the adapter reads with (options.redis, else the semaphore's own). */
  reader: RedisClientLike;
  /** The semaphore's own client: its connection events say at once when acquires cannot work. */
  semClient: RedisClientLike;
  key: string;
  lockTimeoutMs: number;
  timeoutMs: number;
  intervalMs: number;
  maxHolders: number;
}

export class RedisWatch {
  private isDown = false;
  private why = "";
  private read: GlobalRead | undefined;
  private inFlight = false;
  /** Date.now() when a poll first found the connection still being made; undefined once it is not. */
  private connectingSince: number | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly downListeners = new Set<(reason: string) => void>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(private readonly cfg: WatchConfig) {}

  get down(): boolean {
    return this.isDown;
  }

  get reason(): string {
    return this.why;
  }

  /** The latest read, if it is recent enough to stand for "now" (within 3 polls). */
  get fresh(): GlobalRead | undefined {
    const r = this.read;
    return r !== undefined && !this.isDown && Date.now() - r.at <= 3 * this.cfg.intervalMs ? r : undefined;
  }

  start(): void {
    this.timer = setInterval(() => this.poll(), this.cfg.intervalMs);
    this.timer.unref?.();
    const seen = new Set<RedisClientLike>();
    for (const client of [this.cfg.semClient, this.cfg.reader]) {
      if (seen.has(client) || typeof client.on !== "function") continue;
      seen.add(client);
      const onLost = () => this.markDown("connection to Redis lost");
      const onReady = () => this.poll();
      for (const e of ["close", "end", "reconnecting"]) client.on(e, onLost);
      client.on("ready", onReady);
      this.unsubscribe.push(() => {
        for (const e of ["close", "end", "reconnecting"]) client.off?.(e, onLost);
        client.off?.("ready", onReady);
      });
    }
    this.poll();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const u of this.unsubscribe.splice(0)) u();
    this.downListeners.clear();
  }

  /** Calls `listener` the next times Redis is found down; returns the unsubscribe. */
  onDown(listener: (reason: string) => void): () => void {
    this.downListeners.add(listener);
    return () => this.downListeners.delete(listener);
  }

  /** Something outside the watch (a failed acquire) saw Redis fail: look now. */
  suspect(reason: string): void {
    const status = this.cfg.semClient.status;
    if (status !== undefined && DOWN_STATES.has(status)) this.markDown(reason);
    else this.poll();
  }

  /** One read of the holder set, unless one is still in flight (within its bound). */
  poll(): void {
    if (this.inFlight) return;
    const status = this.cfg.reader.status ?? this.cfg.semClient.status;
    if (status !== undefined && DOWN_STATES.has(status)) {
      this.markDown(`connection ${status}`);
      return;
    }
    // Still connecting: a command would only queue. Not yet known to be down, unless that has
    // lasted redisTimeoutMs: a Redis that accepts the connection and never answers (a stopped
    // process, a wedged server) keeps ioredis at "connect" for good, its ready check unanswered,
    // and an acquire queued behind it would wait as long.
    if (status === "connecting" || status === "connect") {
      const now = Date.now();
      this.connectingSince ??= now;
      if (now - this.connectingSince >= this.cfg.timeoutMs) this.markDown(`not connected within ${this.cfg.timeoutMs} ms`);
      return;
    }
    this.connectingSince = undefined;
    this.inFlight = true;
    const now = Date.now();
    let settled = false;
    const bound = setTimeout(() => {
      if (settled) return;
      settled = true;
      this.inFlight = false;
      this.markDown(`no answer within ${this.cfg.timeoutMs} ms`);
    }, this.cfg.timeoutMs);
    bound.unref?.();
    let call: Promise<unknown>;
    try {
      call = this.cfg.reader.eval(READ_HOLDERS_LUA, 1, this.cfg.key, now - this.cfg.lockTimeoutMs, this.cfg.maxHolders);
    } catch (err) {
      call = Promise.reject(err);
    }
    call.then(
      (answer) => {
        if (settled) return;
        settled = true;
        clearTimeout(bound);
        this.inFlight = false;
        const parsed = parseRead(answer);
        if (parsed === undefined) {
          this.markDown("unexpected answer to the holder-set read");
          return;
        }
        this.read = parsed;
        this.isDown = false;
        this.why = "";
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(bound);
        this.inFlight = false;
        this.markDown(err instanceof Error ? err.message : String(err));
      },
    );
  }

  private markDown(reason: string): void {
    this.why = reason;
    this.read = undefined;
    this.isDown = true;
    for (const l of [...this.downListeners]) {
      try {
        l(reason);
      } catch {
        /* a listener is the adapter's own code; never let it stop the others */
      }
    }
  }
}

function parseRead(answer: unknown): GlobalRead | undefined {
  if (!Array.isArray(answer) || answer.length !== 2) return undefined;
  const n = Number(answer[0]);
  const ids: unknown = answer[1];
  if (!Number.isFinite(n) || n < 0 || !Array.isArray(ids)) return undefined;
  return { inUse: n, holders: ids.map((x) => String(x)), at: Date.now() };
}
