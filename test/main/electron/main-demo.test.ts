// main/electron/main.ts as a packaged app (only `electron` replaced; utility processes are real
// Node children): it finds the bundled demo beside its asar, runs every demo service against
// its own hub in utility processes, and a quit stops them all.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { freePort } from "../../../scripts/support/free-port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { defaultSettings } from "../../../main/settings/settings-schema.js";
import type { HubState } from "../../../shared/protocol/types.js";
import { alive, bundleDemo } from "../demo-bundle.js";
import { app, BrowserWindow, resetFake, utilityProcess } from "./fake-electron.js";

vi.mock("electron", () => import("./fake-electron.js"));

const tmp = mkdtempSync(join(tmpdir(), "semscope-main-demo-"));
afterAll(() => {
  for (const p of utilityProcess.forked) p.kill();
  rmSync(tmp, { recursive: true, force: true });
});

describe("main.ts, packaged, with the demo bundled", () => {
  it("runs the demo's services in utility processes against its hub, and stops them on quit", async () => {
    resetFake();
    // What electron-builder leaves: resources/app.asar, and beside it app.asar.unpacked/dist/demo.
    const resources = join(tmp, "resources");
    bundleDemo(join(resources, "app.asar.unpacked", "dist", "demo"));
    mkdirSync(join(resources, "app.asar.unpacked", "renderer", "dist"), { recursive: true });
    writeFileSync(join(resources, "app.asar.unpacked", "renderer", "dist", "index.html"), "<!doctype html><title>Semscope</title>");
    app.isPackaged = true;
    app.appPath = join(resources, "app.asar");
    const appData = join(tmp, "appData");
    mkdirSync(join(appData, "Semscope"), { recursive: true });
    // A free port, never the well-known 7420; "Run the demo service" is on by default.
    const settings = { ...defaultSettings(), hub: { port: await freePort(), token: null } };
    expect(settings.runDemo).toBe(true);
    writeFileSync(join(appData, "Semscope", "settings.json"), JSON.stringify(settings));
    app.setPath("appData", appData);

    await import("../../../main/electron/main.js");
    await vi.waitFor(() => expect(BrowserWindow.created[0]?.loaded).toHaveLength(1), { timeout: 15_000 });
    const hubUrl = new URL(BrowserWindow.created[0].loaded[0]).origin;

    await vi.waitFor(() => expect(utilityProcess.forked.length).toBeGreaterThanOrEqual(6), { timeout: 10_000 });
    const forked = utilityProcess.forked.slice();
    for (const p of forked) {
      expect(p.modulePath).toBe(join(resources, "app.asar.unpacked", "dist", "demo", "service.mjs"));
      expect(p.args).toEqual(expect.arrayContaining(["--url", hubUrl]));
    }
    const state = async () => (await (await fetch(`${hubUrl}/api/state`)).json()) as HubState;
    await vi.waitFor(async () => expect((await state()).agents.filter((a) => a.connected).map((a) => a.service)).toHaveLength(6), { timeout: 30_000, interval: 250 });
    expect(new Set((await state()).agents.map((a) => a.service))).toEqual(new Set(["checkout", "inventory", "search"]));

    const pids = forked.map((p) => p.pid).filter((p): p is number => p !== undefined);
    expect(pids).toHaveLength(forked.length);
    app.quit();
    // The quit waits for the shutdown (demo first, then the hub), then quits for real.
    await vi.waitFor(() => expect(app.quits).toBe(2), { timeout: 15_000 });
    for (const pid of pids) expect(alive(pid)).toBe(false);
  }, 120_000);
});
