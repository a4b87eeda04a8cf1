// `npm start` builds what is missing or older than its sources, so a fresh clone runs in one command.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");

function newestMtime(path: string): number {
  if (!statSync(path).isDirectory()) return statSync(path).mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, entry.name);
    const m = entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs;
    if (m > newest) newest = m;
  }
  return newest;
}

function stale(output: string, sources: readonly string[]): boolean {
  const out = join(root, output);
  if (!existsSync(out)) return true;
  const built = statSync(out).mtimeMs;
  return sources.some((s) => existsSync(join(root, s)) && newestMtime(join(root, s)) > built);
}

function run(script: string): void {
  console.error(`semscope: npm run ${script}`);
  // The build's output goes to stderr: a command's first stdout line is its address (web mode's, the hub's).
  const r = spawnSync("npm", ["run", "-s", script], { cwd: root, stdio: ["ignore", process.stderr, "inherit"] });
  if (r.status !== 0) throw new Error(`npm run ${script} failed (exit ${r.status ?? r.signal})`);
}

/** The dashboard, served by the hub in web mode and loaded by the Electron window. */
export function buildRendererIfNeeded(): string {
  if (stale("renderer/dist/index.html", ["renderer/src", "renderer/index.html", "shared"])) run("build:renderer");
  return join(root, "renderer", "dist");
}

/** The Electron main process and preload. */
export function buildMainIfNeeded(): void {
  if (stale("dist/main/electron/main.js", ["main", "shared"])) run("build:main");
}
