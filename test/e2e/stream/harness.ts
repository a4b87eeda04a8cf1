// Real processes and real sockets for the streaming end-to-end tests: the headless hub CLI, a hub
// child with IPC (for its memory), service children running the real agent, deadlines instead of
// sleeps, and the recording as the ground truth of what the hub stored.
import { fork, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { RecordLine } from "../../../main/hub/index.js";
import type { Alert, HubState, SamplesBatch } from "../../../shared/protocol/index.js";
import type { ChildMessage } from "./fixtures/messages.js";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const HUB_CLI = fileURLToPath(new URL("../../../main/hub/cli.ts", import.meta.url));
/** A tsx child on a loaded 2-core machine can take seconds to start. */
export const START_TIMEOUT_MS = 30_000;

const cleanups: (() => unknown)[] = [];
export function onCleanup(fn: () => unknown): void {
  cleanups.push(fn);
}
/** Runs every cleanup registered so far, newest first (afterEach / afterAll). */
export async function cleanupAll(): Promise<void> {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()?.();
    } catch {
      // A cleanup that fails (a process already gone) must not stop the others.
    }
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `cond` every `everyMs` until it returns a value other than undefined/false, or throws at the deadline. */
export async function until<T>(cond: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs: number, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

function killLater(child: ChildProcess): void {
  onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited(child);
  });
}

// ---- the hub CLI ----

export interface HubProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** SIGTERM, then the exit code (the CLI closes cleanly: recording flushed). */
  stop(): Promise<number | null>;
  stderr(): string;
}

