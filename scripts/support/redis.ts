// A real Redis for a test or a benchmark: `redis-server` on a free port with a temporary folder and
// no persistence, stopped when the process exits. A test can stop it (SIGTERM or SIGKILL) and
// bring it back on the same port, empty, to see what its clients do while Redis is away.
// Here, not under test/, because bench/agent starts one too (its redis-semaphore rows), and
// benchmarks do not import from test/ (eslint.config.js).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { exited } from "./child-process.js";
import { freePort } from "./free-port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** SIGTERM; resolves once the process has exited. */
  stop(): Promise<void>;
  /** SIGKILL (a crash); resolves once the process has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port (stopping it first if it still runs); resolves once it answers PING. */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: Redis stays connected but answers nothing (a slow or hung Redis). */
  pause(): void;
  resume(): void;
}

/** The message startRedis() throws when there is no redis-server (callers may test for it). */
export const REDIS_NOT_INSTALLED = "redis-server not installed: apt-get install redis-server (.ci/run does this)";
const START_TIMEOUT_MS = 15_000;

const running = new Set<ChildProcess>();
const dirs = new Set<string>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  // Synchronous on purpose: 'exit' runs no more event-loop turns.
  process.on("exit", () => {
    for (const child of running) child.kill("SIGKILL");
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
}

function checkInstalled(): void {
  const r = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (r.error !== undefined || r.status !== 0) throw new Error(REDIS_NOT_INSTALLED);
}

/** One PING over a raw socket: true on +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: "127.0.0.1", port });
    let answer = "";
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(1000, () => done(false));
    sock.once("error", () => done(false));
    sock.once("connect", () => sock.write("PING\r\n"));
    sock.on("data", (d: Buffer) => {
      answer += d.toString();
      if (answer.includes("\r\n")) done(answer.startsWith("+PONG"));
    });
  });
}

async function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  running.add(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  child.stderr?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  let spawnError: Error | undefined;
  child.once("error", (err) => (spawnError = err));
  child.once("exit", () => running.delete(child));
  const end = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (spawnError !== undefined) {
      throw (spawnError as NodeJS.ErrnoException).code === "ENOENT" ? new Error(REDIS_NOT_INSTALLED) : spawnError;
    }
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`redis-server exited (${child.exitCode ?? child.signalCode}) on port ${port}: ${out}`);
    if (await ping(port)) return child;
    if (Date.now() > end) {
      child.kill("SIGKILL");
      throw new Error(`redis-server did not answer PING on port ${port} within ${START_TIMEOUT_MS} ms: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts redis-server on a free port; throws a clear error when it is not installed. */
export async function startRedis(): Promise<RedisServer> {
  checkInstalled();
  hookExit();
  const dir = mkdtempSync(join(tmpdir(), "semscope-redis-"));
  dirs.add(dir);
  let port = 0;
  let child: ChildProcess | undefined;
  // A free port can be taken between finding it and binding it: try a few.
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir);
    } catch (err) {
      if (attempt >= 2 || (err as Error).message === REDIS_NOT_INSTALLED) throw err;
    }
  }
  let current: ChildProcess | undefined = child;
  const signal = async (sig: NodeJS.Signals) => {
    const c = current;
    current = undefined;
    if (c === undefined) return;
    c.kill(sig);
    await exited(c);
    // Nothing in it is kept (no persistence); restart() makes it again.
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => signal("SIGTERM"),
    kill: () => signal("SIGKILL"),
    pause: () => void current?.kill("SIGSTOP"),
    resume: () => void current?.kill("SIGCONT"),
    restart: async () => {
      await signal("SIGTERM");
      mkdirSync(dir, { recursive: true });
      current = await launch(port, dir);
    },
  };
}
