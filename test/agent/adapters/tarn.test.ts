// knex's tarn pool under instrument() against a real PostgreSQL: a transaction never committed is
// reported as a leak at the line that called knex.transaction(), the pool's pending acquires and
// pending creates are read from tarn, its acquire timeout is counted, a second release of a
// connection is counted, knex's results and errors are unchanged, and untrack() restores tarn's own
// methods. The shared semantic suite runs on an in-memory tarn pool (semantics.test.ts).
import knexFactory, { type Knex } from "knex";
import { Pool as TarnPool } from "tarn";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { startPostgres, type PostgresServer } from "../../../scripts/support/postgres.js";
import { firstUserFrame, here } from "../semantic-suite.js";
import { eventsOf, rejectionOf, thrownBy, tracked, uniqueName, until } from "./helpers.js";

let server: PostgresServer;
const open: Knex[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterEach(async () => {
  for (const db of open.splice(0)) await db.destroy();
});
afterAll(async () => {
  await server?.stop();
});

function knex(max: number, acquireConnectionTimeout = 60_000): Knex {
  // knex logs the acquire timeout this test provokes; the test reads the error itself.
  const quiet = (): void => undefined;
  const db = knexFactory({ client: "pg", connection: server.url, pool: { min: 0, max }, acquireConnectionTimeout, log: { warn: quiet, error: quiet, deprecate: quiet, debug: quiet } });
  open.push(db);
  return db;
}

describe("tarn (knex's pool) on a real PostgreSQL", () => {
  it("a transaction never committed raises leak_suspected at the line that called knex.transaction(); a full pool's acquire times out, counted", async () => {
    const db = knex(2, 300);
    const h = tracked(instrument(db, { name: uniqueName("knex"), leakThresholdMs: 400 }));
    expect(h.describe()).toMatchObject({ kind: "tarn", cap: 2, queue: "fifo", acquireTimeoutMs: 300 });
    expect(((await db.raw("select 41 + 1 as n")) as { rows: unknown[] }).rows).toEqual([{ n: 42 }]);
    const bad = (await rejectionOf(db("no_such_table").select())) as Error & { code?: string };
    expect(bad.code).toBe("42P01");

    const at = here(); const forgotten = await db.transaction();
    await forgotten.raw("select 1");
    const other = await db.transaction();
    expect(h.snapshot()).toMatchObject({ inUse: 2, available: 0, waiters: 0 });
    // The pool is full: the next acquire waits in tarn's pendingAcquires, then knex's own timeout error.
    const waiting = rejectionOf(db.raw("select 2"));
    await until(() => h.snapshot().waiters === 1, "a pending acquire");
    const timedOut = (await waiting) as Error;
    expect(timedOut.name).toBe("KnexTimeoutError");
    expect(h.snapshot().waiters).toBe(0);

    // Both transactions are held past the threshold; the forgotten one is the older.
    const leaks = await until(() => eventsOf(h, "leak_suspected").length === 2 && eventsOf(h, "leak_suspected"), "two leak_suspected events", 10_000);
    expect(firstUserFrame(leaks[0].stack)).toEqual(at);
    const holders = h.snapshot().holders;
    expect(holders).toHaveLength(2);
    expect(firstUserFrame(holders[0].stack)).toEqual(at);

    await other.commit();
    await forgotten.rollback();
    await until(() => eventsOf(h, "leak_resolved").length === 2, "both leaks resolved on commit and rollback");
    expect(h.sample(Date.now())).toMatchObject({ inUse: 0, timeouts: 1, doubleReleases: 0, acquired: 4, released: 4 });
  }, 60_000);

  it("pending creates are read from tarn (`opening`), a second release is counted, untrack() puts tarn's and knex's methods back", async () => {
    const db = knex(3);
    const h = tracked(instrument(db, { name: uniqueName("knex") }));
    // knex's acquireConnection() reaches pool.acquire() synchronously: three callers, three connections being opened.
    const pending = [db.client.acquireConnection(), db.client.acquireConnection(), db.client.acquireConnection()] as Promise<unknown>[];
    expect(h.snapshot()).toMatchObject({ inUse: 0, waiters: 3, opening: 3 });
    const connections = await Promise.all(pending);
    expect(h.snapshot()).toMatchObject({ inUse: 3, waiters: 0, opening: 0 });
    for (const c of connections) await db.client.releaseConnection(c);
    // tarn answers false to a connection it does not have on loan; knex ignores that. Counted once, with the caller's line.
    const at = here(); await db.client.releaseConnection(connections[0]);
    const double = eventsOf(h, "double_release");
    expect(double).toHaveLength(1);
    expect(firstUserFrame(double[0].stack)).toEqual(at);
    expect(h.sample(Date.now())).toMatchObject({ inUse: 0, acquired: 3, released: 3, doubleReleases: 1 });

    const pool = db.client.pool as object;
    h.untrack();
    expect(Object.prototype.hasOwnProperty.call(pool, "acquire")).toBe(false);
    expect((pool as TarnPool<unknown>).acquire).toBe(TarnPool.prototype.acquire);
    expect(Object.prototype.hasOwnProperty.call(db.client, "transaction")).toBe(false);
    await db.transaction(async (trx) => trx.raw("select 1"));
    // A second instrument() of the same pool after untrack() is allowed; twice at once is not.
    const again = tracked(instrument(pool, { name: uniqueName("tarn") }));
    expect(thrownBy(() => instrument(db, { name: uniqueName("knex") }))).toBeInstanceOf(SemscopeAdapterError);
    again.untrack();
  }, 60_000);

  it("a knex instance without a pool is refused with a clear error", () => {
    const noConnection = knexFactory({ client: "pg" });
    const err = thrownBy(() => instrument(noConnection, { name: uniqueName("knex") })) as SemscopeAdapterError;
    expect(err).toBeInstanceOf(SemscopeAdapterError);
    expect(err.message).toMatch(/no tarn pool/);
  });
});
