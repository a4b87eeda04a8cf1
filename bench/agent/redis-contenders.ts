// Issue 5: redis-semaphore 5 alone and under instrument(), on a real redis-server that this run
// starts for these rows (scripts/support/redis.ts: a free port, a temporary folder, no
// persistence, stopped after the report and at exit). Without redis-server the rows are skipped.
//
// One cycle is what a service does per guarded call: a new Semaphore (in redis-semaphore an object
// is one holder, with its own identifier), acquire(), release(): two round trips over loopback
// (the acquire script, then the ZREM), so tens of µs per op, and the ratio is what the adapter adds
// to a call that already waits on the network. Both rows use the library's default options; the
// instrumented one also runs the adapter's holder-set read (one EVAL per pollIntervalMs, 1 s).
//
// uncontended_ns only: redis-semaphore has no queue (a waiter polls Redis every retryInterval), so
// the contended case's 100,000 tasks would be 100,000 pollers timing Redis, not the semaphore.
import { Redis } from "ioredis";
import { Semaphore as RedisSemaphore } from "redis-semaphore";
import { instrument } from "../../agent/src/index.js";
import { REDIS_NOT_INSTALLED, startRedis, type RedisServer } from "../../scripts/support/redis.js";
import { cycleOnly, pair, uniqueName } from "./adapter-contenders.js";
import type { BenchResource } from "./contenders.js";

/** One redis-server and one ioredis client for both rows: the rows run one after the other. */
class BenchRedis implements BenchResource {
  private server: RedisServer | undefined;
  private connection: Redis | undefined;

  async start(): Promise<string | undefined> {
    try {
      this.server = await startRedis();
    } catch (err) {
      if (err instanceof Error && err.message === REDIS_NOT_INSTALLED) return err.message;
      throw err;
    }
    const client = new Redis(this.server.url);
    // ioredis emits 'error' on connection trouble; unhandled it would crash the run. A failing
    // command still rejects, and the harness reports that row's case as failed.
    client.on("error", () => undefined);
    this.connection = client;
    await client.ping();
    return undefined;
  }

  async stop(): Promise<void> {
    this.connection?.disconnect();
    this.connection = undefined;
    await this.server?.stop();
    this.server = undefined;
  }

  get client(): Redis {
    if (this.connection === undefined) throw new Error("redis-semaphore rows: redis-server was not started (run.ts starts a row's `needs` first)");
    return this.connection;
  }
}

const redis = new BenchRedis();

export const REDIS_CONTENDERS = pair(
  "redis-semaphore",
  "redis-semaphore 5.8 on ioredis 5.9 over loopback: new Semaphore, acquire(), release()",
  (permits, on) => {
    const client = redis.client;
    // A key per measurement: the adapter patches the prototype per key, so the alone row's key is never instrumented.
    const key = uniqueName("rs");
    const h = on ? instrument(new RedisSemaphore(client, key, permits), { name: key }) : undefined;
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) {
          const s = new RedisSemaphore(client, key, permits);
          await s.acquire();
          await s.release();
        }
      },
      () => {
        h?.untrack();
        return Promise.resolve();
      },
    );
  },
  redis,
);