/** `node --import tsx main/hub/cli.ts --port <port> ...args`; resolves on its first stdout line. */
export async function startHubCli(port: number, args: string[] = []): Promise<HubProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", HUB_CLI, "--port", String(port), ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  killLater(child);
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hub did not start within ${START_TIMEOUT_MS} ms: ${err}`)), START_TIMEOUT_MS);
    createInterface({ input: child.stdout! }).once("line", (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`hub exited ${code} before listening: ${err}`));
    });
  });
  const m = /^semscope hub listening on (http:\/\/[^:]+:(\d+))$/.exec(line);
  if (m === null) throw new Error(`unexpected first line from the hub: ${line}`);
  return {
    url: m[1],
    port: Number(m[2]),
    child,
    stop: () => {
      child.kill("SIGTERM");
      return exited(child);
    },
    stderr: () => err,
  };
}

// ---- forked children speaking IPC (fixtures/*.ts) ----

export interface Child<M extends { type: string } = ChildMessage> {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every message received so far, in order. */
  readonly messages: M[];
  send(msg: Record<string, unknown>): void;
  /** The first message (already received or still to come) of `type` that passes `pred`. */
  next<T extends M["type"]>(type: T, timeoutMs?: number, pred?: (m: Extract<M, { type: T }>) => boolean): Promise<Extract<M, { type: T }>>;
  /** Sends `msg` and waits for the reply of `type` that arrives after it. */
  ask<T extends M["type"]>(msg: Record<string, unknown>, type: T, timeoutMs?: number): Promise<Extract<M, { type: T }>>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
  readonly exit: Promise<number | null>;
  stderr(): string;
}

export interface ForkOptions<M> {
  execArgv?: string[];
  /** Names the child in errors (default: the script's file name). */
  label?: string;
  /** A message by which the child says it failed: its text, to reject a pending wait at once. */
  failure?: (m: M) => string | undefined;
  /** Keep only this many characters of stderr (a long-running child); all of it by default. */
  stderrTail?: number;
}

export function forkFixture(file: string, env: Record<string, string>, execArgv: string[] = []): Child {
  return forkChild<ChildMessage>(fixture(file), env, { execArgv, label: file });
}

/** `node --import tsx <script>` with IPC: its messages, waits on them with deadlines, SIGKILL at cleanup. */
export function forkChild<M extends { type: string }>(script: string, env: Record<string, string>, opts: ForkOptions<M> = {}): Child<M> {
  const label = opts.label ?? basename(script);
  const child = fork(script, [], {
    cwd: ROOT,
    execArgv: ["--import", "tsx", ...(opts.execArgv ?? [])],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "pipe", "ipc"],
  });
  killLater(child);
  let err = "";
  const tail = opts.stderrTail ?? Infinity;
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
    if (err.length > tail) err = err.slice(-tail);
  });
  const messages: M[] = [];
  const waiters = new Set<() => void>();
  child.on("message", (m) => {
    messages.push(m as M);
    for (const w of [...waiters]) w();
  });
  const exit = exited(child);
  const next = <T extends M["type"]>(type: T, timeoutMs = START_TIMEOUT_MS, pred: (m: Extract<M, { type: T }>) => boolean = () => true, from = 0) =>
    new Promise<Extract<M, { type: T }>>((resolve, reject) => {
      const find = () => messages.slice(from).find((m): m is Extract<M, { type: T }> => m.type === type && pred(m as Extract<M, { type: T }>));
      const failed = () => {
        if (opts.failure === undefined) return undefined;
        for (const m of messages.slice(from)) {
          const why = opts.failure(m);
          if (why !== undefined) return why;
        }
        return undefined;
      };
      const check = () => {
        const found = find();
        if (found !== undefined) {
          done();
          resolve(found);
          return;
        }
        const why = failed();
        if (why === undefined) return;
        done();
        reject(new Error(`${label}: ${why} before "${type}"; stderr: ${err.slice(-2000)}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${label}: no "${type}" message within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`));
      }, timeoutMs);
      const onExit = () => {
        // Messages sent just before exiting arrive before 'exit'; look once more.
        if (find() !== undefined || failed() !== undefined) return check();
        done();
        reject(new Error(`${label} exited before sending "${type}"; stderr: ${err.slice(-2000)}`));
      };
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
        child.off("exit", onExit);
      };
      waiters.add(check);
      child.once("exit", onExit);
      check();
    });
  return {
    child,
    pid: child.pid!,
    messages,
    send: (msg) => child.send(msg),
    next: (type, timeoutMs, pred) => next(type, timeoutMs, pred),
    ask: (msg, type, timeoutMs) => {
      const from = messages.length;
      child.send(msg);
      return next(type, timeoutMs, undefined, from);
    },
    kill: (signal) => {
      child.kill(signal);
      return exit;
    },
    exit,
    stderr: () => err,
  };
}

/** createHub in a child (fixtures/hub.ts) with these options; `mem()` is its memory after a GC. */
export async function startHubChild(options: Record<string, unknown> = {}): Promise<Child & { url: string; port: number; mem(): Promise<{ rss: number; heapUsed: number }> }> {
  const c = forkFixture("hub.ts", { HUB_OPTIONS: JSON.stringify(options) }, ["--expose-gc"]);
  const { url, port } = await c.next("hub");
  return Object.assign(c, { url, port, mem: () => c.ask({ cmd: "mem" }, "mem") });
}

export interface ServiceOptions {
  url: string;
  service: string;
  instance: string;
  intervalMs?: number;
  bufferBatches?: number;
  /** Semaphores the child creates at start: "leak", "double", "convoy", or "steady:<n>". */
  scenarios?: string[];
  leakThresholdMs?: number;
  /** Post every sample ack to the parent as it arrives. */
  notifyAcks?: boolean;
}

/** A service in a child process running the real agent (fixtures/service.ts); resolves once connected. */
export async function startService(o: ServiceOptions): Promise<Child & { agentId: string }> {
  const c = forkFixture("service.ts", {
    HUB_URL: o.url,
    SERVICE: o.service,
    INSTANCE: o.instance,
    INTERVAL_MS: String(o.intervalMs ?? 250),
    BUFFER_BATCHES: String(o.bufferBatches ?? 600),
    SCENARIOS: (o.scenarios ?? []).join(","),
    LEAK_THRESHOLD_MS: String(o.leakThresholdMs ?? 1000),
    NOTIFY_ACKS: o.notifyAcks === true ? "1" : "0",
  });
  const ready = await c.next("ready");
  await c.next("connected");
  return Object.assign(c, { agentId: ready.agentId });
}

// ---- HTTP ----

export async function getJson<T>(url: string, path: string): Promise<T> {
  const res = await fetch(`${url}${path}`);
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

export const alertsOf = async (url: string) => (await getJson<{ alerts: Alert[] }>(url, "/api/alerts")).alerts;
export const stateOf = (url: string) => getJson<HubState>(url, "/api/state");

// ---- the recording ----

/**
 * The complete lines of a recording. A test polls it while the hub is still appending, and a
 * big line reaches the file in more than one write: the text after the last newline may be
 * half a line, which the hub has not finished writing yet, so it is left for the next read.
 */
export function readRecording(file: string): RecordLine[] {
  const text = readFileSync(file, "utf8");
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as RecordLine);
}

/** Sample batches the hub stored (accepted) for `agentId`, in the order it stored them. */
export function storedBatches(lines: readonly RecordLine[], agentId: string): SamplesBatch[] {
  return lines.flatMap((l) => (l.k === "samples" && l.a === agentId ? [l.p] : []));
}

export { freePort } from "../../../scripts/support/free-port.js";

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
