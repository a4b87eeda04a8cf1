// semscope-agent as a service gets it: `npm pack -w semscope-agent` (its prepack builds it), the
// tarball installed into an empty project outside the repository, then plain Node: an ES module,
// a CommonJS script, a strict `moduleResolution: nodenext` type check, and a stream to a real hub.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHub, type Hub } from "../../main/hub/index.js";
import type { HubState } from "../../shared/protocol/index.js";
import { addTo, installInto, pack } from "../../scripts/support/pack-install.js";

const ROOT = join(import.meta.dirname, "..", "..");
const execFileAsync = promisify(execFile);
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

let tgz: string;
let dir: string;
let hub: Hub;

beforeAll(async () => {
  tgz = pack(ROOT, "semscope-agent");
  dir = installInto([tgz]);
  hub = await createHub({ port: 0, log: () => undefined });
}, 300_000);

afterAll(async () => {
  await hub?.close();
  for (const d of [dir, tgz === undefined ? undefined : dirname(tgz)]) if (d !== undefined) rmSync(d, { recursive: true, force: true });
});

/** Runs `source` as `file` in the consumer project; asynchronously, so the hub in this process keeps serving. */
async function run(file: string, source: string, env: Record<string, string> = {}): Promise<string> {
  writeFileSync(join(dir, file), source);
  const r = await execFileAsync(process.execPath, [file], { cwd: dir, encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH, ...env } });
  expect(r.stderr).toBe("");
  return r.stdout;
}

describe("the packed semscope-agent", () => {
  it("holds only its built code, README, LICENSE and package.json, and installs socket.io-client but not prom-client", () => {
    const pkgDir = join(dir, "node_modules", "semscope-agent");
    expect(readdirSync(pkgDir).sort()).toEqual(["LICENSE", "README.md", "dist", "package.json"]);
    expect(readdirSync(join(pkgDir, "dist")).sort()).toEqual(["index.cjs", "index.d.cts", "index.d.ts", "index.js"]);
    // What it imports from shared/ is compiled in: no path leaves the package.
    for (const f of readdirSync(join(pkgDir, "dist"))) expect(readFileSync(join(pkgDir, "dist", f), "utf8")).not.toMatch(/["']\.\.?\/[^"']*shared\//);
    expect(existsSync(join(dir, "node_modules", "socket.io-client"))).toBe(true);
    expect(existsSync(join(dir, "node_modules", "prom-client"))).toBe(false);
  });

  it("runs as an ES module in plain Node, streaming its semaphore to a real hub", async () => {
    const out = await run(
      "stream.mjs",
      `import { Semaphore, connect, SemaphoreTimeoutError } from "semscope-agent";
// The agent's timers never keep a process alive: this script's own work does.
const alive = setInterval(() => {}, 1000);
const agent = connect({ service: "packed", instance: "esm-1", intervalMs: 100 });
const db = new Semaphore({ name: "db", permits: 3 });
const held = await db.acquire();
await db.acquire({ weight: 3, timeoutMs: 20 }).catch((e) => console.log("timeout", e instanceof SemaphoreTimeoutError));
const deadline = Date.now() + 10000;
while (!(agent.status().connected && agent.seq > 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
console.log("metrics", agent.prometheus().includes('semscope_semaphore_in_use{service="packed",instance="esm-1",semaphore="db"} 1'));
try { agent.registry; } catch (e) { console.log("registry", e.message.split(":")[0]); }
await agent.close();
held.release();
clearInterval(alive);
`,
      { SEMSCOPE_URL: hub.url },
    );
    expect(out.split("\n")).toEqual(["timeout true", "metrics true", "registry agent.registry needs prom-client, an optional peer dependency of semscope-agent (npm install prom-client)", ""]);
    const state = (await (await fetch(`${hub.url}/api/state`)).json()) as HubState;
    const db = state.semaphores.find((s) => s.key === "packed/esm-1/db");
    expect(db?.cap).toBe(3);
    expect(db?.inUse).toBe(1);
    expect(db?.last).not.toBeNull();
  });

  it("loads with require() from CommonJS, sharing one registry of semaphores with the ES module build", async () => {
    const out = await run(
      "load.cjs",
      `const agent = require("semscope-agent");
const db = new agent.Semaphore({ name: "cjs-db", permits: 2 });
const p = db.tryAcquire();
console.log(Object.keys(agent).includes("instrument"), db.snapshot().inUse, p !== undefined);
import("semscope-agent").then((esm) => {
  try { new esm.Semaphore({ name: "cjs-db", permits: 1 }); console.log("two registries"); }
  catch (e) { console.log("one registry", e instanceof Error); }
});
`,
    );
    expect(out).toBe("true 1 true\none registry true\n");
  });

  it("type-checks in a strict nodenext TypeScript project, ES module and CommonJS, with prom-client's types beside it", () => {
    // agent.registry's type is prom-client's Registry: a project that type-checks libraries has it installed.
    addTo(dir, ["prom-client@^15.1.3"]);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          noEmit: true,
          skipLibCheck: false,
          types: ["node"],
          typeRoots: [join(ROOT, "node_modules", "@types")],
        },
        files: ["check.mts", "check.cts"],
      }),
    );
    writeFileSync(
      join(dir, "check.mts"),
      `import { Semaphore, connect, instrument, SemaphoreTimeoutError, type Agent, type SemaphoreOptions } from "semscope-agent";
import type { Registry } from "prom-client";
const opts: SemaphoreOptions = { name: "db", permits: 2, queue: "lifo" };
const db = new Semaphore(opts);
const cap: number = db.snapshot().cap;
const agent: Agent = connect({ service: "typed" });
const text: string = agent.prometheus();
const registry: Registry = agent.registry;
// @ts-expect-error permits is a number: a declaration typed as any would let this through.
new Semaphore({ name: "bad", permits: "2" });
export { cap, text, registry, instrument, SemaphoreTimeoutError };
`,
    );
    writeFileSync(
      join(dir, "check.cts"),
      `import agent = require("semscope-agent");
const db = new agent.Semaphore({ name: "db", permits: 2 });
// @ts-expect-error queue is one of the known modes.
new agent.Semaphore({ name: "bad", permits: 1, queue: "random" });
export const inUse: number = db.snapshot().inUse;
`,
    );
    const r = spawnSync(process.execPath, [TSC, "-p", dir], { cwd: dir, encoding: "utf8", timeout: 120_000 });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
    // With prom-client installed, agent.registry is prom-client's and renders what prometheus() does.
    expect(execFileSync(process.execPath, ["-e", `const a = require("semscope-agent").connect({ service: "p", url: "http://127.0.0.1:9" }); a.registry.metrics().then((m) => { console.log(m === a.prometheus()); return a.close(); });`], { cwd: dir, encoding: "utf8" })).toBe("true\n");
  }, 150_000); // an npm install and a strict tsc of the bundled types: tens of seconds on a loaded machine
});
