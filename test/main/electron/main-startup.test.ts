// main/electron/main.ts at start, with only `electron` replaced: a corrupt settings file is
// reported and replaced by the defaults (never a crash).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_SETTINGS } from "../../../main/settings/settings-schema.js";
import { app, BrowserWindow, dialog, resetFake } from "./fake-electron.js";

vi.mock("electron", () => import("./fake-electron.js"));

const appData = mkdtempSync(join(tmpdir(), "semscope-main-"));
let blocker: Server | undefined;
afterAll(() => {
  blocker?.close();
  rmSync(appData, { recursive: true, force: true });
});

describe("main.ts with a corrupt settings file", () => {
  it("reports it in a dialog, keeps it aside, writes the defaults and still opens the window", async () => {
    resetFake();
    // The defaults name port 7420: hold it (when free) so this test never takes the well-known port from anyone.
    blocker = createServer();
    await new Promise<void>((resolve) => {
      blocker!.once("error", () => resolve());
      blocker!.listen(7420, "127.0.0.1", () => resolve());
    });
    mkdirSync(join(appData, "Semscope"));
    const file = join(appData, "Semscope", "settings.json");
    writeFileSync(file, '{ "version": 1, "hub": { "port": "seventy" ');
    app.setPath("appData", appData);

    await import("../../../main/electron/main.js");
    await vi.waitFor(() => expect(BrowserWindow.created[0]?.loaded).toHaveLength(1), { timeout: 10_000 });

    const reset = dialog.messages.find((m) => m.options.title === "Settings were reset");
    expect(reset?.options.type).toBe("warning");
    expect(reset?.options.detail).toContain(`The settings in ${file} could not be used: it is not valid JSON`);
    expect(reset?.window).toBe(BrowserWindow.created[0]);
    // Shown for the dialog, without waiting for the page's first paint.
    expect(BrowserWindow.created[0].visible).toBe(true);
    // The defaults, with a new token for the local hub (never an open hub by default).
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ ...DEFAULT_SETTINGS, hub: { port: 7420, token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/) } });
    expect(readdirSync(join(appData, "Semscope")).filter((f) => f.startsWith("settings.json.corrupt-"))).toHaveLength(1);
    // 7420 was held: the hub moved to a free port and said so.
    expect(dialog.messages.map((m) => m.options.title)).toContain("Port 7420 is not available");
    expect(app.exitCode).toBeNull();
    expect(dialog.errors).toEqual([]);

    app.quit();
    await vi.waitFor(() => expect(app.quits).toBe(2));
    expect(existsSync(file)).toBe(true);
  });
});
