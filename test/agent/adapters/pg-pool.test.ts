// node-postgres Pool under instrument() against a real PostgreSQL, streamed by the real agent in a
// child process to a real hub (createHub): a forgotten client.release() on an error path raises
// `leak` with the stack of that line, a burst of pg_sleep queries raises `convoy`, and at every
// sample the pool's own counts (totalCount, idleCount, waitingCount) and ours agree.
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createHub, type Hub } from "../../../main/hub/index.js";
import { instrument, SemscopeAdapterError, type Sample } from "../../../agent/src/index.js";
import type { Alert } from "../../../shared/protocol/index.js";
import { startPostgres, type PostgresServer } from "../../../scripts/support/postgres.js";
import { firstUserFrame, here } from "../semantic-suite.js";
import { eventsOf, rejectionOf, thrownBy, tracked, uniqueName, until } from "./helpers.js";
import { killServices, startService, type ServiceChild } from "./service-child.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/pg-service.ts", import.meta.url));

interface SampleMsg {
  type: "sample";
  s: Sample;
  pool: { totalCount: number; idleCount: number; waitingCount: number };
  checkedOut: number;
  holders: number;
}
type Msg = SampleMsg | { type: "ready" | "done" | "burst-over" } | { type: "leaked"; at: { file: string; line: number } } | { type: "double"; message: string };

let server: PostgresServer;
let hub: Hub;

beforeAll(async () => {
  server = await startPostgres();
  hub = await createHub({ port: 0, log: () => undefined });
}, 60_000);
afterAll(async () => {
  await hub?.close();
  await server?.stop();
});
afterEach(killServices);

function service(scenario: "leak" | "convoy", instance: string): ServiceChild<Msg> {
  return startService<Msg>(FIXTURE, { PG_URL: server.url, HUB_URL: hub.url, SCENARIO: scenario, INSTANCE: instance });
}

const alertOn = (rule: string, key: string): Alert | undefined => hub.state().alerts.find((a) => a.rule === rule && a.key === key);

function expectCountsAgree(samples: SampleMsg[], exactHolders: boolean): void {
  expect(samples.length).toBeGreaterThan(4);
  for (const [i, m] of samples.entries()) {
    const why = `sample ${i}: ${JSON.stringify({ s: { cap: m.s.cap, inUse: m.s.inUse, waiters: m.s.waiters }, pool: m.pool, checkedOut: m.checkedOut, holders: m.holders })}`;
    expect(m.s.cap, why).toBe(5);
    expect(m.s.inUse, why).toBe(m.pool.totalCount - m.pool.idleCount);
    expect(m.s.available, why).toBe(5 - m.pool.totalCount + m.pool.idleCount);
    expect(m.s.waiters, why).toBe(m.pool.waitingCount);
    // The holders the adapter saw checked out are the service's own, never more than the pool's.
    if (exactHolders) expect(m.holders, why).toBe(m.checkedOut);
    expect(m.holders, why).toBeLessThanOrEqual(m.s.inUse);
  }
}

