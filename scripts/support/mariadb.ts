// A real MariaDB (Debian's mariadb-server) for a test: `mariadbd` on a free port (TCP on 127.0.0.1,
// its unix socket in the same temporary folder), an empty data folder and --skip-grant-tables (any
// user, no password: the counterpart of PostgreSQL's trust auth), no binary log. As root it is
// started with --user=mysql on a folder that user owns (mariadbd drops to it itself). The server is
// stopped when the test process exits, also when the test failed. Here, next to postgres.ts, so
// that a benchmark may start one too (benchmarks do not import from test/).
import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { awaitServer } from "./await-server.js";
import { exited, systemUserIds } from "./child-process.js";
import { freePort } from "./free-port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface MariaDbServer {
  /** mysql://root@127.0.0.1:<port>/ (no database selected) */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** SIGTERM (a clean shutdown); resolves once the server has exited and its folder is gone. */
  stop(): Promise<void>;
}

const BIN = process.env.SEMSCOPE_MARIADBD ?? "/usr/sbin/mariadbd";
/** The message startMariaDb() throws when there is no mariadbd (callers may test for it). */
export const MARIADB_NOT_INSTALLED = "MariaDB not installed: apt-get install mariadb-server (.ci/run does this)";
const START_TIMEOUT_MS = 30_000;

interface Live {
  dir: string;
  child: ChildProcess;
}
const live = new Set<Live>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  // Synchronous on purpose: 'exit' runs no more event-loop turns.
  process.on("exit", () => {
    for (const l of live) {
      l.child.kill("SIGKILL");
      rmSync(l.dir, { recursive: true, force: true });
    }
  });
}

const asRoot = process.getuid?.() === 0;

/** mariadbd on a free port with an empty data folder; throws a clear error when MariaDB is not installed. */
export async function startMariaDb(): Promise<MariaDbServer> {
  if (!existsSync(BIN)) throw new Error(MARIADB_NOT_INSTALLED);
  hookExit();
  const dir = mkdtempSync(join(tmpdir(), "semscope-mariadb-"));
  const data = join(dir, "data");
  mkdirSync(data, { mode: 0o700 });
  if (asRoot) {
    const { uid, gid } = systemUserIds("mysql", MARIADB_NOT_INSTALLED);
    chownSync(dir, uid, gid);
    chownSync(data, uid, gid);
  }
  const port = await freePort();
  // --no-defaults: nothing from /etc/mysql (the system server's socket, pid file and log paths).
  const args = [
    "--no-defaults", `--datadir=${data}`, `--socket=${join(dir, "mariadb.sock")}`, `--pid-file=${join(dir, "mariadb.pid")}`,
    `--port=${port}`, "--bind-address=127.0.0.1", "--skip-grant-tables", "--skip-log-bin", "--skip-name-resolve",
    "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=4M", "--max-connections=100",
    ...(asRoot ? ["--user=mysql"] : []),
  ];
  const child = spawn(BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
  const entry: Live = { dir, child };
  live.add(entry);
  let out = "";
  let ready = false;
  const onData = (d: Buffer): void => {
    out = (out + d.toString()).slice(-4000);
    if (out.includes("ready for connections")) ready = true;
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  let spawnError: Error | undefined;
  child.once("error", (err) => (spawnError = err));

  const stop = async (): Promise<void> => {
    if (!live.has(entry)) return;
    live.delete(entry);
    child.kill("SIGTERM");
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  };

  await awaitServer({ what: "mariadbd", child, port, timeoutMs: START_TIMEOUT_MS, pollMs: 50, notInstalled: MARIADB_NOT_INSTALLED, ready: () => ready, spawnError: () => spawnError, output: () => out, stop });
  return { url: `mysql://root@127.0.0.1:${port}/`, host: "127.0.0.1", port, stop };
}
