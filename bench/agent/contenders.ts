// Every semaphore under test, behind one small interface.
//
// Why the loops live here and not in the cases: a generic `await lim.acquire()` wrapper would add an
// async frame (a promise and a microtask) to every operation, which at ~40-80 ns/op is the same size
// as what we measure and would squeeze all ratios toward 1. Each contender instead writes its own
// few-line loop with its library's natural call shape, and each of those loops keeps its own
// monomorphic type feedback even though the rounds interleave contenders in one process.
//
// EXTENSION POINT (issues 5 and 6): add a Contender to `CONTENDERS` at the bottom. Set `baseline`
// to the name of the contender it should be judged against, e.g.
//   { name: "p-limit+instrument", baseline: "p-limit", ... }   // issue 5: adapter alone vs instrumented
//   { name: "semscope+recorder",  baseline: "semscope", ... }  // issue 6: flight recorder on vs off
// and the report adds a "vs baseline" column for it. A contender that cannot take part in a case
// (a pg pool cannot queue 100,000 waiters cheaply) lists the cases it supports in `cases`.

import { Sema } from "async-sema";
import { Semaphore as MutexSemaphore } from "async-mutex";
import pLimit from "p-limit";
import { FloorSemaphore } from "./floor.js";
import { ADAPTER_CONTENDERS } from "./adapter-contenders.js";
import { MARIADB_CONTENDERS } from "./mariadb-contenders.js";
import { REDIS_CONTENDERS } from "./redis-contenders.js";
import { POOL_CONTENDERS } from "./pool-contenders.js";
import { Semaphore, type Permit, type SemaphoreOptions } from "../../agent/src/index.js";

/** One semaphore instance, made for one measurement and closed after it. */
export interface Limiter {
  /** Case 1: `iterations` sequential acquire+release pairs; never waits if permits ≥ 1. */
  cycle(iterations: number): Promise<void>;
  /** Case 2: one task: acquire, yield one microtask while holding, release. */
  task(): Promise<void>;
  /** Case 3, step 1: take every permit so that later acquires must queue. */
  seize(): Promise<void>;
  /** Case 3, step 2: queue `n` waiters synchronously, storing whatever keeps each alive in `into[i]`. */
  enqueue(n: number, into: unknown[]): void;
  /** Case 3, step 3: give back the seized permits, then admit and release every waiter in `from`. */
  drain(from: readonly unknown[]): Promise<void>;
  close(): Promise<void>;
}

export type CaseId = "uncontended_ns" | "contended_ops" | "bytes_per_waiter";

export interface Contender {
  readonly name: string;
  readonly description: string;
  /** Another contender's name: the report shows this one's ratio against it (issues 5 and 6). */
  readonly baseline?: string;
  /** Cases this contender takes part in; all when absent. */
  readonly cases?: readonly CaseId[];
  /** Something that must run before `make` (a Redis server): started once per run for every row naming it. */
  readonly needs?: BenchResource;
  /**
   * adapter-ab.ts's warm-up and smallest chunk, in cycles (default 5,000): lower for a library
   * whose one call lasts a millisecond of wall time (bottleneck yields to a timer per job).
   */
  readonly abCycles?: number;
  /** With `needs`: once warm, a cycle makes no round trip to that server (mysql2's open connections), so adapter-ab.ts times it too. */
  readonly callsStayInProcess?: boolean;
  make(permits: number): Limiter;
}

/**
 * A server some rows need. run.ts starts each one its selected rows name before the warm-up and
 * stops it after the report; what it cannot start skips those rows instead of failing the run.
 */
export interface BenchResource {
  /** Resolves to undefined once running, or to why the rows needing it are skipped (not installed); rejects on a real failure. */
  start(): Promise<string | undefined>;
  stop(): Promise<void>;
}

/** Resolves after one microtask, like the `await null` a real critical section would at least do. */
async function holdWork(): Promise<void> {
  await null;
}
function noop(): void {}

const floor: Contender = {
  name: "floor",
  description: "minimal semaphore: counter + head-index array queue (bench/agent/floor.ts)",
  make(permits) {
    const s = new FloorSemaphore(permits);
    return {
      async cycle(n) {
        for (let i = 0; i < n; i++) {
          await s.acquire();
          s.release();
        }
      },
      async task() {
        await s.acquire();
        await null;
        s.release();
      },
      async seize() {
        for (let i = 0; i < permits; i++) await s.acquire();
      },
      enqueue(n, into) {
        for (let i = 0; i < n; i++) into[i] = s.acquire();
      },
      async drain(from) {
        for (let i = 0; i < permits; i++) s.release();
        for (const w of from) {
          await w;
          s.release();
        }
      },
      async close() {},
    };
  },
};

