// A real server from Debian's packages for a test: spawned on a free port with a temporary folder,
// ready once its readiness URL answers 2xx, killed when the test process exits. It can be stopped
// and started again on the same port and folder (an outage the test controls).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exited } from "./child-process.js";
import { freePort } from "./free-port.js";

const START_TIMEOUT_MS = 30_000;

export interface DaemonSpec {
  /** The executable, and the Debian package that brings it (named in the error when missing). */
  readonly command: string;
  readonly debianPackage: string;
  /** Its arguments, given the port and its folder. */
  readonly args: (port: number, dir: string) => string[];
  /** The path that answers 2xx once it serves, e.g. "/-/ready". */
  readonly readyPath: string;
  /** Written into the folder before the first start: name → text. */
  readonly files?: (dir: string) => Record<string, string>;
}

export interface HttpDaemon {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** SIGTERM; resolves once it has exited. The folder stays for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder; resolves once ready. */
  start(): Promise<void>;
}

const running = new Set<ChildProcess>();
const dirs = new Set<string>();
let exitHooked = false;

export async function startHttpDaemon(spec: DaemonSpec): Promise<HttpDaemon> {
  const probe = spawnSync(spec.command, ["--version"], { encoding: "utf8" });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(`${spec.command} not installed: apt-get install ${spec.debianPackage} (.ci/run does this)`);
  }
  if (!exitHooked) {
    exitHooked = true;
    // Synchronous on purpose: 'exit' runs no more event-loop turns.
    process.on("exit", () => {
      for (const c of running) c.kill("SIGKILL");
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(join(tmpdir(), `semscope-${spec.command}-`));
  dirs.add(dir);
  for (const [name, text] of Object.entries(spec.files?.(dir) ?? {})) writeFileSync(join(dir, name), text);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const c = spawn(spec.command, spec.args(port, dir), { stdio: ["ignore", "pipe", "pipe"] });
    child = c;
    running.add(c);
    c.once("exit", () => running.delete(c));
    let out = "";
    const keep = (d: Buffer) => (out = (out + d.toString()).slice(-4000));
    c.stdout?.on("data", keep);
    c.stderr?.on("data", keep);
    const end = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (c.exitCode !== null) throw new Error(`${spec.command} exited (${c.exitCode}) on port ${port}: ${out}`);
      if (await fetch(`${url}${spec.readyPath}`).then((r) => r.ok, () => false)) return;
      if (Date.now() > end) {
        c.kill("SIGKILL");
        throw new Error(`${spec.command} was not ready on port ${port} within ${START_TIMEOUT_MS} ms: ${out}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await start();
  return {
    url,
    port,
    dir,
    start,
    stop: async () => {
      const c = child;
      child = undefined;
      if (c === undefined) return;
      c.kill("SIGTERM");
      await exited(c);
    },
  };
}
