// A service fixture run as a child process (fork, IPC, tsx) beside the test: its messages are
// collected, and every child still running is killed by killServices() after each test.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { until } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const children: ChildProcess[] = [];

export interface ServiceChild<M extends { type: string }> {
  readonly messages: M[];
  /** The first message of `type`, waited for (the child's stderr is in the timeout's message). */
  next(type: M["type"], timeoutMs: number): Promise<M>;
  /** A message to the child (process.on("message") there). */
  send(message: Record<string, unknown>): void;
}

export function startService<M extends { type: string }>(fixture: string, env: Record<string, string>): ServiceChild<M> {
  const child = fork(fixture, [], { cwd: ROOT, execArgv: ["--import", "tsx"], env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "pipe", "ipc"] });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const messages: M[] = [];
  child.on("message", (m) => messages.push(m as M));
  const next = (type: M["type"], timeoutMs: number) =>
    until(() => messages.find((m) => m.type === type), `"${type}" from ${fixture} (stderr: ${stderr.slice(-1500)})`, timeoutMs);
  return { messages, next, send: (message) => void child.send(message) };
}

export async function killServices(): Promise<void> {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill("SIGKILL");
      await new Promise((r) => c.once("exit", r));
    }
  }
}