describe("pg Pool adapter on a real PostgreSQL", () => {
  it("a client never released on an error path raises `leak` at the line that checked it out; a double release is pg's own error, counted", async () => {
    const svc = service("leak", "leak-1");
    const leaked = (await svc.next("leaked", 30_000)) as { at: { file: string; line: number } };
    const double = (await svc.next("double", 30_000)) as { message: string };
    expect(double.message).toBe("Release called on client which has already been released to the pool.");
    const key = "pg-svc/leak-1/pg";
    const leak = await until(() => alertOn("leak", key), "a leak alert on the hub", 20_000);
    const holders = (leak.evidence as { holders: { stack?: string }[] }).holders;
    expect(holders).toHaveLength(1);
    expect(firstUserFrame(holders[0].stack)).toEqual(leaked.at);
    expect(leaked.at.file).toBe(FIXTURE);
    await until(() => alertOn("double_release", key), "a double_release alert on the hub", 20_000);
    await svc.next("done", 30_000);
    const samples = svc.messages.filter((m): m is SampleMsg => m.type === "sample");
    expectCountsAgree(samples, true);
    // The leaked client stays checked out: the pool and the adapter both say so to the end.
    expect(samples.at(-1)?.s.inUse).toBeGreaterThanOrEqual(1);
    expect(samples.reduce((n, m) => n + m.s.doubleReleases, 0)).toBe(1);
  }, 90_000);

  it("a burst of slow queries on a pool of 5 raises `convoy`; counts agree at every sample", async () => {
    const svc = service("convoy", "convoy-1");
    await svc.next("ready", 30_000);
    const key = "pg-svc/convoy-1/pg";
    const convoy = await until(() => alertOn("convoy", key), "a convoy alert on the hub", 40_000);
    expect(convoy.severity === "warning" || convoy.severity === "critical").toBe(true);
    expect(hub.state().semaphores.find((x) => x.key === key)).toMatchObject({ kind: "pg-pool", cap: 5, name: "pg" });
    await svc.next("done", 40_000);
    const samples = svc.messages.filter((m): m is SampleMsg => m.type === "sample");
    expectCountsAgree(samples, false);
    const busy = samples.filter((m) => m.s.waiters > 0);
    expect(busy.length).toBeGreaterThan(10);
    // Waits are far longer than holds: that is what makes it a convoy.
    expect(Math.max(...busy.map((m) => m.s.waitMs.p99))).toBeGreaterThan(2 * Math.min(...busy.filter((m) => m.s.holdMs.count > 0).map((m) => m.s.holdMs.p50)));
    expect(samples.at(-1)?.s).toMatchObject({ waiters: 0, inUse: 0 });
  }, 90_000);

  it("in process: results and errors unchanged, callback and promise forms, untrack() restores", async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 2, connectionTimeoutMillis: 200 });
    // pool.end() resolves once its clients are told to end, not once their connections are closed:
    // a connection still open when afterAll stops the server gets its FATAL 57P01 as an 'error'
    // nobody listens to any more (an uncaught exception that failed a CI run). Wait for each close.
    const closed: Promise<void>[] = [];
    pool.on("connect", (client) => closed.push(new Promise((resolve) => client.once("end", () => resolve()))));
    const h = tracked(instrument(pool, { name: uniqueName("pg"), leakThresholdMs: 60_000 }));
    expect(h.describe()).toMatchObject({ kind: "pg-pool", cap: 2, queue: "fifo", acquireTimeoutMs: 200 });
    expect((await pool.query("select 41 + 1 as n")).rows[0]).toEqual({ n: 42 });
    const bad = (await rejectionOf(pool.query("select * from no_such_table"))) as Error & { code?: string };
    expect(bad.code).toBe("42P01");
    // Callback form: done is the client's (wrapped) release, as pg passes client.release.
    const viaCallback = await new Promise<number>((resolve, reject) =>
      pool.connect((err, client, done) => {
        if (err !== undefined && err !== null) return reject(err);
        expect(done).toBe(client?.release);
        done();
        resolve(1);
      }),
    );
    expect(viaCallback).toBe(1);
    // Both clients held: the next connect times out with pg's own error, counted as a timeout.
    const at = here(); const a = await pool.connect();
    const b = await pool.connect();
    const timedOut = (await rejectionOf(pool.connect())) as Error;
    expect(timedOut.message).toBe("timeout exceeded when trying to connect");
    expect(h.snapshot().holders.map((x) => firstUserFrame(x.stack))[0]).toEqual(at);
    a.release();
    b.release();
    expect(h.sample(Date.now())).toMatchObject({ acquired: 5, released: 5, timeouts: 1, doubleReleases: 0, inUse: 0 });
    expect(eventsOf(h, "leak_suspected")).toEqual([]);
    // untrack(): the prototype's connect shows through again, and a client held across it gets pg's own release back.
    const c = await pool.connect();
    const wrapped = c.release;
    h.untrack();
    expect(Object.prototype.hasOwnProperty.call(pool, "connect")).toBe(false);
    expect(pool.connect).toBe(pg.Pool.prototype.connect);
    expect(c.release).not.toBe(wrapped);
    c.release();
    expect(pool.idleCount).toBe(pool.totalCount);
    await pool.end();
    await Promise.all(closed);
    expect(closed.length).toBeGreaterThan(0);
    expect(thrownBy(() => instrument({ connect() {}, query() {}, waitingCount: 0, idleCount: 0 }, { name: uniqueName("pg") }))).toBeInstanceOf(SemscopeAdapterError);
  }, 60_000);
});
