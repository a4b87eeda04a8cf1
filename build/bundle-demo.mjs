// The built-in demo for the packaged app (electron-builder's beforePack hook; also
// `node build/bundle-demo.mjs [outDir]`). The app cannot run agent/demo as the repository does:
// a packaged Electron has no Node binary to spawn (the runAsNode fuse is off) and ships no
// agent sources. So the demo service (agent/demo/service.ts with the agent, socket.io-client and
// everything else it imports) becomes one self-contained ES module, dist/demo/service.mjs, that
// the app starts in Electron utility processes; dist/demo/fleet.json lists the processes
// (agent/demo/fleet.ts's DEFAULT_FLEET), so the app runs exactly the fleet `npm run demo` runs.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const DEMO_DIR = join("dist", "demo");
export const DEMO_SERVICE = "service.mjs";
export const DEMO_FLEET = "fleet.json";

/** Bundles the demo service and writes its fleet into `outDir` (default <root>/dist/demo). */
export async function bundleDemo(outDir = join(ROOT, DEMO_DIR)) {
  const esbuild = await import("esbuild");
  mkdirSync(outDir, { recursive: true });
  const service = join(outDir, DEMO_SERVICE);
  await esbuild.build({
    entryPoints: [join(ROOT, "agent", "demo", "service.ts")],
    outfile: service,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Not minified, names kept: a leak's acquisition stack should still read chargeCard().
    keepNames: true,
    legalComments: "none",
    logLevel: "silent",
    // ws's optional native speed-ups: absent, it uses its JS code (they are required in a try).
    external: ["bufferutil", "utf-8-validate"],
    // The CommonJS dependencies (socket.io-client's, prom-client) call require() for Node's built-ins.
    banner: { js: 'import { createRequire as __semscopeRequire } from "node:module"; const require = __semscopeRequire(import.meta.url);' },
  });
  const { tsImport } = await import("tsx/esm/api");
  const { DEFAULT_FLEET } = await tsImport(pathToFileURL(join(ROOT, "agent", "demo", "fleet.ts")).href, import.meta.url);
  const fleet = join(outDir, DEMO_FLEET);
  writeFileSync(fleet, `${JSON.stringify(DEFAULT_FLEET, null, 2)}\n`);
  return { service, fleet };
}

/** electron-builder's beforePack: runs before the app's files are collected. */
export default async function beforePack() {
  await bundleDemo();
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await bundleDemo(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
  console.log(`demo bundled: ${out.service}, ${out.fleet}`);
}
