// A package as a user gets it: `npm pack` (which runs its prepack build), then `npm install` of
// the tarball into an empty project in a temporary folder outside the repository.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The environment without what an enclosing `npm run`/`npm test` exported (its prefix, workspace, scripts' config). */
export function cleanNpmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== "INIT_CWD") env[k] = v;
  return { ...env, ...extra };
}

function npm(args: string[], cwd: string, timeoutMs: number): string {
  return execFileSync("npm", args, { cwd, env: cleanNpmEnv(), encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs });
}

/** Packs the project at `root` (with `-w <workspace>` when given) and returns the tarball's path. */
export function pack(root: string, workspace?: string): string {
  const dest = mkdtempSync(join(tmpdir(), "semscope-tgz-"));
  npm(["pack", ...(workspace === undefined ? [] : ["-w", workspace]), "--pack-destination", dest], root, 300_000);
  const files = readdirSync(dest).filter((f) => f.endsWith(".tgz"));
  if (files.length !== 1) throw new Error(`npm pack left ${files.length} tarballs in ${dest}`);
  return join(dest, files[0]);
}

/** An empty project in a fresh temporary folder with `specs` installed (npm's cache first, then the registry). */
export function installInto(specs: string[], dir = mkdtempSync(join(tmpdir(), "semscope-install-"))): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "consumer", version: "1.0.0", private: true }, null, 2)}\n`);
  npm(["install", "--prefer-offline", "--no-audit", "--no-fund", ...specs], dir, 300_000);
  return dir;
}

/** Adds `specs` to a project made by installInto. */
export function addTo(dir: string, specs: string[]): void {
  npm(["install", "--prefer-offline", "--no-audit", "--no-fund", ...specs], dir, 300_000);
}
