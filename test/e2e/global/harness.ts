// Replicas in child processes (fixtures/replica.ts) talking IPC, a real hub from createHub, and
// small readers for /api/state and /api/alerts. Deadlines, not sleeps (the stream harness's until()).
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createHub, type Hub } from "../../../main/hub/index.js";
import type { GlobalView } from "../../../shared/protocol/index.js";
import { alertsOf, forkChild, onCleanup, START_TIMEOUT_MS, stateOf } from "../stream/harness.js";
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
  const c = forkChild<ReplicaMessage>(REPLICA, env, {
    label: `replica ${env.INSTANCE}`,
    failure: (m) => (m.type === "error" ? m.message : undefined),
    stderrTail: 4000,
  });
  const ready = await c.next("ready", START_TIMEOUT_MS);
  await c.next("connected", START_TIMEOUT_MS);
  return {
    child: c.child,
    pid: ready.pid,
    agentId: ready.agentId,
    instance: env.INSTANCE,
    ask: (msg, type, timeoutMs = 30_000) => c.ask(msg, type, timeoutMs),
    kill: async (signal) => {
      await c.kill(signal);
    },
    stderr: c.stderr,
  };
}

export async function startHub(): Promise<Hub> {
  const hub = await createHub({ port: 0, host: "127.0.0.1" });
  onCleanup(() => hub.close());
  return hub;
}

export { alertsOf, stateOf };

/** The global view of `<service>/<name>` in /api/state, if there is one. */
export async function globalOf(url: string, key: string): Promise<GlobalView | undefined> {
  return (await stateOf(url)).globals?.find((g) => g.key === key);
}
