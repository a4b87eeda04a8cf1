// main/electron/main.ts end to end with only `electron` replaced: a real hub on a free port, the
// window pointed at it, IPC answered only for the dashboard, a quit that waits for the hub.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { freePort } from "../../../scripts/support/free-port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { INVOKE_CHANNELS } from "../../../shared/ipc/ipc-contract.js";
import { cspWeaknesses } from "../../../main/app/csp.js";
import { defaultSettings } from "../../../main/settings/settings-schema.js";
import { app, BrowserWindow, dialog, FakeEvent, FakeWebContents, ipcMain, Menu, resetFake, session, Tray } from "./fake-electron.js";

vi.mock("electron", () => import("./fake-electron.js"));

let appData: string;
let port: number;
let win: BrowserWindow;

beforeAll(async () => {
  resetFake();
  appData = mkdtempSync(join(tmpdir(), "semscope-main-"));
  port = await freePort();
  mkdirSync(join(appData, "Semscope"));
  writeFileSync(join(appData, "Semscope", "settings.json"), JSON.stringify({ ...defaultSettings(), hub: { port, token: null } }));
  app.setPath("appData", appData);
  await import("../../../main/electron/main.js");
  await vi.waitFor(() => expect(BrowserWindow.created[0]?.loaded).toHaveLength(1), { timeout: 10_000 });
  win = BrowserWindow.created[0];
});

afterAll(() => rmSync(appData, { recursive: true, force: true }));

describe("main.ts", () => {
  it("takes the single-instance lock, enables the sandbox everywhere, keeps user data in Semscope/", () => {
    expect(app.calls).toEqual(expect.arrayContaining(["requestSingleInstanceLock", "enableSandbox", "setAppUserModelId:dev.semscope.app", "whenReady"]));
    expect(app.calls.indexOf("enableSandbox")).toBeLessThan(app.calls.indexOf("whenReady"));
    expect(app.getPath("userData")).toBe(join(appData, "Semscope"));
  });

  it("opens one locked-down window with the CommonJS preload, on the in-process hub's dashboard", async () => {
    expect(BrowserWindow.created).toHaveLength(1);
    const prefs = win.options.webPreferences as Record<string, unknown>;
    expect(prefs).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false, webSecurity: true });
    expect(String(prefs.preload)).toMatch(/[/\\]main[/\\]electron[/\\]preload\.cjs$/);
    expect(win.loaded).toEqual([`http://127.0.0.1:${port}/`]);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(await health.json()).toEqual({ ok: true });
  });

  it("says the dashboard is not built when renderer/dist is missing (the hub still runs)", () => {
    expect(dialog.messages.map((m) => m.options.title)).toContain("The dashboard is not built");
  });

  it("hardens the session (strict CSP, permissions) and every webContents created later", () => {
    let headers: Record<string, string[]> | undefined;
    session.defaultSession.headersListener!({ url: win.loaded[0], responseHeaders: {} }, (r) => (headers = r.responseHeaders));
    expect(cspWeaknesses(headers!["Content-Security-Policy"][0])).toEqual([]);
    expect(headers!["Content-Security-Policy"][0]).toContain(`ws://127.0.0.1:${port}`);
    const later = new FakeWebContents();
    app.emit("web-contents-created", {}, later);
    const away = new FakeEvent("https://evil.example/");
    later.emit("will-navigate", away);
    expect(away.defaultPrevented).toBe(true);
    expect(later.windowOpenHandler!({ url: "https://evil.example/" })).toEqual({ action: "deny" });
  });

  it("answers IPC from the dashboard and refuses it from any other sender", async () => {
    expect([...ipcMain.handlers.keys()].sort()).toEqual([...INVOKE_CHANNELS].sort());
    const get = ipcMain.handlers.get("settings:get") as (...a: unknown[]) => Promise<unknown>;
    const ok = await get({ sender: win.webContents, senderFrame: { url: win.loaded[0], parent: null } });
    expect(ok).toMatchObject({ settings: { hub: { port } }, problem: null, file: join(appData, "Semscope", "settings.json") });
    const conn = ipcMain.handlers.get("connection:get") as (...a: unknown[]) => Promise<unknown>;
    expect(await conn({ sender: win.webContents, senderFrame: { url: win.loaded[0], parent: null } })).toEqual({
      mode: "local",
      name: "Local hub",
      url: `http://127.0.0.1:${port}`,
      token: null,
    });
    const stranger = new FakeWebContents();
    await expect(get({ sender: stranger, senderFrame: { url: win.loaded[0], parent: null } })).rejects.toThrow("the sender is not the dashboard window");
    await expect(get({ sender: win.webContents, senderFrame: { url: "https://evil.example/", parent: null } })).rejects.toThrow("is not the dashboard's");
  });

  it("sets the application menu and a tray icon counting alerts", async () => {
    expect(Menu.applicationMenu).not.toBeNull();
    await vi.waitFor(() => expect(Tray.created).toHaveLength(1));
    expect(Tray.created[0].tooltip).toBe("Semscope — Local hub: no active alerts");
  });

  it("focuses the window when a second instance starts", () => {
    win.minimized = true;
    win.visible = false;
    app.emit("second-instance");
    expect(win.minimized).toBe(false);
    expect(win.visible).toBe(true);
  });

  it("holds the quit until the hub is closed, then quits", async () => {
    app.quit();
    await vi.waitFor(() => expect(app.quits).toBe(2));
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    expect(Tray.created[0].destroyed).toBe(true);
  });
});
