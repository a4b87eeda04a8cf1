// Issue 5: each library a service already has, alone and under instrument(), on the uncontended
// case (what every guarded call pays when the limiter is not the bottleneck). The "+instrument"
// row has `baseline` set to the library's own row, so the report shows the ratio.
//
// pg and generic-pool run with in-memory resources (no network, no database): the pool's own
// checkout/return is what is measured, which is the path the adapter wraps. Every instrumented
// limiter gets a fresh, unique name per measurement and is untracked when closed.
import { EventEmitter } from "node:events";
import { Semaphore as MutexSemaphore } from "async-mutex";
import { createPool } from "generic-pool";
import pLimit from "p-limit";
import PQueue from "p-queue";
import pg from "pg";
import { Pool as TarnPool } from "tarn";
import { instrument, type InstrumentHandle } from "../../agent/src/index.js";
import type { BenchResource, Contender, Limiter } from "./contenders.js";

let seq = 0;
export const uniqueName = (what: string) => `bench-${what}-${++seq}`;
function noop(): void {}

/** Only the uncontended loop: the adapters wrap acquire and release, which is what it times. */
export function cycleOnly(cycle: (n: number) => Promise<void>, close: () => Promise<void>): Limiter {
  const unsupported = (): never => {
    throw new Error("adapter contenders take part in uncontended_ns only");
  };
  return { cycle, task: unsupported, seize: unsupported, enqueue: unsupported, drain: unsupported, close };
}

/** A pair of rows: the library alone, and the same under instrument() with it as baseline. */
export function pair(name: string, what: string, build: (permits: number, instrumented: boolean) => Limiter, needs?: BenchResource): Contender[] {
  return [
    { name, description: `${what}, alone`, cases: ["uncontended_ns"], needs, make: (permits) => build(permits, false) },
    { name: `${name}+instrument`, description: `${what}, under instrument()`, baseline: name, cases: ["uncontended_ns"], needs, make: (permits) => build(permits, true) },
  ];
}

const untrackOnClose = (h: InstrumentHandle | undefined) => () => {
  h?.untrack();
};

/** What pg-pool needs from a Client to lend it: connect, end, events, and being queryable. */
class MemoryClient extends EventEmitter {
  _queryable = true;
  _ending = false;
  connect(cb: (err?: Error) => void): void {
    process.nextTick(cb);
  }
  ref(): void {}
  unref(): void {}
  end(cb?: () => void): void {
    this._ending = true;
    if (cb !== undefined) process.nextTick(cb);
  }
}

export const ADAPTER_CONTENDERS: readonly Contender[] = [
  ...pair("pg-pool", "node-postgres Pool (pg 8) over in-memory clients: connect() then client.release()", (permits, on) => {
    const pool = new pg.Pool({ max: permits, Client: MemoryClient as unknown as typeof pg.Client, allowExitOnIdle: true });
    const h = on ? instrument(pool, { name: uniqueName("pg") }) : undefined;
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) {
          const c = await pool.connect();
          c.release();
        }
      },
      async () => {
        untrackOnClose(h)();
        await pool.end();
      },
    );
  }),
  ...pair("generic-pool", "generic-pool 3.9 over in-memory resources: acquire() then release()", (permits, on) => {
    const pool = createPool({ create: () => Promise.resolve({}), destroy: () => Promise.resolve() }, { max: permits });
    const h = on ? instrument(pool, { name: uniqueName("gp") }) : undefined;
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) {
          const r = await pool.acquire();
          void pool.release(r);
        }
      },
      async () => {
        untrackOnClose(h)();
        await pool.drain();
        await pool.clear();
      },
    );
  }),
  ...pair("tarn", "tarn 3.1 (knex's pool) over in-memory resources: acquire().promise then release()", (permits, on) => {
    const pool = new TarnPool<object>({ create: () => Promise.resolve({}), destroy: noop, min: 0, max: permits });
    const h = on ? instrument(pool, { name: uniqueName("tarn") }) : undefined;
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) {
          const r = await pool.acquire().promise;
          pool.release(r);
        }
      },
      async () => {
        untrackOnClose(h)();
        await pool.destroy();
      },
    );
  }),
  // p-limit and async-mutex alone are rows of contenders.ts already (same loops as here).
  {
    name: "p-limit+instrument",
    description: "p-limit 7 under instrument(): calls through handle.limit (the timed path)",
    baseline: "p-limit",
    cases: ["uncontended_ns"],
    make(permits) {
      const h = instrument(pLimit(permits), { name: uniqueName("pl") });
      return cycleOnly(
        async (n) => {
          for (let i = 0; i < n; i++) await h.limit(noop);
        },
        () => {
          h.untrack();
          return Promise.resolve();
        },
      );
    },
  },
  ...pair("p-queue", "p-queue 9: add(fn)", (permits, on) => {
    const queue = new PQueue({ concurrency: permits });
    const h = on ? instrument(queue, { name: uniqueName("pq") }) : undefined;
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) await queue.add(noop);
      },
      async () => {
        untrackOnClose(h)();
        await queue.onIdle();
      },
    );
  }),
  {
    name: "async-mutex+instrument",
    description: "async-mutex 0.5 Semaphore under instrument(): acquire() then the releaser",
    baseline: "async-mutex",
    cases: ["uncontended_ns"],
    make(permits) {
      const sem = new MutexSemaphore(permits);
      const h = instrument(sem, { name: uniqueName("am"), permits });
      return cycleOnly(
        async (n) => {
          for (let i = 0; i < n; i++) {
            const [, release] = await sem.acquire();
            release();
          }
        },
        () => {
          h.untrack();
          return Promise.resolve();
        },
      );
    },
  },
];
