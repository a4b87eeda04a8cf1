// Each instrumented library behind the semantic suite's SubjectUnderTest: the library does the
// work, the adapter's handle answers snapshot() and sample(). The glue only maps call shapes
// (a permit = "the task is running until release() is called"); the suite skips, by name and
// with the reason, whatever a library does not offer.
import { Semaphore as MutexSemaphore } from "async-mutex";
import { createPool, type Pool as GenericPool } from "generic-pool";
import pLimit from "p-limit";
import { EventEmitter } from "node:events";
import PQueue from "p-queue";
import pg from "pg";
import { Pool as TarnPool } from "tarn";
import { instrument, type InstrumentHandle } from "../../../agent/src/index.js";
import type { SubjectAcquireOptions, SubjectFactory, SubjectPermit, SubjectUnderTest } from "../semantic-suite.js";

const noop = (): void => undefined;

function common(h: InstrumentHandle): Pick<SubjectUnderTest, "id" | "snapshot" | "sample" | "close"> {
  return {
    id: h.id,
    snapshot: () => h.snapshot(),
    sample: (t) => h.sample(t),
    close: () => {
      h.untrack();
      return Promise.resolve();
    },
  };
}

/** A permit for a library that runs a function under the cap: held until release() ends the function. */
function taskPermit(start: (task: () => Promise<void>) => Promise<unknown>): Promise<SubjectPermit> {
  return new Promise<SubjectPermit>((granted, refused) => {
    let held = true;
    const run = () =>
      new Promise<void>((done) => {
        granted({
          release: () => {
            held = false;
            done();
          },
          get held() {
            return held;
          },
        });
      });
    start(run).then(
      () => undefined,
      (err: unknown) => {
        held = false;
        refused(err);
      },
    );
  });
}

export const asyncMutexSubject: SubjectFactory = (o) => {
  const sem = new MutexSemaphore(o.permits);
  const h = instrument(sem, { name: o.name, permits: o.permits, ...(o.leakThresholdMs !== undefined ? { leakThresholdMs: o.leakThresholdMs } : {}) });
  return {
    ...common(h),
    acquire: (a?: SubjectAcquireOptions) => sem.acquire(a?.weight ?? 1, a?.priority ?? 0).then(([, release]) => ({ release })),
    use: <T>(fn: () => T | PromiseLike<T>, a?: SubjectAcquireOptions) => sem.runExclusive(async () => await fn(), a?.weight ?? 1, a?.priority ?? 0) as Promise<T>,
  };
};

export const genericPoolSubject: SubjectFactory = (o) => {
  let n = 0;
  const pool: GenericPool<{ n: number }> = createPool({ create: () => Promise.resolve({ n: ++n }), destroy: () => Promise.resolve() }, { max: o.permits });
  const h = instrument(pool, { name: o.name, ...(o.leakThresholdMs !== undefined ? { leakThresholdMs: o.leakThresholdMs } : {}) });
  return {
    ...common(h),
    acquire: () =>
      pool.acquire().then((r) => ({
        // A second release is refused by the pool with a rejection: the glue swallows it (the suite checks the counts).
        release: () => void pool.release(r).catch(noop),
      })),
    use: <T>(fn: () => T | PromiseLike<T>) => pool.use(async () => fn()),
  };
};

export const pLimitSubject: SubjectFactory = (o) => {
  const limit = pLimit(o.permits);
  const h = instrument(limit, { name: o.name, ...(o.leakThresholdMs !== undefined ? { leakThresholdMs: o.leakThresholdMs } : {}) });
  return {
    ...common(h),
    acquire: () => taskPermit((task) => h.limit(task)),
    use: <T>(fn: () => T | PromiseLike<T>) => h.limit(fn),
    resize: (permits: number) => {
      limit.concurrency = permits;
    },
  };
};

export const pQueueSubject: SubjectFactory = (o) => {
  const queue = new PQueue({ concurrency: o.permits, ...(o.leaseTimeoutMs !== undefined ? { timeout: o.leaseTimeoutMs } : {}) });
  const h = instrument(queue, { name: o.name, ...(o.leakThresholdMs !== undefined ? { leakThresholdMs: o.leakThresholdMs } : {}) });
  return {
    ...common(h),
    acquire: (a?: SubjectAcquireOptions) =>
      taskPermit((task) => queue.add(task, { ...(a?.priority !== undefined ? { priority: a.priority } : {}), ...(a?.signal !== undefined ? { signal: a.signal } : {}) })),
    use: <T>(fn: () => T | PromiseLike<T>, a?: SubjectAcquireOptions) => queue.add(async () => fn(), { ...(a?.priority !== undefined ? { priority: a.priority } : {}) }) as Promise<T>,
    resize: (permits: number) => {
      queue.concurrency = permits;
    },
  };
};

/**
 * What pg-pool needs from a Client to lend it, in memory: the pool's own checkout, queue and
 * release logic runs unchanged, without a server (the real-server tests are pg-pool.test.ts).
 */
export class MemoryClient extends EventEmitter {
  _queryable = true;
  _ending = false;
  connect(cb: (err?: Error) => void): void {
    queueMicrotask(() => cb());
  }
  end(cb?: () => void): void {
    this._ending = true;
    if (cb !== undefined) queueMicrotask(cb);
  }
  ref(): void {}
  unref(): void {}
}

export const pgPoolSubject: SubjectFactory = (o) => {
  const pool = new pg.Pool({ max: o.permits, Client: MemoryClient as unknown as typeof pg.Client, idleTimeoutMillis: 0 });
  const h = instrument(pool, { name: o.name, ...(o.leakThresholdMs !== undefined ? { leakThresholdMs: o.leakThresholdMs } : {}) });
  return {
    ...common(h),
    acquire: () =>
      pool.connect().then((client) => {
        // This checkout's release (what the callback form passes as `done`): `client.release` is
        // reassigned by pg at the client's next checkout, so reading it later would release the
        // next borrower, in pg as in the adapter.
        const done = client.release;
        return {
          release: () => {
            // pg throws on a second release ("Release called on client which has already been
            // released to the pool."): its own behaviour, kept; the glue swallows it so the suite
            // can check the counts and the report.
            try {
              done.call(client);
            } catch {
              /* see above */
            }
          },
        };
      }),
  };
};

export const tarnSubject: SubjectFactory = (o) => {
  let n = 0;
  const pool = new TarnPool<{ n: number }>({ create: () => Promise.resolve({ n: ++n }), destroy: noop, min: 0, max: o.permits });
  const h = instrument(pool, { name: o.name, ...(o.leakThresholdMs !== undefined ? { leakThresholdMs: o.leakThresholdMs } : {}) });
  return {
    ...common(h),
    acquire: () =>
      pool.acquire().promise.then((r) => ({
        // tarn answers false to a second release (the adapter counts it): nothing to swallow.
        release: () => void pool.release(r),
      })),
  };
};
