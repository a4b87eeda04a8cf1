// What the demo tests of the app and of main.ts share: the demo bundle packaging makes, and a
// liveness probe for the processes it runs.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

/** Runs build/bundle-demo.mjs into `outDir`, as packaging does (it takes a while: esbuild). */
export function bundleDemo(outDir: string): void {
  execFileSync(process.execPath, [join(ROOT, "build", "bundle-demo.mjs"), outDir], { cwd: ROOT, stdio: "pipe", timeout: 120_000 });
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
