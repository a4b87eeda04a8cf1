// The demo's processes as Electron utility processes: a packaged app has no Node binary to
// spawn (the runAsNode fuse is off), and a utility process is Electron's own Node child.
import { utilityProcess } from "electron";
import { createInterface } from "node:readline";
import type { DemoProcess, ForkDemo } from "../app/demo-service.js";

export function utilityForker(log: (line: string) => void): ForkDemo {
  return (script, args, env, name): DemoProcess => {
    const child = utilityProcess.fork(script, args, {
      env: { ...process.env, ...env },
      stdio: "pipe",
      serviceName: name,
      execArgv: ["--disable-warning=ExperimentalWarning"],
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream !== null) createInterface({ input: stream }).on("line", (line) => log(`[${name}] ${line}`));
    }
    let exited = false;
    const waiting: ((code: number | null) => void)[] = [];
    child.once("exit", (code) => {
      exited = true;
      for (const fn of waiting.splice(0)) fn(code);
    });
    return {
      get pid() {
        return child.pid;
      },
      kill: () => {
        if (!exited) child.kill();
      },
      onExit: (fn) => {
        if (exited) fn(null);
        else waiting.push(fn);
      },
    };
  };
}
