// The Electron entry: one instance, the in-process hub, one locked-down window on its dashboard,
// tray, menu and notifications. Behaviour lives in main/app/shell-controller.ts; this file only
// wires Electron's objects to it.
import { app, dialog, Menu, nativeImage, session } from "electron";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EVENT_CHANNELS } from "../../shared/ipc/ipc-contract.js";
import { appIconPng } from "../app/icon-art.js";
import { DemoService, findDemo } from "../app/demo-service.js";
import { parseLaunchArgs, rendererDir, unpackedAppDir } from "../app/launch.js";
import { QuitGuard } from "../app/quit-guard.js";
import { createAppRecorder, recordingSettings } from "../app/recordings.js";
import { RecordingsShell } from "../app/recordings-shell.js";
import type { MenuAction } from "../app/menu-template.js";
import { ShellController, type ShellView } from "../app/shell-controller.js";
import { applyHubRuntimeFlags, createHub } from "../hub/index.js";
import { SETTINGS_FILE_NAME, SettingsStore } from "../settings/settings-store.js";
import { utilityForker } from "./demo-process.js";
import { registerIpc, sendToDashboard } from "./ipc-main.js";
import { buildMenu } from "./menu.js";
import { RecordingsMenu } from "./recordings-menu.js";
import { showNotification } from "./notifications.js";
import { AppTray } from "./tray.js";
import { createDashboardWindow, hardenSession, hardenWebContents } from "./window.js";

export const APP_ID = "dev.semscope.app";
const log = (line: string) => process.stderr.write(`${line}\n`);
const [FOCUS_CHANNEL, SHOW_SETTINGS_CHANNEL] = EVENT_CHANNELS;

export function main(): void {
  // Before the hub allocates anything: the packaged app gets no --js-flags (npm start passes them).
  applyHubRuntimeFlags();
  // One folder for dev and packaged runs alike (the package name and productName differ in case).
  app.setPath("userData", join(app.getPath("appData"), "Semscope"));
  app.setAppUserModelId(APP_ID);
  app.enableSandbox();
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  app
    .whenReady()
    .then(start)
    .catch((err: unknown) => fatal(err));
}

