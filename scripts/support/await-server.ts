// The start-up wait of a throwaway server a test spawned (postgres.ts, mariadb.ts): until it is
// ready, or it failed to spawn, exited, or took too long; on failure it is stopped and the error
// carries the end of its output.
import type { ChildProcess } from "node:child_process";

export interface ServerStart {
  /** "postgres", "mariadbd": named in the errors. */
  what: string;
  child: ChildProcess;
  port: number;
  timeoutMs: number;
  pollMs: number;
  /** Thrown instead of a spawn ENOENT. */
  notInstalled: string;
  ready: () => boolean;
  spawnError: () => Error | undefined;
  output: () => string;
  stop: () => Promise<void>;
}

export async function awaitServer(s: ServerStart): Promise<void> {
  const end = Date.now() + s.timeoutMs;
  for (;;) {
    const spawnError = s.spawnError();
    if (spawnError !== undefined) {
      await s.stop();
      throw (spawnError as NodeJS.ErrnoException).code === "ENOENT" ? new Error(s.notInstalled) : spawnError;
    }
    if (s.child.exitCode !== null || s.child.signalCode !== null) {
      await s.stop();
      throw new Error(`${s.what} exited (${s.child.exitCode ?? s.child.signalCode}) on port ${s.port}: ${s.output()}`);
    }
    if (s.ready()) return;
    if (Date.now() > end) {
      await s.stop();
      throw new Error(`${s.what} did not accept connections on port ${s.port} within ${s.timeoutMs} ms: ${s.output()}`);
    }
    await new Promise((r) => setTimeout(r, s.pollMs));
  }
}