const asyncSema: Contender = {
  name: "async-sema",
  description: "async-sema 3.1 Sema: acquire() then sema.release()",
  make(permits) {
    const s = new Sema(permits);
    return {
      async cycle(n) {
        for (let i = 0; i < n; i++) {
          await s.acquire();
          s.release();
        }
      },
      async task() {
        await s.acquire();
        await null;
        s.release();
      },
      async seize() {
        for (let i = 0; i < permits; i++) await s.acquire();
      },
      enqueue(n, into) {
        for (let i = 0; i < n; i++) into[i] = s.acquire();
      },
      async drain(from) {
        for (let i = 0; i < permits; i++) s.release();
        for (const w of from) {
          await w;
          s.release();
        }
      },
      async close() {},
    };
  },
};

type MutexReleaser = () => void;

const asyncMutex: Contender = {
  name: "async-mutex",
  description: "async-mutex 0.5 Semaphore: acquire() resolves to [value, releaser]",
  make(permits) {
    const s = new MutexSemaphore(permits);
    let seized: MutexReleaser[] = [];
    return {
      async cycle(n) {
        for (let i = 0; i < n; i++) {
          const [, release] = await s.acquire();
          release();
        }
      },
      async task() {
        const [, release] = await s.acquire();
        await null;
        release();
      },
      async seize() {
        for (let i = 0; i < permits; i++) seized.push((await s.acquire())[1]);
      },
      enqueue(n, into) {
        for (let i = 0; i < n; i++) into[i] = s.acquire();
      },
      async drain(from) {
        for (const release of seized) release();
        seized = [];
        for (const w of from) {
          const [, release] = await (w as Promise<[number, MutexReleaser]>);
          release();
        }
      },
      async close() {},
    };
  },
};

const pLimitContender: Contender = {
  name: "p-limit",
  description: "p-limit 7: limit(fn) runs fn under the cap (no separate acquire/release)",
  make(permits) {
    const limit = pLimit(permits);
    let seized: Promise<void>[] = [];
    let open: () => void = noop;
    return {
      async cycle(n) {
        for (let i = 0; i < n; i++) await limit(noop);
      },
      task() {
        return limit(holdWork);
      },
      async seize() {
        // p-limit has no bare acquire: hold each slot with a function that waits on one shared gate.
        const gate = new Promise<void>((resolve) => {
          open = resolve;
        });
        for (let i = 0; i < permits; i++) seized.push(limit(() => gate));
      },
      enqueue(n, into) {
        for (let i = 0; i < n; i++) into[i] = limit(noop);
      },
      async drain(from) {
        open();
        await Promise.all(seized);
        seized = [];
        await Promise.all(from);
      },
      async close() {
        limit.clearQueue();
      },
    };
  },
};

let instanceSeq = 0;

function semscopeContender(name: string, description: string, options: Omit<SemaphoreOptions, "name" | "permits">): Contender {
  return {
    name,
    description,
    make(permits) {
      // Names must be unique per process, and every measurement makes a fresh instance.
      const s = new Semaphore({ ...options, name: `bench-${name}-${++instanceSeq}`, permits });
      let seized: Permit[] = [];
      return {
        async cycle(n) {
          for (let i = 0; i < n; i++) {
            const p = await s.acquire();
            p.release();
          }
        },
        async task() {
          const p = await s.acquire();
          await null;
          p.release();
        },
        async seize() {
          for (let i = 0; i < permits; i++) seized.push(await s.acquire());
        },
        enqueue(n, into) {
          for (let i = 0; i < n; i++) into[i] = s.acquire();
        },
        async drain(from) {
          for (const p of seized) p.release();
          seized = [];
          for (const w of from) (await (w as Promise<Permit>)).release();
        },
        close() {
          return s.close();
        },
      };
    },
  };
}

/**
 * Every contender, in report order. EXTENSION POINT: append adapter pairs (issue 5) and flight
 * recorder on/off (issue 6) here, with `baseline` set.
 */
export const CONTENDERS: readonly Contender[] = [
  semscopeContender("semscope", "semscope Semaphore, default options", {}),
  semscopeContender("semscope-stacks", "semscope Semaphore, leakThresholdMs: 60000 (captures acquisition stacks)", {
    leakThresholdMs: 60_000,
  }),
  // Issue 6: the flight recorder is on by default (the "semscope" row); this is the same with it off.
  {
    ...semscopeContender("semscope-recorder-off", "semscope Semaphore, flightRecorder: false (the semscope row has it on: 1,024 ops)", { flightRecorder: false }),
    baseline: "semscope",
    cases: ["uncontended_ns", "contended_ops"],
  },
  asyncSema,
  asyncMutex,
  pLimitContender,
  floor,
  // Issue 5: each adapter's library alone and under instrument() (uncontended_ns only).
  ...ADAPTER_CONTENDERS,
  ...REDIS_CONTENDERS,
  // Issue 30: the new pools alone and under instrument().
  ...MARIADB_CONTENDERS,
  ...POOL_CONTENDERS,
];

export function findContender(name: string): Contender | undefined {
  return CONTENDERS.find((c) => c.name === name);
}