async function start(): Promise<void> {
  const store = await SettingsStore.open(join(app.getPath("userData"), SETTINGS_FILE_NAME));
  let controller: ShellController | null = null;
  const getTrusted = () => controller?.trustedOrigin ?? null;
  app.on("web-contents-created", (_event, contents) => hardenWebContents(contents, getTrusted, log));
  hardenSession(session.defaultSession, getTrusted);

  let quitting = false;
  const win = createDashboardWindow({
    preload: fileURLToPath(new URL("./preload.cjs", import.meta.url)),
    icon: nativeImage.createFromBuffer(appIconPng(256)),
    getTrusted,
    log,
  });
  // macOS keeps apps running without windows: closing hides; Quit (or the tray) quits.
  win.on("close", (event) => {
    if (process.platform === "darwin" && !quitting) {
      event.preventDefault();
      win.hide();
    }
  });
  const focusWindow = () => {
    if (win.isDestroyed()) return;
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  };
  let recordingsMenu: RecordingsMenu | null = null;
  const onMenuAction = (action: MenuAction): void => {
    if (action.type === "open-recording") void recordingsMenu?.open();
    else if (action.type === "save-recording") void recordingsMenu?.save();
    else controller?.onMenuAction(action);
  };
  const tray = new AppTray(onMenuAction);
  const view: ShellView = {
    show: (url) => win.loadURL(url),
    focusWindow,
    sendFocusSemaphore: (focus) => sendToDashboard(win.isDestroyed() ? null : win.webContents, FOCUS_CHANNEL, focus),
    sendShowSettings: () => sendToDashboard(win.isDestroyed() ? null : win.webContents, SHOW_SETTINGS_CHANNEL, {}),
    setApplicationMenu: (items) => Menu.setApplicationMenu(buildMenu(items, onMenuAction)),
    setTray: (state, items) => tray.update(state, items),
    notify: showNotification,
    reportProblem: (title, detail) => {
      log(`semscope: ${title}: ${detail}`);
      if (win.isDestroyed()) return;
      // The window waits for its first paint to show; a problem (no hub, no page) must not wait for it.
      if (!win.isVisible()) win.show();
      void dialog.showMessageBox(win, { type: "warning", title, message: title, detail });
    },
    quit: () => app.quit(),
  };

  const staticDir = rendererDir(app.getAppPath(), app.isPackaged);
  const hasDashboard = existsSync(join(staticDir, "index.html"));
  const { record, noDemo, port, problems } = parseLaunchArgs(process.argv);
  for (const problem of problems ?? []) log(`semscope: ${problem}`);
  // `npm start` hands its --port and --token over (the token in the environment, out of `ps`).
  const envToken = process.env.SEMSCOPE_TOKEN;
  const localOverride = { ...(port !== undefined ? { port } : {}), ...(envToken !== undefined && envToken !== "" ? { token: envToken } : {}) };
  // Bundled by packaging (build/bundle-demo.mjs). In a checkout `npm start` runs the demo itself
  // (a dist/demo left by a packaging run must not make it two).
  const demoPlan =
    noDemo === true ? { missing: "--no-demo" } : !app.isPackaged ? { missing: "not packaged" } : findDemo(unpackedAppDir(app.getAppPath(), true));
  if ("missing" in demoPlan && app.isPackaged && noDemo !== true) log(`semscope: no built-in demo: ${demoPlan.missing}`);
  const demo = "missing" in demoPlan ? undefined : new DemoService({ ...demoPlan, fork: utilityForker(log), log });
  const userData = app.getPath("userData");
  recordingsMenu = new RecordingsMenu(
    new RecordingsShell({ userData, ...(hasDashboard ? { staticDir } : {}), log }),
    () => (win.isDestroyed() ? null : win),
    log,
  );
  controller = new ShellController({
    store,
    // The local hub records into the rolling recordings unless --record names a file.
    startHub: (opts) =>
      createHub({ ...opts, ...(opts.record === undefined ? { recordSink: createAppRecorder(userData, recordingSettings(store.current), log) } : {}) }),
    view,
    platform: process.platform,
    isPackaged: app.isPackaged,
    ...(hasDashboard ? { staticDir } : {}),
    ...(record !== undefined ? { record } : {}),
    localOverride,
    ...(demo !== undefined ? { demo } : {}),
    log,
  });
  const shell = controller;
  registerIpc({
    handlers: {
      "settings:get": () => shell.settingsView(),
      "settings:save": (settings) => shell.saveSettings(settings),
      "connection:get": () => shell.connection(),
      "token:regenerate": () => shell.regenerateHubToken(),
    },
    getDashboard: () => (win.isDestroyed() ? null : win.webContents),
    getTrusted,
    log,
  });

  const guard = new QuitGuard({
    shutdown: async () => {
      recordingsMenu?.close();
      await shell.shutdown();
    },
    requestQuit: () => app.quit(),
    log,
  });
  app.on("before-quit", (event) => {
    quitting = true;
    if (guard.onQuitRequested() === "defer") event.preventDefault();
    else tray.destroy();
  });
  app.on("window-all-closed", () => {
    if (process.platform !== "darwin") app.quit();
  });
  app.on("second-instance", focusWindow);
  app.on("activate", focusWindow);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => app.quit());

  if (!hasDashboard) view.reportProblem("The dashboard is not built", `${staticDir} has no index.html: build the renderer (vite) first.`);
  await shell.start();
}

function fatal(err: unknown): void {
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  log(`semscope: could not start: ${message}`);
  dialog.showErrorBox("Semscope could not start", message);
  app.exit(1);
}

main();
