// main/electron/preload.ts with only `electron` replaced: what the page gets on window.semscope.
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { SemscopeBridge } from "../../../shared/ipc/ipc-contract.js";
import { defaultSettings } from "../../../main/settings/settings-schema.js";
import { contextBridge, ipcRenderer, resetFake } from "./fake-electron.js";

vi.mock("electron", () => import("./fake-electron.js"));

let bridge: SemscopeBridge;
beforeAll(async () => {
  resetFake();
  await import("../../../main/electron/preload.js");
  bridge = contextBridge.exposed.get("semscope") as SemscopeBridge;
});

describe("preload", () => {
  it("exposes one object, window.semscope, of a few named functions and nothing of Electron", () => {
    expect([...contextBridge.exposed.keys()]).toEqual(["semscope"]);
    expect(Object.keys(bridge).sort()).toEqual(["bridgeVersion", "getConnection", "getSettings", "onFocusSemaphore", "onShowSettings", "regenerateHubToken", "saveSettings"]);
    expect(bridge.bridgeVersion).toBe(1);
    for (const [k, v] of Object.entries(bridge)) if (k !== "bridgeVersion") expect(typeof v, k).toBe("function");
    expect(Object.values(bridge)).not.toContain(ipcRenderer);
  });

  it("invokes the contract's channels, the page never naming one", async () => {
    await bridge.getSettings();
    const s = defaultSettings();
    await bridge.saveSettings(s);
    await bridge.getConnection();
    await bridge.regenerateHubToken?.();
    expect(ipcRenderer.invoked).toEqual([
      { channel: "settings:get", args: [] },
      { channel: "settings:save", args: [s] },
      { channel: "connection:get", args: [] },
      { channel: "token:regenerate", args: [] },
    ]);
  });

  it("hands listeners the payload only (never the IPC event), and unsubscribes", () => {
    const seen: unknown[][] = [];
    const off = bridge.onFocusSemaphore((...args: unknown[]) => seen.push(args));
    const event = { sender: ipcRenderer };
    ipcRenderer.emit("semaphore:focus", event, { key: "a/b/c", alertId: "1" });
    expect(seen).toEqual([[{ key: "a/b/c", alertId: "1" }]]);
    off();
    ipcRenderer.emit("semaphore:focus", event, { key: "x", alertId: "2" });
    expect(seen).toHaveLength(1);
    expect(ipcRenderer.listenerCount("semaphore:focus")).toBe(0);

    const shown: unknown[][] = [];
    const offShow = bridge.onShowSettings((...args: unknown[]) => shown.push(args));
    ipcRenderer.emit("settings:show", event, {});
    expect(shown).toEqual([[]]);
    offShow();
  });

  it("refuses a listener that is not a function", () => {
    expect(() => bridge.onFocusSemaphore("alert(1)" as never)).toThrow(TypeError);
  });
});
