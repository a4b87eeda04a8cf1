// Issue 30: undici, bottleneck and piscina alone and under instrument(), uncontended (one call at
// a time, so nothing waits): what every request, job or task pays for being watched.
//
// undici: pool.request() + body.text() on a Pool whose connections are in memory (MemoryConnection
// answers every request at once, as a keep-alive connection would): undici's own pool, request()
// API, handler and body stream run, without a socket, so the adapter's cost is not lost in the
// network's. bottleneck: schedule() of an async no-op on a local limiter (bottleneck yields to a
// timer per job, so a cycle lasts about a millisecond of wall time while costing microseconds of
// CPU). piscina: run() of an echo task (fixtures/piscina-echo.mjs) on one worker thread.
// The worker thread's CPU time counts in adapter-ab.ts's process CPU time, for both rows alike.
import { EventEmitter } from "node:events";
import Bottleneck from "bottleneck";
import { Piscina } from "piscina";
import { Pool, type Dispatcher } from "undici";
import { instrument } from "../../agent/src/index.js";
import { cycleOnly, pair, uniqueName } from "./adapter-contenders.js";
import type { Contender } from "./contenders.js";

const ECHO = new URL("./fixtures/piscina-echo.mjs", import.meta.url).href;

const BODY = Buffer.from("ok");
const noop = (): void => undefined;

/** What a Pool asks of a connection: dispatch() answering each request with a 200 and "ok", a microtask later. */
class MemoryConnection extends EventEmitter {
  dispatch(_opts: unknown, handler: Dispatcher.DispatchHandler): boolean {
    queueMicrotask(() => {
      handler.onConnect?.(noop);
      handler.onHeaders?.(200, [], noop, "OK");
      handler.onData?.(BODY);
      handler.onComplete?.([]);
    });
    return true;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  destroy(): Promise<void> {
    return Promise.resolve();
  }
}

/** Both rows of a pair with adapter-ab.ts's cycle count set (see Contender.abCycles). */
const withAbCycles = (rows: Contender[], abCycles: number): Contender[] => rows.map((r) => ({ ...r, abCycles }));

export const POOL_CONTENDERS: readonly Contender[] = [
  ...withAbCycles(pair("undici", "undici 7 Pool over in-memory connections: request() + body.text()", (permits, on) => {
    const pool = new Pool("http://bench.invalid", { connections: permits, factory: () => new MemoryConnection() as unknown as Dispatcher });
    const h = on ? instrument(pool, { name: uniqueName("ud") }) : undefined;
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) {
          const r = await pool.request({ path: "/", method: "GET" });
          await r.body.text();
        }
      },
      async () => {
        h?.untrack();
        await pool.close();
      },
    );
  }), 5_000),
  ...withAbCycles(pair("bottleneck", "bottleneck 2.19 local limiter: schedule() of an async no-op", (permits, on) => {
    const lim = new Bottleneck({ maxConcurrent: permits });
    const h = on ? instrument(lim, { name: uniqueName("bn") }) : undefined;
    const job = () => Promise.resolve();
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) await lim.schedule(job);
      },
      async () => {
        h?.untrack();
        await lim.stop();
      },
    );
  }), 100),
  ...withAbCycles(pair("piscina", "piscina 5 on one worker thread: run() of an echo task", (permits, on) => {
    const pool = new Piscina({ filename: ECHO, minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: permits });
    const h = on ? instrument(pool, { name: uniqueName("px") }) : undefined;
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) await pool.run(i);
      },
      async () => {
        h?.untrack();
        await pool.destroy();
      },
    );
  }), 500),
];
