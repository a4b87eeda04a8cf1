// Packaging: build:main, then electron-builder --linux dir against a stub Electron (a folder with
// an executable `electron` and an empty resources/: the real binary cannot be had here), then the
// app.asar's file list. Downloads are made impossible (dead mirrors and proxies): a build that
// tries one fails. The stub has no fuse sentinel, so electronFuses is switched off for it only.
// The beforePack hook bundles the demo (build/bundle-demo.mjs); the packaged demo is then run
// from the package's own files against a real hub.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { extractFile, statFile } from "@electron/asar";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DemoService, findDemo, type ForkDemo } from "../../main/app/demo-service.js";
import { createHub } from "../../main/hub/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");
const HAS_RENDERER = existsSync(join(ROOT, "renderer", "dist", "index.html"));
const DEAD = "http://127.0.0.1:9/";

let tmp: string;
let asarPath: string;
let files: string[] = [];
let log = "";

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "semscope-pack-"));
  execFileSync("npm", ["run", "-s", "build:main"], { cwd: ROOT, stdio: "pipe", timeout: 180_000 });

  const stub = join(tmp, "electron-dist");
  mkdirSync(join(stub, "resources"), { recursive: true });
  writeFileSync(join(stub, "electron"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(stub, "electron"), 0o755);

  const config: Record<string, unknown> = {
    extends: join(ROOT, "electron-builder.yml"),
    electronDist: stub,
    directories: { output: join(tmp, "out") },
    // Fuses are flipped inside the real binary; the stub has none to flip.
    electronFuses: null,
  };
  if (!HAS_RENDERER) {
    // Until the renderer is built: a placeholder dashboard from a temp folder, merged into `files`.
    mkdirSync(join(tmp, "placeholder", "renderer", "dist"), { recursive: true });
    writeFileSync(join(tmp, "placeholder", "renderer", "dist", "index.html"), "<!doctype html><title>Semscope</title>\n");
    config.files = [{ from: join(tmp, "placeholder"), filter: ["renderer/dist/**/*"] }];
  }
  writeFileSync(join(tmp, "electron-builder.json"), JSON.stringify(config));

  const r = spawnSync(join(BIN, "electron-builder"), ["--linux", "dir", "--config", join(tmp, "electron-builder.json"), "--publish", "never"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 240_000,
    env: {
      ...process.env,
      ELECTRON_SKIP_BINARY_DOWNLOAD: "1",
      CSC_IDENTITY_AUTO_DISCOVERY: "false",
      ELECTRON_MIRROR: DEAD,
      ELECTRON_BUILDER_BINARIES_MIRROR: DEAD,
      HTTP_PROXY: DEAD,
      HTTPS_PROXY: DEAD,
      http_proxy: DEAD,
      https_proxy: DEAD,
      NO_PROXY: "",
    },
  });
  log = `${r.stdout}\n${r.stderr}`;
  if (r.status !== 0) throw new Error(`electron-builder failed (${r.status ?? r.signal}):\n${log}`);

  asarPath = join(tmp, "out", "linux-unpacked", "resources", "app.asar");
  // The asar package's own CLI (`npx asar list`), from @electron/asar, which electron-builder brings.
  files = execFileSync(join(BIN, "asar"), ["list", asarPath], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}, 420_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const has = (path: string) => files.includes(path);

describe("electron-builder --linux dir (stub Electron)", () => {
  it("packages without downloading anything", () => {
    expect(log).not.toMatch(/download(ing)?\s/i);
    expect(statSync(join(tmp, "out", "linux-unpacked", "semscope")).mode & 0o111).not.toBe(0);
    expect(existsSync(asarPath)).toBe(true);
  });

  it("holds the main entry named by package.json, and the shared code it imports", () => {
    const pkg = JSON.parse(extractFile(asarPath, "package.json").toString("utf8")) as { main: string; type: string };
    expect(pkg.main).toBe("dist/main/electron/main.js");
    expect(pkg.type).toBe("module");
    expect(has("/dist/main/electron/main.js")).toBe(true);
    expect(has("/dist/main/hub/index.js")).toBe(true);
    expect(has("/dist/main/settings/settings-store.js")).toBe(true);
    expect(has("/dist/shared/alerts/engine.js")).toBe(true);
    expect(has("/dist/shared/ipc/ipc-contract.js")).toBe(true);
    // hub.ts reads its version from package.json beside dist/ (tsc copies it there).
    expect(has("/dist/package.json")).toBe(true);
  });

  it("holds the preload as one CommonJS file", () => {
    expect(has("/dist/main/electron/preload.cjs")).toBe(true);
    expect(has("/dist/main/electron/preload.js")).toBe(false);
    const preload = extractFile(asarPath, "dist/main/electron/preload.cjs").toString("utf8");
    expect(preload).toContain('require("electron")');
    expect(preload).not.toMatch(/require\("\.{1,2}\//);
  });

  it.runIf(HAS_RENDERER)("holds the renderer's index.html, unpacked beside the asar for the hub to serve", () => {
    expect(has("/renderer/dist/index.html")).toBe(true);
    expect((statFile(asarPath, "renderer/dist/index.html") as { unpacked?: boolean }).unpacked).toBe(true);
    expect(existsSync(join(tmp, "out", "linux-unpacked", "resources", "app.asar.unpacked", "renderer", "dist", "index.html"))).toBe(true);
  });

  it.skipIf(HAS_RENDERER)("holds a renderer index.html (renderer/dist is not built yet: a placeholder stands in; unpacking is checked once it exists)", () => {
    expect(has("/renderer/dist/index.html")).toBe(true);
  });

  it("holds the built-in demo (one bundled service and its fleet), unpacked beside the asar", () => {
    for (const f of ["service.mjs", "fleet.json"]) {
      expect(has(`/dist/demo/${f}`), f).toBe(true);
      expect((statFile(asarPath, `dist/demo/${f}`) as { unpacked?: boolean }).unpacked, f).toBe(true);
    }
    const found = findDemo(join(tmp, "out", "linux-unpacked", "resources", "app.asar.unpacked"));
    if ("missing" in found) throw new Error(found.missing);
    expect(found.fleet.map((s) => s.instance)).toEqual(["checkout-1", "inventory-1", "search-1", "search-2", "search-3", "search-4"]);
  });

  it("runs the packaged demo as the app does: every service reaches the hub from the package's own files, and stops", async () => {
    const found = findDemo(join(tmp, "out", "linux-unpacked", "resources", "app.asar.unpacked"));
    if ("missing" in found) throw new Error(found.missing);
    const hub = await createHub({ port: 0, token: "pack-t0k", log: () => undefined });
    // Node stands in for Electron's utility process; the bundle must need nothing outside itself.
    const fork: ForkDemo = (script, args, env) => {
      const p = spawn(process.execPath, [script, ...args], { cwd: tmp, env: { ...process.env, NODE_PATH: "", ...env }, stdio: "ignore" });
      let code: number | null | undefined;
      const waiting: ((c: number | null) => void)[] = [];
      p.once("exit", (c) => {
        code = c;
        for (const fn of waiting.splice(0)) fn(c);
      });
      return { pid: p.pid, kill: () => void p.kill("SIGTERM"), onExit: (fn) => (code !== undefined ? fn(code) : waiting.push(fn)) };
    };
    const demo = new DemoService({ ...found, fork, log: () => undefined });
    try {
      await demo.start(hub.url, "pack-t0k");
      const connected = () => hub.state().agents.filter((a) => a.connected).length;
      await vi.waitFor(() => expect(connected()).toBe(found.fleet.length), { timeout: 30_000, interval: 200 });
      await demo.stop();
      await vi.waitFor(() => expect(connected()).toBe(0), { timeout: 10_000 });
    } finally {
      await demo.stop();
      await hub.close();
    }
  }, 60_000);

  it("holds the runtime dependencies main imports, with theirs", () => {
    for (const dep of ["socket.io", "zod", "prom-client", "engine.io", "ws", "socket.io-adapter", "socket.io-parser"]) {
      expect(has(`/node_modules/${dep}/package.json`), dep).toBe(true);
    }
  });

  it("holds nothing else: no tests, TypeScript sources, benchmarks, agent, docs, maps, build files or dev tools", () => {
    const offenders = files.filter(
      (f) =>
        /^\/(test|bench|agent|docs|scripts|build|main|shared|coverage|out|\.ci|\.scratch)(\/|$)/.test(f) ||
        /^\/renderer\/(?!dist(\/|$))/.test(f) ||
        /\.(ts|mts|cts|map|tsbuildinfo)$/.test(f) ||
        /^\/(electron-builder\.yml|tsconfig[^/]*\.json|eslint\.config\.js|vitest\.config\.ts|package-lock\.json|README\.md)$/.test(f) ||
        /^\/node_modules\/(electron|electron-builder|typescript|vitest|vite|tsup|tsx|eslint|@types|react|react-dom|uplot|socket\.io-client|semscope-agent)(\/|$)/.test(f) ||
        /^\/dist\/main\/hub\/(cli|replay-cli)\.js$/.test(f),
    );
    expect(offenders).toEqual([]);
  });
});
