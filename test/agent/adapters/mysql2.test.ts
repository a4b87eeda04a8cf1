// mysql2's pool under instrument() against a real MariaDB (Debian's mariadb-server, started by
// scripts/support/mariadb.ts): through the promise API, a connection never released is reported as
// a leak at the line that took it, a waiter is counted while the pool is full, a second release is
// counted with its line; through the callback API, the pool's refusals are counted and results and
// errors are unchanged; untrack() restores mysql2's own methods.
// Not run through the shared semantic suite: the pool hands a connection over through
// process.nextTick, which the suite's microtask flushes do not reach, and opens it over a socket
// with the server's handshake (real I/O); mysql2 makes its own connections, so there is no
// in-memory client to give it as there is for pg.
import mysql from "mysql2";
import mysqlPromise from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { startMariaDb, type MariaDbServer } from "../../../scripts/support/mariadb.js";
import { firstUserFrame, here } from "../semantic-suite.js";
import { eventsOf, rejectionOf, thrownBy, tracked, uniqueName, until } from "./helpers.js";

let server: MariaDbServer;

beforeAll(async () => {
  server = await startMariaDb();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describe("mysql2 pool on a real MariaDB", () => {
  it("promise API: a connection never released raises leak_suspected at the line that took it; waiters and a double release are counted", async () => {
    const pool = mysqlPromise.createPool({ host: server.host, port: server.port, user: "root", connectionLimit: 2 });
    try {
      const h = tracked(instrument(pool, { name: uniqueName("mysql"), leakThresholdMs: 300 }));
      expect(h.describe()).toMatchObject({ kind: "mysql2", cap: 2, queue: "fifo", maxWaiters: null, acquireTimeoutMs: null });
      const [rows] = await pool.query("select 41 + 1 as n");
      expect(rows).toEqual([{ n: 42 }]);
      const bad = (await rejectionOf(pool.query("select * from no_such_table"))) as Error & { code?: string };
      expect(bad.code).toBe("ER_NO_DB_ERROR");

      const at = here(); const leaked = await pool.getConnection();
      const other = await pool.getConnection();
      expect(h.snapshot()).toMatchObject({ inUse: 2, available: 0, waiters: 0 });
      const queued = pool.query("select 2 as n");
      await until(() => h.snapshot().waiters === 1, "a queued getConnection");
      const leak = await until(() => eventsOf(h, "leak_suspected")[0], "a leak_suspected event", 10_000);
      expect(firstUserFrame(leak.stack)).toEqual(at);
      other.release();
      expect((await queued)[0]).toEqual([{ n: 2 }]);
      // The second release: mysql2 ignores it; the adapter counts it, with this line.
      const again = here(); other.release();
      const double = eventsOf(h, "double_release");
      expect(double).toHaveLength(1);
      expect(firstUserFrame(double[0].stack)).toEqual(again);
      leaked.release();
      await until(() => eventsOf(h, "leak_resolved").length > 0, "leak_resolved on release");
      expect(h.sample(Date.now())).toMatchObject({ inUse: 0, waiters: 0, acquired: 5, released: 5, doubleReleases: 1 });
    } finally {
      await pool.end();
    }
  }, 60_000);

  it("callback API: refusals counted as rejections, results unchanged; untrack() restores getConnection and each connection's release", async () => {
    const pool = mysql.createPool({ host: server.host, port: server.port, user: "root", connectionLimit: 1, waitForConnections: false });
    const h = tracked(instrument(pool, { name: uniqueName("mysql") }));
    expect(h.describe().maxWaiters).toBe(0);
    const n = await new Promise<unknown>((resolve, reject) => pool.query("select 7 as n", (err, r) => (err ? reject(err) : resolve(r))));
    expect(n).toEqual([{ n: 7 }]);
    const conn = await new Promise<mysql.PoolConnection>((resolve, reject) => pool.getConnection((err, c) => (err ? reject(err) : resolve(c))));
    // Full, and this pool does not queue: mysql2's own error, counted as a rejection.
    const refused = await new Promise<Error | null>((resolve) => pool.getConnection((err) => resolve(err)));
    expect(refused?.message).toBe("No connections available.");
    expect(h.snapshot()).toMatchObject({ inUse: 1, waiters: 0 });
    conn.release();
    expect(h.sample(Date.now())).toMatchObject({ inUse: 0, acquired: 2, released: 2, rejections: 1 });

    h.untrack();
    expect(Object.prototype.hasOwnProperty.call(pool, "getConnection")).toBe(false);
    expect(Object.prototype.hasOwnProperty.call(conn, "release")).toBe(false);
    await new Promise<void>((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve())));
    // An unlimited pool has no cap to watch.
    const unlimited = mysql.createPool({ host: server.host, port: server.port, user: "root", connectionLimit: 0 });
    expect(thrownBy(() => instrument(unlimited, { name: uniqueName("mysql") }))).toBeInstanceOf(SemscopeAdapterError);
    await new Promise<void>((resolve) => unlimited.end(() => resolve()));
  }, 60_000);
});
