// `npm pack`'s prepack for the semscope command: the dashboard (built when older than its
// sources), the demo bundle, and the command's own bundle, dist/cli/semscope.js. The package then
// runs under plain node with its three runtime dependencies (socket.io, zod, prom-client).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildRendererIfNeeded } from "./build-if-needed.js";

const root = join(import.meta.dirname, "..");

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status ?? r.signal})`);
}

buildRendererIfNeeded();

// Bundled aside, then moved in file by file: a rename replaces a file at once, so another build
// of the same demo (the desktop package's beforePack) never sees a half-written one.
const demoDir = join(root, "dist", "demo");
mkdirSync(demoDir, { recursive: true });
const fresh = mkdtempSync(join(root, "dist", ".demo-"));
try {
  run(process.execPath, [join(root, "build", "bundle-demo.mjs"), fresh]);
  for (const f of readdirSync(fresh)) renameSync(join(fresh, f), join(demoDir, f));
} finally {
  rmSync(fresh, { recursive: true, force: true });
}

run("npm", ["run", "-s", "build:cli"]);

for (const f of ["dist/cli/semscope.js", "dist/demo/service.mjs", "dist/demo/fleet.json", "renderer/dist/index.html"]) {
  if (!existsSync(join(root, f))) throw new Error(`prepack: ${f} was not built`);
}
