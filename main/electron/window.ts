// The dashboard window and the locks on it (Electron's security checklist): a sandboxed,
// context-isolated renderer without Node; navigation, popups, webviews and permissions refused
// unless main/app/navigation-policy.ts allows them; a strict CSP on every response.
import { BrowserWindow, type NativeImage, type Session, type WebContents, type WebPreferences } from "electron";
import { dashboardCsp } from "../app/csp.js";
import { allowPermission, allowWebviewAttach, isAllowedNavigation, windowOpenDecision, type TrustedOrigin } from "../app/navigation-policy.js";

export type GetTrusted = () => TrustedOrigin | null;

/** Every page the app shows runs with these (the preload is added per window). */
export const LOCKED_DOWN_WEB_PREFERENCES = Object.freeze({
  sandbox: true,
  contextIsolation: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  nodeIntegrationInSubFrames: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  experimentalFeatures: false,
  webviewTag: false,
  navigateOnDragDrop: false,
  safeDialogs: true,
  spellcheck: false,
} as const satisfies WebPreferences);

export interface DashboardWindowOptions {
  preload: string;
  icon?: NativeImage;
  getTrusted: GetTrusted;
  log?: (line: string) => void;
}

export function createDashboardWindow(opts: DashboardWindowOptions): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 720,
    minHeight: 480,
    show: false,
    title: "Semscope",
    backgroundColor: "#111827",
    ...(opts.icon !== undefined ? { icon: opts.icon } : {}),
    webPreferences: { ...LOCKED_DOWN_WEB_PREFERENCES, preload: opts.preload },
  });
  hardenWebContents(win.webContents, opts.getTrusted, opts.log);
  win.once("ready-to-show", () => win.show());
  return win;
}

const hardened = new WeakSet<WebContents>();

/** Applied to every webContents the app creates (app "web-contents-created"), windows or not; once each. */
export function hardenWebContents(contents: WebContents, getTrusted: GetTrusted, log: (line: string) => void = () => undefined): void {
  if (hardened.has(contents)) return;
  hardened.add(contents);
  const guard = (kind: string) => (event: { url: string; preventDefault(): void }) => {
    if (isAllowedNavigation(event.url, getTrusted())) return;
    event.preventDefault();
    log(`semscope: ${kind} to ${event.url} refused`);
  };
  contents.on("will-navigate", guard("navigation"));
  contents.on("will-frame-navigate", guard("frame navigation"));
  contents.on("will-redirect", guard("redirect"));
  contents.setWindowOpenHandler((details) => {
    log(`semscope: window.open(${details.url}) refused`);
    return windowOpenDecision();
  });
  contents.on("will-attach-webview", (event) => {
    if (!allowWebviewAttach()) event.preventDefault();
  });
}

/** The session's CSP header and permission answers. */
export function hardenSession(ses: Session, getTrusted: GetTrusted): void {
  ses.webRequest.onHeadersReceived((details, callback) => {
    const headers: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(details.responseHeaders ?? {})) {
      // The server's own policy (if any) is replaced, never merged: main decides.
      if (name.toLowerCase() !== "content-security-policy") headers[name] = value;
    }
    headers["Content-Security-Policy"] = [dashboardCsp(getTrusted()?.origin ?? null)];
    callback({ responseHeaders: headers });
  });
  ses.setPermissionRequestHandler((contents, permission, callback, details) => {
    callback(allowPermission(permission, details.requestingUrl ?? contents.getURL(), getTrusted()));
  });
  ses.setPermissionCheckHandler((_contents, permission, requestingOrigin) => allowPermission(permission, requestingOrigin, getTrusted()));
}
