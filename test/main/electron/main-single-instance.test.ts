// main/electron/main.ts as a second instance, with only `electron` replaced: it quits at once.
import { describe, expect, it, vi } from "vitest";
import { app, BrowserWindow, resetFake } from "./fake-electron.js";

vi.mock("electron", () => import("./fake-electron.js"));

describe("main.ts without the single-instance lock", () => {
  it("quits before doing anything else: no window, no hub, no settings read", async () => {
    resetFake();
    app.singleInstance = false;
    app.setPath("appData", "/nonexistent");
    await import("../../../main/electron/main.js");
    await new Promise((r) => setTimeout(r, 50));
    expect(app.calls).toContain("requestSingleInstanceLock");
    expect(app.calls).not.toContain("whenReady");
    expect(app.quits).toBe(1);
    expect(BrowserWindow.created).toEqual([]);
  });
});
