// The semscope command as a server admin gets it: `npm pack` at the root (its prepack builds the
// dashboard, the demo bundle and the command), the tarball installed into an empty folder outside
// the repository, then `semscope ...` under plain node, with none of the build tools installed.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { io } from "socket.io-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HUB_NODE_FLAGS } from "../../main/hub/node-flags.js";
import { cleanNpmEnv, installInto, pack } from "../../scripts/support/pack-install.js";

const ROOT = join(import.meta.dirname, "..", "..");

let tgz: string;
let dir: string;
let bin: string;
const running: ChildProcess[] = [];

beforeAll(() => {
  tgz = pack(ROOT);
  dir = installInto([tgz]);
  bin = join(dir, "node_modules", ".bin", "semscope");
}, 400_000);

afterEach(() => {
  for (const c of running.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

afterAll(() => {
  for (const d of [dir, tgz === undefined ? undefined : dirname(tgz)]) if (d !== undefined) rmSync(d, { recursive: true, force: true });
});

/** `semscope <args>` from the installed bin (its `#!/usr/bin/env node` line picks plain node). */
function start(args: string[]): { child: ChildProcess; lines: string[]; next: (match: RegExp) => Promise<string> } {
  const child = spawn(bin, args, { cwd: dir, env: cleanNpmEnv({ NODE_OPTIONS: "" }), stdio: ["ignore", "pipe", "pipe"] });
  running.push(child);
  const lines: string[] = [];
  const waiting: { match: RegExp; resolve: (l: string) => void }[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    lines.push(line);
    for (const w of waiting.filter((x) => x.match.test(line))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(line);
    }
  });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const next = (match: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => match.test(l));
      if (seen !== undefined) return resolve(seen);
      const timer = setTimeout(() => reject(new Error(`no line matching ${match} within 30 s; stdout ${JSON.stringify(lines)}, stderr ${err}`)), 30_000);
      waiting.push({ match, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  return { child, lines, next };
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** The process the command relaunched itself as (Linux: /proc), and its command line. */
function relaunched(pid: number): string[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((x) => x !== "");
  expect(children).toHaveLength(1);
  return readFileSync(`/proc/${children[0]}/cmdline`, "utf8").split("\0");
}

describe("the packed semscope command", () => {
  it("installs its runtime dependencies only: no React, Vite, Electron, TypeScript or tsx", () => {
    const installed = readdirSync(join(dir, "node_modules"));
    for (const dep of ["socket.io", "zod", "prom-client"]) expect(installed, dep).toContain(dep);
    for (const tool of ["react", "react-dom", "uplot", "vite", "electron", "electron-builder", "typescript", "tsx", "esbuild", "tsup", "socket.io-client", "semscope-agent"]) {
      expect(installed, tool).not.toContain(tool);
    }
    const pkg = join(dir, "node_modules", "semscope");
    expect(readdirSync(pkg).sort()).toEqual(["LICENSE", "README.md", "dist", "package.json", "renderer"]);
    expect(existsSync(join(pkg, "renderer", "dist", "index.html"))).toBe(true);
    expect(existsSync(join(pkg, "dist", "demo", "service.mjs"))).toBe(true);
  });

  it("prints its usage with --help", () => {
    const r = spawnSync(bin, ["--help"], { cwd: dir, env: cleanNpmEnv(), encoding: "utf8" });
    expect(r.status).toBe(0);
    for (const sub of ["semscope hub", "semscope web", "semscope replay"]) expect(r.stdout).toContain(sub);
  });

  it("runs `semscope hub --port 0` with the hub's V8 flags, serves /api/state, and stops on SIGTERM", async () => {
    const { child, next } = start(["hub", "--port", "0"]);
    const first = await next(/^semscope hub listening on /);
    const url = first.replace("semscope hub listening on ", "");
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const state = (await (await fetch(`${url}/api/state`)).json()) as { hub: { version: string }; semaphores: unknown[] };
    expect(state.hub.version).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
    expect(state.semaphores).toEqual([]);
    const cmdline = relaunched(child.pid as number);
    for (const flag of HUB_NODE_FLAGS) expect(cmdline).toContain(flag);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
  });

  it("runs `semscope web --port 0 --no-demo`: the dashboard page and its script over HTTP", async () => {
    const { child, lines, next } = start(["web", "--port", "0", "--no-demo"]);
    const url = (await next(/^semscope hub listening on /)).replace("semscope hub listening on ", "");
    expect(await next(/^semscope dashboard: /)).toBe(`semscope dashboard: ${url}/`);
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const src = /<script[^>]+src="([^"]+)"/.exec(html)?.[1];
    expect(src).toBeDefined();
    const script = await fetch(new URL(src as string, `${url}/`));
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    expect((await script.text()).length).toBeGreaterThan(10_000);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
    expect(lines.some((l) => l.startsWith("semscope demo:"))).toBe(false);
  });

  it("runs `semscope web` with a hub token and an agent token: its files open without one and no other page may frame them; the agent token opens /agent only; recordings are the owner's", async () => {
    const recs = join(dir, "recordings");
    const { child, next } = start(["web", "--port", "0", "--no-demo", "--token", "hub-secret", "--agent-token", "agent-secret", "--record-dir", recs]);
    const url = (await next(/^semscope hub listening on /)).replace("semscope hub listening on ", "");
    // The link does not carry the token: the page asks for it.
    expect(await next(/^semscope dashboard: /)).toBe(`semscope dashboard: ${url}/?token=<your token>`);
    const page = await fetch(`${url}/`);
    const src = /<script[^>]+src="([^"]+)"/.exec(await page.text())?.[1];
    const script = await fetch(new URL(src as string, `${url}/`));
    for (const res of [page, script]) {
      expect(res.status).toBe(200);
      expect(res.headers.get("content-security-policy")).toBe("frame-ancestors 'none'");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const status = async (path: string, token?: string) => (await fetch(`${url}${path}`, token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } })).status;
    for (const path of ["/api/state", "/metrics"]) {
      expect(await status(path), path).toBe(401);
      expect(await status(path, "agent-secret"), path).toBe(401);
      expect(await status(path, "hub-secret"), path).toBe(200);
    }
    const handshake = (ns: string, token: string) =>
      new Promise<string>((resolve) => {
        const socket = io(`${url}${ns}`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1, token } });
        socket.once("connect", () => (socket.disconnect(), resolve("connected")));
        socket.once("connect_error", (err) => resolve(err.message));
      });
    expect(await handshake("/agent", "agent-secret")).toBe("connected");
    expect(await handshake("/ui", "agent-secret")).toBe("unauthorized");
    expect(await handshake("/ui", "hub-secret")).toBe("connected");
    // The rolling recording opens at start: a folder and files for their owner only.
    expect(statSync(recs).mode & 0o777).toBe(0o700);
    const files = readdirSync(recs);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(statSync(join(recs, f)).mode & 0o777, f).toBe(0o600);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
  });

  it("runs `semscope replay`, refusing a file it cannot read in one line", () => {
    const r = spawnSync(bin, ["replay", join(dir, "missing.ndjson")], { cwd: dir, env: cleanNpmEnv(), encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^semscope replay: cannot read .*missing\.ndjson/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});
