// Replicas in child processes (fixtures/replica.ts) talking IPC, a real hub from createHub, and
// small readers for /api/state and /api/alerts. Deadlines, not sleeps (the stream harness's until()).
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createHub, type Hub } from "../../../main/hub/index.js";
import type { Alert, GlobalView, HubState } from "../../../shared/protocol/index.js";
import { onCleanup, ROOT, START_TIMEOUT_MS } from "../stream/harness.js";
import type { ReplicaMessage } from "./fixtures/messages.js";

const REPLICA = fileURLToPath(new URL("./fixtures/replica.ts", import.meta.url));

export interface Replica {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly agentId: string;
  readonly instance: string;
  /** Sends `cmd` and waits for the next message of `type` after it. */
  ask<T extends ReplicaMessage["type"]>(msg: Record<string, unknown>, type: T, timeoutMs?: number): Promise<Extract<ReplicaMessage, { type: T }>>;
  kill(signal: NodeJS.Signals): Promise<void>;
  stderr(): string;
}

export async function startReplica(env: Record<string, string>): Promise<Replica> {
  const child = fork(REPLICA, [], {
    cwd: ROOT,
    execArgv: ["--import", "tsx"],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "pipe", "ipc"],
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const exited = () => (gone() ? Promise.resolve() : new Promise<void>((r) => child.once("exit", () => r())));
  onCleanup(async () => {
    if (gone()) return;
    child.kill("SIGKILL");
    await exited();
  });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const messages: ReplicaMessage[] = [];
  const wake = new Set<() => void>();
  child.on("message", (m) => {
    messages.push(m as ReplicaMessage);
    for (const w of [...wake]) w();
  });
  const next = <T extends ReplicaMessage["type"]>(type: T, from: number, timeoutMs: number) =>
    new Promise<Extract<ReplicaMessage, { type: T }>>((resolve, reject) => {
      const check = () => {
        const errMsg = messages.slice(from).find((m) => m.type === "error");
        const found = messages.slice(from).find((m) => m.type === type);
        if (found === undefined && errMsg === undefined && !gone()) return;
        done();
        if (found !== undefined) resolve(found as Extract<ReplicaMessage, { type: T }>);
        else reject(new Error(`replica ${env.INSTANCE}: ${errMsg !== undefined ? (errMsg as { message: string }).message : "exited"} before "${type}"; stderr: ${err}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`replica ${env.INSTANCE}: no "${type}" within ${timeoutMs} ms; stderr: ${err}`));
      }, timeoutMs);
      const onExit = () => check();
      const done = () => {
        clearTimeout(timer);
        wake.delete(check);
        child.off("exit", onExit);
      };
      wake.add(check);
      child.once("exit", onExit);
      check();
    });
  const ready = await next("ready", 0, START_TIMEOUT_MS);
  await next("connected", 0, START_TIMEOUT_MS);
  return {
    child,
    pid: ready.pid,
    agentId: ready.agentId,
    instance: env.INSTANCE,
    ask: (msg, type, timeoutMs = 30_000) => {
      const from = messages.length;
      child.send(msg);
      return next(type, from, timeoutMs);
    },
    kill: async (signal) => {
      child.kill(signal);
      await exited();
    },
    stderr: () => err,
  };
}

export async function startHub(): Promise<Hub> {
  const hub = await createHub({ port: 0, host: "127.0.0.1" });
  onCleanup(() => hub.close());
  return hub;
}

async function getJson<T>(url: string, path: string): Promise<T> {
  const res = await fetch(`${url}${path}`);
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

export const stateOf = (url: string) => getJson<HubState>(url, "/api/state");
export const alertsOf = async (url: string) => (await getJson<{ alerts: Alert[] }>(url, "/api/alerts")).alerts;

/** The global view of `<service>/<name>` in /api/state, if there is one. */
export async function globalOf(url: string, key: string): Promise<GlobalView | undefined> {
  return (await stateOf(url)).globals?.find((g) => g.key === key);
}
