// What the support servers (PostgreSQL, MariaDB, Redis, HTTP daemons) share about their processes.
import { spawnSync, type ChildProcess } from "node:child_process";

/** Resolves once the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** The uid and gid of a system user a server runs as when started by root; `missing` says what to install. */
export function systemUserIds(user: string, missing: string): { uid: number; gid: number } {
  const uid = spawnSync("id", ["-u", user], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", user], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) throw new Error(`${missing} (no "${user}" user)`);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
