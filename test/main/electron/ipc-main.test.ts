// main/electron/ipc-main.ts with only `electron` replaced: each call's sender and arguments are
// checked before its handler runs.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { INVOKE_CHANNELS } from "../../../shared/ipc/ipc-contract.js";
import type { TrustedOrigin } from "../../../main/app/navigation-policy.js";
import { defaultSettings } from "../../../main/settings/settings-schema.js";
import { FakeWebContents, ipcMain, resetFake } from "./fake-electron.js";

vi.mock("electron", () => import("./fake-electron.js"));
const { registerIpc, sendToDashboard } = await import("../../../main/electron/ipc-main.js");

let dashboard: FakeWebContents;
let trusted: TrustedOrigin | null;
const handlers = {
  "settings:get": vi.fn(() => ({ settings: defaultSettings(), problem: null, file: "/x/settings.json" })),
  "settings:save": vi.fn(async (s: unknown) => ({ ok: true as const, settings: s as ReturnType<typeof defaultSettings>, reconnecting: false })),
  "connection:get": vi.fn(() => ({ mode: "local" as const, name: "Local hub", url: "http://127.0.0.1:7420", token: null })),
  "token:regenerate": vi.fn(async () => ({ ok: true as const, settings: defaultSettings(), reconnecting: true })),
};
const log = vi.fn();

beforeEach(() => {
  resetFake();
  vi.clearAllMocks();
  dashboard = new FakeWebContents();
  trusted = { origin: "http://127.0.0.1:7420", local: true };
  registerIpc({ handlers, getDashboard: () => dashboard as never, getTrusted: () => trusted, log });
});

/** Calls `channel` as Electron would for a message from `sender`'s frame at `url`. */
function call(channel: string, opts: { sender?: FakeWebContents; url?: string | null; parent?: unknown }, ...args: unknown[]): Promise<unknown> {
  const sender = opts.sender ?? dashboard;
  const url = opts.url === undefined ? "http://127.0.0.1:7420/" : opts.url;
  const senderFrame = url === null ? null : sender.frame(url, opts.parent ?? null);
  const handler = ipcMain.handlers.get(channel);
  if (handler === undefined) return Promise.reject(new Error(`No handler registered for '${channel}'`));
  return Promise.resolve((handler as (...a: unknown[]) => unknown)({ sender, senderFrame }, ...args));
}

describe("ipc-main", () => {
  it("registers one handler per contract channel, and removes them", () => {
    expect([...ipcMain.handlers.keys()].sort()).toEqual([...INVOKE_CHANNELS].sort());
    resetFake();
    const dispose = registerIpc({ handlers, getDashboard: () => null, getTrusted: () => null });
    expect(ipcMain.handlers.size).toBe(INVOKE_CHANNELS.length);
    dispose();
    expect(ipcMain.handlers.size).toBe(0);
  });

  it("runs the handler for the dashboard's main frame on the trusted origin, with validated arguments", async () => {
    expect(await call("settings:get", {})).toMatchObject({ file: "/x/settings.json" });
    const s = defaultSettings();
    expect(await call("settings:save", {}, s)).toEqual({ ok: true, settings: s, reconnecting: false });
    expect(handlers["settings:save"]).toHaveBeenCalledWith(s);
    expect(await call("connection:get", {})).toMatchObject({ mode: "local" });
    expect(await call("token:regenerate", {})).toMatchObject({ ok: true, reconnecting: true });
  });

  it("refuses IPC from a wrong sender: another webContents, a subframe, another origin, a vanished frame", async () => {
    const other = new FakeWebContents();
    await expect(call("settings:get", { sender: other })).rejects.toThrow("settings:get refused: the sender is not the dashboard window");
    await expect(call("settings:get", { parent: {} })).rejects.toThrow("settings:get refused: the sender is a subframe");
    await expect(call("settings:get", { url: "https://evil.example/" })).rejects.toThrow("is not the dashboard's http://127.0.0.1:7420");
    await expect(call("settings:get", { url: null })).rejects.toThrow("the sending frame is gone");
    expect(handlers["settings:get"]).not.toHaveBeenCalled();
    expect(log).toHaveBeenCalledWith("semscope: settings:get refused: the sender is not the dashboard window");
  });

  it("refuses settings to a remote hub's page but gives it its connection", async () => {
    trusted = { origin: "https://hub.example.com", local: false };
    await expect(call("settings:get", { url: "https://hub.example.com/" })).rejects.toThrow("settings:get is only for the local hub's dashboard");
    await expect(call("settings:save", { url: "https://hub.example.com/" }, defaultSettings())).rejects.toThrow("only for the local hub's dashboard");
    expect(await call("connection:get", { url: "https://hub.example.com/" })).toMatchObject({ mode: "local" });
    expect(handlers["settings:save"]).not.toHaveBeenCalled();
  });

  it("refuses wrong argument lists before the handler runs", async () => {
    await expect(call("settings:get", {}, "extra")).rejects.toThrow("settings:get refused: bad arguments");
    await expect(call("settings:save", {})).rejects.toThrow("settings:save refused: bad arguments");
    expect(handlers["settings:get"]).not.toHaveBeenCalled();
    expect(handlers["settings:save"]).not.toHaveBeenCalled();
  });

  it("has no handler for channels outside the contract", async () => {
    await expect(call("shell:openExternal", {}, "https://evil.example")).rejects.toThrow("No handler registered");
  });

  it("sends typed events to a live dashboard only", () => {
    sendToDashboard(dashboard as never, "semaphore:focus", { key: "a/b/c", alertId: "x" });
    expect(dashboard.sent).toEqual([{ channel: "semaphore:focus", payload: { key: "a/b/c", alertId: "x" } }]);
    dashboard.destroyed = true;
    sendToDashboard(dashboard as never, "settings:show", {});
    sendToDashboard(null, "settings:show", {});
    expect(dashboard.sent).toHaveLength(1);
  });
});
