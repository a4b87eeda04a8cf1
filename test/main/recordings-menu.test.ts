// File → Open Recording… and Save Recording… as main/electron wires them (only `electron`
// replaced): the chosen file opens in a locked-down window of its own, without the preload, on
// a replay hub that closes with the window; a chosen range of the local hub's recordings is
// saved under the chosen name; a file that cannot be opened is reported, not thrown.
import { mkdtempSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { io } from "socket.io-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_THRESHOLDS } from "../../shared/alerts/index.js";
import type { ReplayStatus } from "../../shared/ui-protocol/index.js";
import { RecordingsShell, SAVE_PRESETS } from "../../main/app/recordings-shell.js";
import { RollingRecorder } from "../../main/hub/recording/recording-rolling.js";
import { BrowserWindow, dialog, resetFake } from "./electron/fake-electron.js";
import { hello, info, sample, T0 } from "./hub/helpers.js";

vi.mock("electron", () => import("./electron/fake-electron.js"));
const { RecordingsMenu } = await import("../../main/electron/recordings-menu.js");

const lines = [
  { r: T0, k: "start", p: { format: 1, hubVersion: "t", protocol: 1, thresholds: DEFAULT_THRESHOLDS } },
  { r: T0 + 1, k: "hello", a: "a1", p: hello("a1") },
  { r: T0 + 2, k: "register", a: "a1", p: { semaphores: [info("db")] } },
  ...Array.from({ length: 30 }, (_, i) => ({ r: T0 + 1000 * (i + 1), k: "samples", a: "a1", p: { seq: i, t: T0 + 1000 * i, intervalMs: 1000, items: [sample("db")] } })),
] as const;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

function status(url: string): Promise<ReplayStatus> {
  const socket = io(`${url.replace(/\/$/, "")}/replay`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
  return new Promise<ReplayStatus>((resolve, reject) => {
    socket.once("replay:status", (s: ReplayStatus) => {
      socket.disconnect();
      resolve(s);
    });
    socket.once("connect_error", reject);
  }).finally(() => socket.disconnect());
}

describe("File → Open Recording… / Save Recording…", () => {
  it("opens the chosen recording in its own locked-down window, without the preload, until it closes", async () => {
    resetFake();
    const userData = mkdtempSync(join(tmpdir(), "semscope-menu-"));
    const file = join(userData, "plain.ndjson");
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const shell = new RecordingsShell({ userData, log: () => undefined });
    closers.push(() => shell.closeReplay());
    const menu = new RecordingsMenu(shell, () => null, () => undefined);
    // Cancelled: nothing happens.
    await menu.open();
    expect(BrowserWindow.created).toHaveLength(0);

    dialog.nextOpen = { canceled: false, filePaths: [file] };
    await menu.open();
    const win = BrowserWindow.created[0];
    const prefs = win.options.webPreferences as Record<string, unknown>;
    expect(prefs).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false });
    expect(prefs.preload).toBeUndefined();
    expect(win.loaded).toHaveLength(1);
    expect(win.loaded[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(win.title).toContain(file);
    const s = await status(win.loaded[0]);
    expect(s).toMatchObject({ name: "plain.ndjson", from: T0, to: T0 + 30_000, compressed: false });

    // Closing the window stops its replay hub.
    win.destroy();
    await vi.waitFor(async () => expect(await fetch(win.loaded[0]).then(() => "up", () => "down")).toBe("down"));

    // A file that is not there: a dialog says so.
    dialog.nextOpen = { canceled: false, filePaths: [join(userData, "missing.ndjson.gz")] };
    await menu.open();
    expect(dialog.messages.at(-1)?.options).toMatchObject({ title: "Could not open the recording", detail: expect.stringContaining("ENOENT") });
  });

  it("saves the chosen range of the local hub's recordings under the chosen name", async () => {
    resetFake();
    const userData = mkdtempSync(join(tmpdir(), "semscope-menu-"));
    const rec = new RollingRecorder({ dir: join(userData, "recordings"), capBytes: 1 << 30, log: () => undefined });
    for (const l of lines) rec.write(l as Parameters<RollingRecorder["write"]>[0]);
    rec.close();
    await rec.closed;
    const shell = new RecordingsShell({ userData, log: () => undefined, now: () => T0 + 30_000 });
    const menu = new RecordingsMenu(shell, () => null, () => undefined);
    dialog.nextResponse = SAVE_PRESETS.findIndex((p) => p.label === "Last 15 minutes");
    const target = join(userData, "incident.ndjson.gz");
    dialog.nextSave = { canceled: false, filePath: target };
    await menu.save();
    expect(existsSync(target)).toBe(true);
    const opened = await shell.open(target);
    closers.push(() => shell.closeReplay());
    expect(await status(opened.url)).toMatchObject({ name: "incident.ndjson.gz", range: { name: "incident", from: T0 + 30_000 - 15 * 60_000, to: T0 + 30_000 }, compressed: true });
    // Cancel on the range question: no save dialog at all.
    const asked = dialog.opened.length;
    dialog.nextResponse = SAVE_PRESETS.length;
    await menu.save();
    expect(dialog.opened.length).toBe(asked);
  });
});
