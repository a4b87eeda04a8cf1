// A real PostgreSQL 15 for a test: initdb into a temporary folder and `postgres` on a free port
// (TCP on 127.0.0.1, its unix socket in the same folder), trust auth, no fsync. PostgreSQL refuses
// to run as root, so as root both run as the `postgres` user (runuser) on a folder it owns. The
// server is stopped when the test process exits, also when the test failed. Here, next to
// redis.ts, so that a benchmark may start one too (benchmarks do not import from test/).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { awaitServer } from "./await-server.js";
import { exited, systemUserIds } from "./child-process.js";
import { freePort } from "./free-port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly port: number;
  /** Fast shutdown (clients disconnected); resolves once the server has exited and its folder is gone. */
  stop(): Promise<void>;
}

const BIN = process.env.SEMSCOPE_PG_BIN ?? "/usr/lib/postgresql/15/bin";
const NOT_INSTALLED = "PostgreSQL not installed: apt-get install postgresql (.ci/run does this)";
const START_TIMEOUT_MS = 30_000;

interface Live {
  dir: string;
  data: string;
  child: ChildProcess;
}
const live = new Set<Live>();
let exitHooked = false;

/** The postmaster's pid (runuser sits between us and it, so signalling the child is not enough). */
function postmasterPid(data: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  // Synchronous on purpose: 'exit' runs no more event-loop turns. SIGQUIT is PostgreSQL's immediate shutdown.
  process.on("exit", () => {
    for (const l of live) {
      const pid = postmasterPid(l.data);
      if (pid !== undefined) {
        try {
          process.kill(pid, "SIGQUIT");
        } catch {
          /* already gone */
        }
      }
      l.child.kill("SIGKILL");
      rmSync(l.dir, { recursive: true, force: true });
    }
  });
}

const asRoot = process.getuid?.() === 0;

/** As root: the command run as the postgres user; otherwise as we are. */
function command(bin: string, args: string[]): [string, string[]] {
  const path = join(BIN, bin);
  return asRoot ? ["runuser", ["-u", "postgres", "--", path, ...args]] : [path, args];
}

function isReady(port: number, sockets: string): boolean {
  const [cmd, args] = command("pg_isready", ["-q", "-h", sockets, "-p", String(port), "-U", "postgres"]);
  return spawnSync(cmd, args).status === 0;
}

/** initdb + postgres on a free port; throws a clear error when PostgreSQL is not installed. */
export async function startPostgres(): Promise<PostgresServer> {
  if (!existsSync(join(BIN, "initdb")) || !existsSync(join(BIN, "postgres"))) throw new Error(NOT_INSTALLED);
  hookExit();
  const dir = mkdtempSync(join(tmpdir(), "semscope-pg-"));
  const data = join(dir, "data");
  mkdirSync(data, { mode: 0o700 });
  if (asRoot) {
    const { uid, gid } = systemUserIds("postgres", NOT_INSTALLED);
    chownSync(dir, uid, gid);
    chownSync(data, uid, gid);
  }
  const [initCmd, initArgs] = command("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"]);
  const init = spawnSync(initCmd, initArgs, { encoding: "utf8" });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status ?? init.signal}): ${(init.stderr || init.stdout || String(init.error)).slice(-2000)}`);
  }
  const port = await freePort();
  const [pgCmd, pgArgs] = command("postgres", [
    "-D", data, "-p", String(port), "-k", dir,
    "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=50",
  ]);
  const child = spawn(pgCmd, pgArgs, { stdio: ["ignore", "pipe", "pipe"] });
  const entry: Live = { dir, data, child };
  live.add(entry);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  child.stderr?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  let spawnError: Error | undefined;
  child.once("error", (err) => (spawnError = err));

  const stop = async (): Promise<void> => {
    if (!live.has(entry)) return;
    live.delete(entry);
    const pid = postmasterPid(data);
    // SIGINT is the fast shutdown: open connections are closed instead of waited for.
    if (pid !== undefined) {
      try {
        process.kill(pid, "SIGINT");
      } catch {
        /* already gone */
      }
    } else child.kill("SIGINT");
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  };

  await awaitServer({ what: "postgres", child, port, timeoutMs: START_TIMEOUT_MS, pollMs: 100, notInstalled: NOT_INSTALLED, ready: () => isReady(port, dir), spawnError: () => spawnError, output: () => out, stop });
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, stop };
}
