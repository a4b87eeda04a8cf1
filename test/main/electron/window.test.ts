// main/electron/window.ts with only `electron` replaced: the window's locks and the session's.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { TrustedOrigin } from "../../../main/app/navigation-policy.js";
import { cspWeaknesses } from "../../../main/app/csp.js";
import { BrowserWindow, FakeEvent, FakeWebContents, resetFake, session } from "./fake-electron.js";

vi.mock("electron", () => import("./fake-electron.js"));
const { createDashboardWindow, hardenSession, hardenWebContents, LOCKED_DOWN_WEB_PREFERENCES } = await import("../../../main/electron/window.js");

let trusted: TrustedOrigin | null;
const getTrusted = () => trusted;

beforeEach(() => {
  resetFake();
  trusted = { origin: "http://127.0.0.1:7420", local: true };
});

describe("the dashboard window", () => {
  it("gets the locked-down webPreferences and the preload, and shows when ready", () => {
    const win = createDashboardWindow({ preload: "/app/dist/main/electron/preload.cjs", getTrusted }) as unknown as BrowserWindow;
    const prefs = win.options.webPreferences as Record<string, unknown>;
    expect(prefs).toEqual({ ...LOCKED_DOWN_WEB_PREFERENCES, preload: "/app/dist/main/electron/preload.cjs" });
    expect(prefs).toMatchObject({
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
    });
    expect(prefs).not.toHaveProperty("enableBlinkFeatures");
    expect(Object.isFrozen(LOCKED_DOWN_WEB_PREFERENCES)).toBe(true);
    expect(win.options.show).toBe(false);
    win.emit("ready-to-show");
    expect(win.visible).toBe(true);
  });

  it("prevents navigation, redirects and frame navigation to another origin; allows the dashboard's own", () => {
    const win = createDashboardWindow({ preload: "/p.cjs", getTrusted }) as unknown as BrowserWindow;
    for (const event of ["will-navigate", "will-redirect", "will-frame-navigate"]) {
      const away = new FakeEvent("https://evil.example/phish");
      win.webContents.emit(event, away);
      expect(away.defaultPrevented, event).toBe(true);
      const file = new FakeEvent("file:///etc/passwd");
      win.webContents.emit(event, file);
      expect(file.defaultPrevented, event).toBe(true);
      const home = new FakeEvent("http://127.0.0.1:7420/semaphores");
      win.webContents.emit(event, home);
      expect(home.defaultPrevented, event).toBe(false);
    }
    // Before any hub is trusted, nothing is allowed.
    trusted = null;
    const early = new FakeEvent("http://127.0.0.1:7420/");
    win.webContents.emit("will-navigate", early);
    expect(early.defaultPrevented).toBe(true);
  });

  it("denies window.open for every URL, even the dashboard's, and refuses webviews", () => {
    const win = createDashboardWindow({ preload: "/p.cjs", getTrusted }) as unknown as BrowserWindow;
    const handler = win.webContents.windowOpenHandler!;
    for (const url of ["https://evil.example/", "http://127.0.0.1:7420/other", "about:blank", "javascript:alert(1)"]) {
      expect(handler({ url })).toEqual({ action: "deny" });
    }
    const attach = new FakeEvent();
    win.webContents.emit("will-attach-webview", attach);
    expect(attach.defaultPrevented).toBe(true);
  });

  it("logs what it refuses", () => {
    const log = vi.fn();
    const contents = new FakeWebContents();
    hardenWebContents(contents as never, getTrusted, log);
    contents.emit("will-navigate", new FakeEvent("https://evil.example/"));
    contents.windowOpenHandler!({ url: "https://evil.example/popup" });
    expect(log.mock.calls).toEqual([["semscope: navigation to https://evil.example/ refused"], ["semscope: window.open(https://evil.example/popup) refused"]]);
  });
});

describe("the session", () => {
  it("replaces any CSP the server sent with the strict dashboard policy, keeping other headers", () => {
    hardenSession(session.defaultSession as never, getTrusted);
    let out: Record<string, string[]> | undefined;
    session.defaultSession.headersListener!(
      { url: "http://127.0.0.1:7420/", responseHeaders: { "content-security-policy": ["default-src *"], "Content-Type": ["text/html"] } },
      (r) => (out = r.responseHeaders),
    );
    expect(out!["Content-Type"]).toEqual(["text/html"]);
    expect(out!["content-security-policy"]).toBeUndefined();
    const [csp] = out!["Content-Security-Policy"];
    expect(cspWeaknesses(csp)).toEqual([]);
    expect(csp).toContain("connect-src 'self' ws://127.0.0.1:7420");
    expect(csp).toContain("script-src 'self'");
  });

  it("sets the CSP even on responses without headers, and before a hub is trusted", () => {
    hardenSession(session.defaultSession as never, getTrusted);
    trusted = null;
    let out: Record<string, string[]> | undefined;
    session.defaultSession.headersListener!({ url: "http://127.0.0.1:7420/" }, (r) => (out = r.responseHeaders));
    expect(cspWeaknesses(out!["Content-Security-Policy"][0])).toEqual([]);
  });

  it("denies permission requests and checks, except a clipboard write from the dashboard", () => {
    hardenSession(session.defaultSession as never, getTrusted);
    const answers: boolean[] = [];
    const ask = (permission: string, requestingUrl: string) =>
      session.defaultSession.permissionRequest!({ getURL: () => requestingUrl }, permission, (g) => answers.push(g), { requestingUrl });
    ask("media", "http://127.0.0.1:7420/");
    ask("geolocation", "http://127.0.0.1:7420/");
    ask("notifications", "http://127.0.0.1:7420/");
    ask("openExternal", "http://127.0.0.1:7420/");
    ask("clipboard-sanitized-write", "https://evil.example/");
    ask("clipboard-sanitized-write", "http://127.0.0.1:7420/");
    expect(answers).toEqual([false, false, false, false, false, true]);
    expect(session.defaultSession.permissionCheck!(null, "media", "http://127.0.0.1:7420")).toBe(false);
    expect(session.defaultSession.permissionCheck!(null, "clipboard-sanitized-write", "http://127.0.0.1:7420")).toBe(true);
  });
});

describe("hardening twice", () => {
  it("adds its listeners once per webContents (the window's and app's web-contents-created both call it)", () => {
    const contents = new FakeWebContents();
    hardenWebContents(contents as never, getTrusted);
    hardenWebContents(contents as never, getTrusted);
    expect(contents.listenerCount("will-navigate")).toBe(1);
  });
});
