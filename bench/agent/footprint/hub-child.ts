// A real hub in a child process for the reporter-cost rows: its CPU is not the agent's, and is
// read apart (/proc/<pid>/stat) as the hub's own cost per semaphore-second.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../../main/hub/cli.ts", import.meta.url));

export interface HubChild {
  readonly url: string;
  /** User + system CPU of the hub process so far, in µs (undefined where /proc is missing). */
  cpuUs(): number | undefined;
  stop(): Promise<void>;
}

export function startHubChild(): Promise<HubChild> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", CLI, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`hub exited ${code}: ${err.slice(-500)}`)));
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m === null) return;
      child.stdout?.removeAllListeners("data");
      child.stdout?.resume();
      const ticks = 100; // USER_HZ on Linux
      resolve({
        url: m[1]!,
        cpuUs() {
          try {
            const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
            return ((Number(fields[11]) + Number(fields[12])) / ticks) * 1e6;
          } catch {
            return undefined;
          }
        },
        stop() {
          return new Promise((done) => {
            child.removeAllListeners("exit");
            child.once("exit", () => done());
            child.kill("SIGTERM");
          });
        },
      });
    });
  });
}
