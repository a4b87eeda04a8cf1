// The Settings view in Chromium (issue 28: the token shown where a user looks for it). In web mode
// it shows the token the page connects with, or none, beside the connect snippet (the empty
// state's); with an agent token it says services use that one. In the app (the preload's bridge
// given to the page over the real ShellController, settings file and in-process hub), the
// Settings… menu opens it on the token made at first run, and a new token, once confirmed,
// restarts the hub with it and brings the window back on Settings showing it; the app's other
// settings are shown, checked at their fields and saved.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkInvoke } from "../../../main/app/ipc-contract.js";
import { ShellController, type ShellView } from "../../../main/app/shell-controller.js";
import type { ShellHub, StartHub } from "../../../main/app/shell-hub.js";
import { createHub, type Hub, type HubOptions } from "../../../main/hub/index.js";
import { defaultSettings } from "../../../main/settings/settings-schema.js";
import { SettingsStore } from "../../../main/settings/settings-store.js";
import type { InvokeChannel, IpcInvokeMap, Settings } from "../../../shared/ipc/ipc-contract.js";
import { buildRenderer, launchBrowser, until, type Browser } from "../browser.js";

const TOKEN = "s3cret-token";

let built: { dir: string; remove: () => void };
let browser: Browser;

beforeAll(async () => {
  built = await buildRenderer();
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  built?.remove();
});

/** A hub serving the built dashboard, a tab on its Settings (through the header's tab), then `check`. */
async function onSettings(opts: HubOptions, query: string, check: (tab: Awaited<ReturnType<Browser["context"]["newPage"]>>, hub: Hub) => Promise<void>): Promise<void> {
  const hub = await createHub({ port: 0, staticDir: built.dir, log: () => undefined, ...opts });
  const tab = await browser.context.newPage();
  try {
    await tab.goto(`${hub.url}/${query}`);
    await tab.getByTestId("settings-tab").click({ timeout: 15_000 });
    await tab.getByTestId("settings-view").waitFor({ timeout: 10_000 });
    await check(tab, hub);
  } finally {
    await tab.close();
    await hub.close();
  }
}

describe("the Settings view in web mode", () => {
  it("shows the token the page connects with and the connect snippet, and copies both", async () => {
    await onSettings({ token: TOKEN }, `?token=${TOKEN}`, async (tab, hub) => {
      await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: hub.url });
      expect(await tab.getByTestId("dashboard-token").textContent()).toBe(TOKEN);
      expect(await tab.getByTestId("service-token").textContent()).toContain("the same token");
      const connect = tab.getByTestId("settings-connect");
      expect(await connect.getByTestId("hub-token").textContent()).toBe(`SEMSCOPE_TOKEN=${TOKEN}`);
      const snippet = (await connect.getByTestId("agent-snippet").textContent()) ?? "";
      expect(snippet).toContain(`url: "${hub.url}"`);
      expect(snippet).toContain("token: process.env.SEMSCOPE_TOKEN");
      expect(snippet).not.toContain(TOKEN);
      // Only the app's own hub can be given a new token.
      expect(await tab.getByTestId("regenerate-token").count()).toBe(0);
      await tab.getByTestId("copy-dashboard-token").click();
      await until("the Copied label", () => tab.getByTestId("copy-dashboard-token").textContent(), (t) => t === "Copied");
      expect(await tab.evaluate(() => navigator.clipboard.readText())).toBe(TOKEN);
      await connect.getByTestId("copy-snippet").click();
      expect((await tab.evaluate(() => navigator.clipboard.readText())).trim()).toBe(snippet.trim());
    });
  }, 45_000);

  it("with an agent token on the hub, says services use it and never offers the page's token to them", async () => {
    await onSettings({ token: TOKEN, agentToken: "agent-only" }, `?token=${TOKEN}`, async (tab) => {
      expect(await tab.getByTestId("service-token").textContent()).toContain("agent token");
      expect(await tab.getByTestId("agent-token-note").textContent()).toContain("agent token");
      expect(await tab.getByTestId("hub-token").count()).toBe(0);
      expect(await tab.getByTestId("settings-connect").innerText()).not.toContain(TOKEN);
      expect(await tab.getByTestId("settings-view").innerText()).not.toContain("agent-only");
    });
  }, 30_000);

  it("with a hub that has no token, shows none", async () => {
    await onSettings({}, "", async (tab) => {
      expect(await tab.getByTestId("no-token").textContent()).toContain("this page connects without one");
      expect(await tab.getByTestId("hub-token").count()).toBe(0);
      expect(await tab.getByTestId("agent-snippet").textContent()).not.toContain("SEMSCOPE_TOKEN");
    });
  }, 30_000);
});

