// Issue 30: mysql2's pool alone and under instrument(), on a real MariaDB that this run starts for
// these rows (scripts/support/mariadb.ts: a free port, a temporary folder, stopped after the report
// and at exit). Without mariadbd the rows are skipped.
//
// One cycle is getConnection() then conn.release() through the callback API on a pool whose
// connections are already open (the first cycles open them): mysql2 lends a free connection on the
// next tick without a round trip, so what is timed is the pool's own checkout and return, the path
// the adapter wraps. The CPU A/B (adapter-ab.ts) times these rows too (`callsStayInProcess`).
import mysql from "mysql2";
import { instrument } from "../../agent/src/index.js";
import { MARIADB_NOT_INSTALLED, startMariaDb, type MariaDbServer } from "../../scripts/support/mariadb.js";
import { cycleOnly, pair, uniqueName } from "./adapter-contenders.js";
import type { BenchResource } from "./contenders.js";

class BenchMariaDb implements BenchResource {
  private server: MariaDbServer | undefined;

  async start(): Promise<string | undefined> {
    try {
      this.server = await startMariaDb();
    } catch (err) {
      if (err instanceof Error && err.message === MARIADB_NOT_INSTALLED) return err.message;
      throw err;
    }
    return undefined;
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  get address(): { host: string; port: number } {
    if (this.server === undefined) throw new Error("mysql2 rows: mariadbd was not started (run.ts starts a row's `needs` first)");
    return { host: this.server.host, port: this.server.port };
  }
}

const mariadb = new BenchMariaDb();

const checkout = (pool: mysql.Pool): Promise<void> =>
  new Promise<void>((resolve, reject) =>
    pool.getConnection((err, conn) => {
      if (err) return reject(err);
      conn.release();
      resolve();
    }),
  );

export const MARIADB_CONTENDERS = pair(
  "mysql2",
  "mysql2 3.24 pool on MariaDB 10.11, connections open: getConnection() then conn.release() (callback API)",
  (permits, on) => {
    const pool = mysql.createPool({ ...mariadb.address, user: "root", connectionLimit: permits });
    const h = on ? instrument(pool, { name: uniqueName("mysql2") }) : undefined;
    return cycleOnly(
      async (n) => {
        for (let i = 0; i < n; i++) await checkout(pool);
      },
      async () => {
        h?.untrack();
        await new Promise<void>((resolve) => pool.end(() => resolve()));
      },
    );
  },
  mariadb,
).map((c) => ({ ...c, callsStayInProcess: true }));
