// A bottleneck limiter on a Redis datastore shares maxConcurrent across every limiter of the same
// id (the cluster). This reads what the cluster holds, for the `global` part of the sample: the
// running weight (bottleneck's own `running` setting) and the clients (limiter instances) that
// hold some of it, by bottleneck's client id. One read-only script per poll, so the reader never
// runs bottleneck's housekeeping (expiring jobs, refilling the reservoir) out of turn, as
// limiter.running() would. The poll runs on the process's real timers, unref'd, and never throws.
import { PAYLOAD_LIMITS } from "../../../shared/protocol/payload-limits.js";
import { realClearTimeout, realSetTimeout } from "./real-timers.js";

// KEYS: b_<id>_settings (a hash with `running`), b_<id>_client_running (a sorted set: client id →
// its running weight). ARGV: the most client ids to return.
export const READ_CLUSTER_LUA = `
local running = tonumber(redis.call('hget', KEYS[1], 'running')) or 0
local clients = redis.call('zrangebyscore', KEYS[2], '(0', '+inf', 'LIMIT', 0, tonumber(ARGV[1]))
return { running, clients }`;

export interface ClusterClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export interface ClusterRead {
  inUse: number;
  holders: string[];
  own: string[];
  /** performance.now() when the answer came. */
  at: number;
}

export interface ClusterWatchConfig {
  client: ClusterClient;
  /** The limiter's id: bottleneck's keys are b_<id>_…. */
  id: string;
  /** This limiter's client id (bottleneck assigns it once its store is set up). */
  clientId: () => string;
  intervalMs: number;
}

export class BottleneckClusterWatch {
  private read: ClusterRead | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(private readonly cfg: ClusterWatchConfig) {}

  /** The latest read, if recent enough to stand for "now" (within 3 polls). */
  get fresh(): ClusterRead | undefined {
    const r = this.read;
    return r !== undefined && performance.now() - r.at <= 3 * this.cfg.intervalMs ? r : undefined;
  }

  start(): void {
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) realClearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = realSetTimeout(() => void this.poll(), ms);
    this.timer.unref?.();
  }

  private async poll(): Promise<void> {
    const { client, id, intervalMs } = this.cfg;
    let timeout: ReturnType<typeof setTimeout> | undefined;
    try {
      const answer = await Promise.race([
        client.eval(READ_CLUSTER_LUA, 2, `b_${id}_settings`, `b_${id}_client_running`, PAYLOAD_LIMITS.maxGlobalHolders),
        new Promise<never>((_, reject) => {
          timeout = realSetTimeout(() => reject(new Error("slow")), intervalMs);
          timeout.unref?.();
        }),
      ]);
      const [running, clients] = answer as [number, string[]];
      const me = this.cfg.clientId();
      this.read = { inUse: Number(running) || 0, holders: clients.map(String), own: clients.includes(me) ? [me] : [], at: performance.now() };
    } catch {
      // Redis slow or away: the read goes stale and the sample goes out without `global`.
    } finally {
      if (timeout !== undefined) realClearTimeout(timeout);
      this.schedule(intervalMs);
    }
  }
}