type Tab = Awaited<ReturnType<Browser["context"]["newPage"]>>;

/**
 * The app around a tab: the real ShellController over a settings file in a temp folder and
 * in-process hubs, with the preload's bridge given to the page (each call checked as ipc-main
 * checks it, then handled by the shell). `before` writes the settings file, if any.
 */
async function inApp(before: (file: string) => void, run: (tab: Tab, shell: ShellController, started: ShellHub[], file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "semscope-settings-ui-"));
  const file = join(dir, "settings.json");
  before(file);
  const tab = await browser.context.newPage();
  const started: ShellHub[] = [];
  // The configured port may be taken on this machine: any free one, as the shell's own fallback would.
  const startHub: StartHub = async (opts) => {
    const hub = await createHub({ ...opts, port: 0, log: () => undefined });
    started.push(hub);
    return hub;
  };
  const view: ShellView = {
    show: async (url) => void (await tab.goto(url)),
    focusWindow: () => undefined,
    sendFocusSemaphore: () => undefined,
    sendShowSettings: () => void tab.evaluate(() => (window as unknown as { __showSettings?: () => void }).__showSettings?.()),
    setApplicationMenu: () => undefined,
    setTray: () => undefined,
    notify: () => undefined,
    reportProblem: () => undefined,
    quit: () => undefined,
  };
  const store = await SettingsStore.open(file);
  const shell = new ShellController({ store, startHub, view, platform: "linux", isPackaged: true, staticDir: built.dir, log: () => undefined });
  const handlers: { [C in InvokeChannel]: (...args: IpcInvokeMap[C]["args"]) => unknown } = {
    "settings:get": () => shell.settingsView(),
    "settings:save": (s) => shell.saveSettings(s),
    "connection:get": () => shell.connection(),
    "token:regenerate": () => shell.regenerateHubToken(),
  };
  await tab.exposeBinding("__semscopeInvoke", ({ frame }, channel: InvokeChannel, ...args: unknown[]) => {
    const verdict = checkInvoke(channel, { frameUrl: frame.url(), isMainFrame: frame.parentFrame() === null, fromDashboardWindow: true }, shell.trustedOrigin, args);
    if (!verdict.ok) throw new Error(verdict.reason);
    return (handlers[channel] as (...a: unknown[]) => unknown)(...verdict.args);
  });
  await tab.addInitScript(() => {
    const w = window as unknown as { __semscopeInvoke: (c: string, ...a: unknown[]) => Promise<unknown>; semscope: unknown; __showSettings?: () => void };
    w.semscope = {
      bridgeVersion: 1,
      getSettings: () => w.__semscopeInvoke("settings:get"),
      saveSettings: (s: unknown) => w.__semscopeInvoke("settings:save", s),
      getConnection: () => w.__semscopeInvoke("connection:get"),
      regenerateHubToken: () => w.__semscopeInvoke("token:regenerate"),
      onFocusSemaphore: () => () => undefined,
      onShowSettings: (listener: () => void) => {
        w.__showSettings = listener;
        return () => undefined;
      },
    };
  });
  try {
    expect(await shell.start()).toBe(true);
    await run(tab, shell, started, file);
  } finally {
    await shell.shutdown();
    await tab.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the Settings view in the app", () => {
  it("opens from the Settings… menu on the first run's token; a confirmed new token restarts the hub with it and shows it", async () => {
    await inApp(
      () => undefined,
      async (tab, shell, started, file) => {
        const first = (JSON.parse(readFileSync(file, "utf8")) as Settings).hub.token ?? "";
        expect(first).toMatch(/^[A-Za-z0-9_-]{32}$/);
        await tab.getByTestId("empty-state").waitFor({ timeout: 15_000 });
        shell.onMenuAction({ type: "show-settings" });
        await tab.getByTestId("settings-view").waitFor({ timeout: 10_000 });
        expect(await tab.getByTestId("dashboard-token").textContent()).toBe(first);
        expect(await tab.getByTestId("settings-connect").getByTestId("hub-token").textContent()).toBe(`SEMSCOPE_TOKEN=${first}`);
        expect(await tab.getByTestId("settings-file").textContent()).toContain(file);
        expect(await tab.getByTestId("settings-problem").count()).toBe(0);

        // Cancel changes nothing; confirming says who will need the new token first.
        await tab.getByTestId("regenerate-token").click();
        const confirm = tab.getByTestId("regenerate-confirm");
        expect(await confirm.textContent()).toContain("Connected agents and open dashboards");
        await confirm.getByRole("button", { name: "Cancel" }).click();
        expect(JSON.parse(readFileSync(file, "utf8")).hub.token).toBe(first);
        await tab.getByTestId("regenerate-token").click();
        await tab.getByTestId("regenerate-confirm-button").click();

        const second = await until("the new token in the settings file", () => (JSON.parse(readFileSync(file, "utf8")) as Settings).hub.token, (t) => t !== first);
        await until("the hub restarted", () => started.length, (n) => n === 2);
        const hub = started[1];
        await until("the window on the new hub's Settings", () => tab.url(), (u) => u === `${hub.url}/#/settings`);
        await until("the new token shown", () => tab.getByTestId("dashboard-token").textContent({ timeout: 10_000 }), (t) => t === second);
        expect((await fetch(`${hub.url}/api/state`, { headers: { Authorization: `Bearer ${first}` } })).status).toBe(401);
        expect((await fetch(`${hub.url}/api/state`, { headers: { Authorization: `Bearer ${second ?? ""}` } })).status).toBe(200);
      },
    );
  }, 60_000);

  it("shows and changes the other settings and remote hubs: a field left out of the file is named; a bad value is refused at its field and saves nothing; a good save keeps the token and the thresholds set meanwhile", async () => {
    const userText = JSON.stringify({ ...defaultSettings(), hub: { port: 17420, token: "tok3n" }, theme: "dark", notifications: { enabled: true, minSeverity: "critical", mutedRules: ["leak"], silent: false } }, null, 2);
    await inApp(
      (file) => writeFileSync(file, userText, { mode: 0o600 }),
      async (tab, shell, started, file) => {
        await tab.getByTestId("empty-state").waitFor({ timeout: 15_000 });
        shell.onMenuAction({ type: "show-settings" });
        const form = tab.getByTestId("app-settings");
        await form.waitFor({ timeout: 15_000 });
        expect(await tab.getByTestId("settings-problem").textContent()).toContain("theme: is not a setting (left out)");
        expect(await tab.getByTestId("set-port").inputValue()).toBe("17420");
        expect(await tab.getByTestId("set-mute-leak").isChecked()).toBe(true);
        expect(await tab.getByTestId("set-cap").inputValue()).toBe("1024");
        const errorAt = (testId: string) => form.locator("label", { has: tab.getByTestId(testId) }).getByTestId("field-error").textContent({ timeout: 10_000 });

        // Not a number, out of the rules, not an http URL: each refused at its field, the file untouched.
        await tab.getByTestId("set-port").fill("7o");
        await tab.getByTestId("settings-save").click();
        expect(await errorAt("set-port")).toBe("must be a whole number");
        await tab.getByTestId("set-port").fill("70000");
        await tab.getByTestId("set-webhooks").fill("ftp://hooks.example.com/x");
        const addRemote = async (name: string, url: string, token: string) => {
          await tab.getByTestId("set-remote-name").fill(name);
          await tab.getByTestId("set-remote-url").fill(url);
          await tab.getByTestId("set-remote-token").fill(token);
          await tab.getByTestId("set-remote-add").click();
        };
        await addRemote("Lab", "http://lab.example.com", "");
        await tab.getByTestId("settings-save").click();
        expect(await errorAt("set-port")).toBe("must be in 1..65535");
        expect(await errorAt("set-webhooks")).toBe("alertForwarding.webhooks[0]: must be an http:// or https:// URL");
        expect(await tab.getByTestId("set-remotes").getByTestId("field-error").textContent()).toBe(
          "remoteHubs[0].url: plain http is allowed only for loopback hosts: use https",
        );
        expect(await tab.getByTestId("settings-refused").textContent()).toContain("Not saved");
        expect(readFileSync(file, "utf8")).toBe(userText);

        // A threshold set on the hub meanwhile (the rules panel's thresholds:set) survives the form's save.
        started[0].setThresholds({ timeouts: { ratio: 0.3 } });
        await until("the threshold saved", () => (JSON.parse(readFileSync(file, "utf8")) as Settings).thresholds, (t) => JSON.stringify(t) === '{"timeouts":{"ratio":0.3}}');
        await tab.getByTestId("set-port").fill("17420");
        await tab.getByTestId("set-webhooks").fill("");
        await tab.getByTestId("set-notify").uncheck();
        await tab.getByTestId("set-min-severity").selectOption("warning");
        await tab.getByTestId("set-mute-convoy").check();
        await tab.getByTestId("set-cap").fill("64");
        await tab.getByTestId("set-remote-remove").click();
        await addRemote("Prod EU", "https://prod.example.com:7420", "p-t0ken");
        await tab.getByTestId("settings-save").click();
        expect(await tab.getByTestId("settings-saved").textContent()).toBe("Saved.");
        const saved = JSON.parse(readFileSync(file, "utf8")) as Settings;
        expect(saved.hub).toEqual({ port: 17420, token: "tok3n" });
        expect(saved.notifications).toEqual({ enabled: false, minSeverity: "warning", mutedRules: ["leak", "convoy"], silent: false });
        expect(saved.recording).toEqual({ enabled: true, capBytes: 64 * 1024 * 1024 });
        expect(saved.thresholds).toEqual({ timeouts: { ratio: 0.3 } });
        expect(saved.remoteHubs).toEqual([{ id: "prod-eu", name: "Prod EU", url: "https://prod.example.com:7420", token: "p-t0ken" }]);
        expect(await tab.getByTestId("set-remote").textContent()).toContain("Prod EU");
        expect(statSync(file).mode & 0o777).toBe(0o600);
        expect(readdirSync(join(file, "..")).some((f) => f.startsWith("settings.json.before-"))).toBe(true);
        expect(started).toHaveLength(1);

        // A new port restarts the hub; the window reloads and Settings shows it.
        await tab.getByTestId("set-port").fill("17421");
        await tab.getByTestId("settings-save").click();
        await until("the hub restarted", () => started.length, (n) => n === 2);
        expect((JSON.parse(readFileSync(file, "utf8")) as Settings).hub).toEqual({ port: 17421, token: "tok3n" });
        await until("the window on the new hub", () => tab.url(), (u) => u.startsWith(started[1].url));
        await tab.getByTestId("empty-state").waitFor({ timeout: 15_000 });
        shell.onMenuAction({ type: "show-settings" });
        await until("the new port shown", () => tab.getByTestId("set-port").inputValue({ timeout: 10_000 }), (v) => v === "17421");
      },
    );
  }, 90_000);
});
