// A benchmark child process (tsx, IPC): commands in as { cmd }, messages out with a `type`.
import { fork, type ChildProcess } from "node:child_process";
import { setPriority } from "node:os";
import { fileURLToPath } from "node:url";

const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

export interface Child<M extends { type: string }> {
  send(cmd: string): void;
  next<T extends M["type"]>(type: T, timeoutMs: number): Promise<Extract<M, { type: T }>>;
  stop(): Promise<void>;
}

/**
 * Forks `file` (relative to this folder, or absolute) with `env` added; `nice` > 0 runs it at that
 * lower scheduling priority (what a process may do to itself without privileges).
 */
export function spawnChild<M extends { type: string }>(file: string, env: Record<string, string>, execArgv: string[] = [], nice = 0): Child<M> {
  const path = file.startsWith("/") ? file : fileURLToPath(new URL(file, import.meta.url));
  const proc = fork(path, [], {
    execArgv: [...execArgv, "--import", "tsx"],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  children.add(proc);
  if (nice > 0 && proc.pid !== undefined) setPriority(proc.pid, nice);
  const inbox: M[] = [];
  const waiting: (() => void)[] = [];
  proc.on("message", (m) => {
    inbox.push(m as M);
    for (const w of waiting.splice(0)) w();
  });
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  return {
    send: (cmd) => proc.send({ cmd }),
    next: (type, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${file}: no "${type}" within ${timeoutMs} ms`)), timeoutMs);
        const gone = () => reject(new Error(`${file} exited before "${type}"`));
        const look = () => {
          const i = inbox.findIndex((m) => m.type === type);
          if (i < 0) return void waiting.push(look);
          clearTimeout(timer);
          proc.off("exit", gone);
          resolve(inbox.splice(i, 1)[0] as never);
        };
        proc.once("exit", gone);
        look();
      }),
    stop: async () => {
      if (proc.connected) proc.disconnect();
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
      children.delete(proc);
    },
  };
}
