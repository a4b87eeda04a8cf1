// The shell's behaviour against a real in-process hub (createHub on a free port) and a recording
// ShellView: what the window is pointed at, what is notified and counted, how settings apply.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { applyThresholds, DEFAULT_THRESHOLDS, type AlertEngine, type AlertThresholds } from "../../../shared/alerts/index.js";
import type { FocusSemaphore, Settings } from "../../../shared/ipc/ipc-contract.js";
import type { Alert } from "../../../shared/protocol/types.js";
import type { UiDelta } from "../../../shared/ui-protocol/types.js";
import type { NotificationText } from "../../../main/app/alert-notifier.js";
import type { MenuItemData } from "../../../main/app/menu-template.js";
import type { TrustedOrigin } from "../../../main/app/navigation-policy.js";
import { ShellController, type ShellView } from "../../../main/app/shell-controller.js";
import type { LocalHubOptions, ShellHub, StartHub } from "../../../main/app/shell-hub.js";
import type { TrayState } from "../../../main/app/tray-state.js";
import { createHub, type Hub } from "../../../main/hub/index.js";
import { defaultSettings } from "../../../main/settings/settings-schema.js";
import { SettingsStore } from "../../../main/settings/settings-store.js";
import { makeHello, makeInfo } from "../../fixtures/protocol.js";
import { agent, request, type AckAnswer } from "../hub/helpers.js";
import { makeAlert } from "./make-alert.js";

class RecordingView implements ShellView {
  shown: { url: string; trusted: TrustedOrigin }[] = [];
  notes: { text: NotificationText; silent: boolean; onClick: () => void }[] = [];
  focused = 0;
  focus: FocusSemaphore[] = [];
  settingsShown = 0;
  menus: MenuItemData[][] = [];
  trays: TrayState[] = [];
  problems: { title: string; detail: string }[] = [];
  quits = 0;
  show = async (url: string, trusted: TrustedOrigin) => {
    this.shown.push({ url, trusted });
  };
  focusWindow = () => void this.focused++;
  sendFocusSemaphore = (f: FocusSemaphore) => void this.focus.push(f);
  sendShowSettings = () => void this.settingsShown++;
  setApplicationMenu = (m: MenuItemData[]) => void this.menus.push(m);
  setTray = (s: TrayState) => void this.trays.push(s);
  notify = (text: NotificationText, opts: { silent: boolean; onClick: () => void }) => void this.notes.push({ text, ...opts });
  reportProblem = (title: string, detail: string) => void this.problems.push({ title, detail });
  quit = () => void this.quits++;
}

let dir: string;
let view: RecordingView;
let controller: ShellController | undefined;
const started: ShellHub[] = [];
const hubOptions: LocalHubOptions[] = [];

/** The real hub, always on a free port (the test cannot own 7420); remembers what it was asked. */
const realHub: StartHub = async (opts) => {
  hubOptions.push(opts);
  const hub = await createHub({ ...opts, port: 0, log: () => undefined });
  started.push(hub);
  return hub;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "semscope-shell-"));
  view = new RecordingView();
  started.length = 0;
  hubOptions.length = 0;
});
afterEach(async () => {
  await controller?.shutdown();
  controller = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function storeWith(change: (s: Settings) => void = () => undefined): Promise<SettingsStore> {
  const s = defaultSettings();
  change(s);
  writeFileSync(join(dir, "settings.json"), JSON.stringify(s));
  return SettingsStore.open(join(dir, "settings.json"));
}

function make(store: SettingsStore, extra: Partial<ConstructorParameters<typeof ShellController>[0]> = {}): ShellController {
  controller = new ShellController({ store, startHub: realHub, view, platform: "linux", isPackaged: true, localPollMs: 10, remotePollMs: 10, log: () => undefined, ...extra });
  return controller;
}

/** Raises a critical leak on `engine` the way an agent's messages would. */
function raiseLeak(engine: AlertEngine, service = "checkout"): void {
  const now = Date.now();
  const agentId = `agent-${service}`;
  engine.hello(agentId, makeHello(agentId, { service, startedAt: now }), now);
  engine.register(agentId, [makeInfo("db", { leakThresholdMs: 10_000 })], now);
  engine.events(agentId, { items: [{ t: now, id: "db", type: "leak_suspected", holderId: "h1", heldMs: 12_000 }] }, now);
}

describe("ShellController with the local hub", () => {
  it("starts the hub on loopback with the settings' port, token and thresholds, and shows its dashboard", async () => {
    const staticDir = join(dir, "renderer");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(staticDir);
    writeFileSync(join(staticDir, "index.html"), "<!doctype html><title>dash</title>");
    const store = await storeWith((s) => {
      s.hub = { port: 7777, token: "t0k" };
      s.thresholds = { convoy: { windowMs: 9000 } };
    });
    const c = make(store, { staticDir, record: join(dir, "rec.ndjson") });
    expect(await c.start()).toBe(true);
    expect(hubOptions).toEqual([{ host: "127.0.0.1", port: 7777, token: "t0k", record: join(dir, "rec.ndjson"), staticDir, thresholds: { convoy: { windowMs: 9000 } }, alertForwarding: { alertmanager: [], webhooks: [] }, onThresholdsChanged: expect.any(Function) }]);
    const hub = started[0];
    expect(view.shown).toEqual([{ url: `${hub.url}/`, trusted: { origin: hub.url, local: true } }]);
    expect(c.trustedOrigin).toEqual({ origin: hub.url, local: true });
    expect(c.connection()).toEqual({ mode: "local", name: "Local hub", url: hub.url, token: "t0k" });
    // The hub really serves the dashboard (static files need no token; its API does).
    expect(await (await fetch(`${hub.url}/`)).text()).toContain("<title>dash</title>");
    expect((await fetch(`${hub.url}/api/state`)).status).toBe(401);
    expect((await fetch(`${hub.url}/api/state`, { headers: { Authorization: "Bearer t0k" } })).status).toBe(200);
    expect((started[0].engine as AlertEngine).thresholds.convoy.windowMs).toBe(9000);
    expect(view.menus.at(-1)?.map((m) => ("label" in m ? m.label : ""))).toContain("&Hub");
  });

  it("notifies a new critical alert; a click focuses the window and that semaphore; the tray counts it", async () => {
    const c = make(await storeWith());
    await c.start();
    await vi.waitFor(() => expect(view.trays.at(-1)).toMatchObject({ count: 0, level: "ok" }));
    raiseLeak(started[0].engine as AlertEngine);
    await vi.waitFor(() => expect(view.notes).toHaveLength(1));
    const note = view.notes[0];
    expect(note.text.title).toBe("Critical: leak — db on checkout/web-1");
    expect(note.silent).toBe(false);
    await vi.waitFor(() => expect(view.trays.at(-1)).toMatchObject({ count: 1, critical: 1, level: "critical", title: "1" }));
    note.onClick();
    expect(view.focused).toBe(1);
    const alert = (started[0].engine as AlertEngine).activeAlerts()[0];
    expect(view.focus).toEqual([{ key: "checkout/web-1/db", alertId: alert.id }]);
    // Still active: not notified again.
    await new Promise((r) => setTimeout(r, 50));
    expect(view.notes).toHaveLength(1);
  });

  it("follows notification preferences: disabled, nothing is notified, the tray still counts", async () => {
    const c = make(await storeWith((s) => (s.notifications.enabled = false)));
    await c.start();
    await vi.waitFor(() => expect(view.trays.length).toBeGreaterThan(0));
    raiseLeak(started[0].engine as AlertEngine);
    await vi.waitFor(() => expect(view.trays.at(-1)).toMatchObject({ count: 1 }));
    expect(view.notes).toEqual([]);
  });

  it("falls back to a free port, and says so, when the configured one is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const taken = (blocker.address() as { port: number }).port;
    try {
      const c = make(await storeWith((s) => (s.hub.port = taken)), { startHub: (o) => createHub({ ...o, log: () => undefined }).then((h) => (started.push(h), h)) });
      expect(await c.start()).toBe(true);
      expect(started[0].port).not.toBe(taken);
      expect(view.problems[0].title).toBe(`Port ${taken} is not available`);
      expect(view.problems[0].detail).toContain("agents configured for");
      expect(view.shown).toHaveLength(1);
    } finally {
      blocker.close();
    }
  });

  it("reports a hub that cannot start at all, and shows nothing", async () => {
    const c = make(await storeWith(), { startHub: () => Promise.reject(new Error("boom")) });
    expect(await c.start()).toBe(false);
    expect(view.problems).toEqual([{ title: "The local hub could not start", detail: "boom; on a free port: boom" }]);
    expect(view.shown).toEqual([]);
    expect(c.trustedOrigin).toBeNull();
  });

  it("reports a settings file that was replaced, before anything else", async () => {
    writeFileSync(join(dir, "settings.json"), "{ broken");
    const c = make(await SettingsStore.open(join(dir, "settings.json")));
    await c.start();
    expect(view.problems[0].title).toBe("Settings were reset");
    expect(view.problems[0].detail).toContain("it is not valid JSON");
    expect(view.shown).toHaveLength(1);
    expect(c.settingsView().problem).toContain("it is not valid JSON");
  });

  it("reports fields left out of a settings file, naming them, and runs the hub on every other field the file holds", async () => {
    writeFileSync(join(dir, "settings.json"), JSON.stringify({ ...defaultSettings(), hub: { port: 7777, token: "k33p" }, notifications: "loud", legacyField: 1 }));
    const c = make(await SettingsStore.open(join(dir, "settings.json")));
    await c.start();
    expect(view.problems[0].title).toBe("Some settings were left out");
    expect(view.problems[0].detail).toContain("legacyField: is not a setting (left out)");
    expect(view.problems[0].detail).toContain("notifications: must be an object (its defaults are used)");
    expect(hubOptions[0]).toMatchObject({ port: 7777, token: "k33p" });
    expect(c.settingsView().problem).toBe(view.problems[0].detail);
  });

  it("applies saved thresholds at once, without a reconnect, recorded and pushed to the open dashboard; refuses bad settings with the reason", async () => {
    const record = join(dir, "rec.ndjson");
    const c = make(await storeWith(), { record });
    await c.start();
    const { io } = await import("socket.io-client");
    const ui = io(`${started[0].url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
    const pushed: AlertThresholds[] = [];
    ui.on("delta", (d: UiDelta) => void (d.thresholds !== undefined && pushed.push(d.thresholds)));
    await new Promise((resolve) => ui.once("snapshot", resolve));
    const next = { ...c.settingsView().settings, thresholds: { timeouts: { ratio: 0.2 } } };
    expect(await c.saveSettings(next)).toEqual({ ok: true, settings: next, reconnecting: false });
    const engine = started[0].engine as AlertEngine;
    expect(engine.thresholds.timeouts.ratio).toBe(0.2);
    await vi.waitFor(() => expect(pushed.at(-1)?.timeouts.ratio).toBe(0.2));
    ui.disconnect();
    const lines = readFileSync(record, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { k: string; p?: unknown });
    // The recording says what changed, as a dashboard's thresholds:set does: not every field.
    const changes = () => readFileSync(record, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { k: string; p?: unknown }).filter((l) => l.k === "thresholds").map((l) => l.p);
    expect(lines.filter((l) => l.k === "thresholds").map((l) => l.p)).toEqual([{ timeouts: { ratio: 0.2 } }]);
    // Removing the override returns the rule to its default.
    await c.saveSettings({ ...next, thresholds: {} });
    expect(engine.thresholds).toEqual(DEFAULT_THRESHOLDS);
    // Saving settings that change no threshold records nothing.
    await c.saveSettings({ ...next, thresholds: {}, runDemo: !next.runDemo });
    await started[0].close();
    expect(changes()).toEqual([{ timeouts: { ratio: 0.2 } }, { timeouts: { ratio: DEFAULT_THRESHOLDS.timeouts.ratio } }]);
    expect(await c.saveSettings({ ...next, hub: { port: -5, token: null } })).toEqual({ ok: false, error: "hub.port: must be in 1..65535" });
    expect(started).toHaveLength(1);
  });

  it("saves only the thresholds a user overrode: every other field, one a later version adds included, is the running version's default", async () => {
    // A file written before convoy.minHeldFraction and starvation.openingWaitMs existed names neither.
    const c = make(await storeWith((s) => (s.thresholds = { convoy: { windowMs: 9000 } })));
    await c.start();
    const engine = started[0].engine as AlertEngine;
    expect(engine.thresholds).toEqual(applyThresholds(DEFAULT_THRESHOLDS, { convoy: { windowMs: 9000 } }));
    expect(engine.thresholds.convoy.minHeldFraction).toBe(DEFAULT_THRESHOLDS.convoy.minHeldFraction);
    expect(engine.thresholds.starvation.openingWaitMs).toBe(DEFAULT_THRESHOLDS.starvation.openingWaitMs);
    // Another override saved: the file holds the two overrides, not the merged set.
    const next = { ...c.settingsView().settings, thresholds: { convoy: { windowMs: 9000 }, timeouts: { ratio: 0.2 } } };
    expect(await c.saveSettings(next)).toMatchObject({ ok: true });
    const onDisk = JSON.parse(readFileSync(join(dir, "settings.json"), "utf8")) as Settings;
    expect(onDisk.thresholds).toEqual({ convoy: { windowMs: 9000 }, timeouts: { ratio: 0.2 } });
    expect(engine.thresholds.timeouts.ratio).toBe(0.2);
  });

  it("saves to settings.json a threshold a dashboard's rules panel sets on the local hub (thresholds:set), and the next start runs the hub with it", async () => {
    const file = join(dir, "settings.json");
    const c = make(await storeWith((s) => (s.thresholds = { convoy: { windowMs: 9000 } })));
    await c.start();
    const { io } = await import("socket.io-client");
    const ui = io(`${started[0].url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
    await new Promise((resolve) => ui.once("snapshot", resolve));
    const onDisk = () => (JSON.parse(readFileSync(file, "utf8")) as Settings).thresholds;
    expect(await request<AckAnswer>(ui, "thresholds:set", { patch: { timeouts: { ratio: 0.3 } } })).toMatchObject({ ok: true });
    await vi.waitFor(() => expect(onDisk()).toEqual({ convoy: { windowMs: 9000 }, timeouts: { ratio: 0.3 } }));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Set back to its default, a field stops being an override; a refused value changes nothing.
    expect(await request<AckAnswer>(ui, "thresholds:set", { patch: { convoy: { windowMs: DEFAULT_THRESHOLDS.convoy.windowMs } } })).toMatchObject({ ok: true });
    expect((await request<AckAnswer>(ui, "thresholds:set", { patch: { timeouts: { ratio: 7 } } })).ok).toBe(false);
    await vi.waitFor(() => expect(onDisk()).toEqual({ timeouts: { ratio: 0.3 } }));
    expect(c.settingsView().settings.thresholds).toEqual({ timeouts: { ratio: 0.3 } });
    ui.disconnect();
    await c.shutdown();

    const again = make(await SettingsStore.open(file));
    await again.start();
    expect(hubOptions.at(-1)?.thresholds).toEqual({ timeouts: { ratio: 0.3 } });
    expect((started.at(-1)?.engine as AlertEngine).thresholds).toEqual(applyThresholds(DEFAULT_THRESHOLDS, { timeouts: { ratio: 0.3 } }));
  });

  it("a change from a local hub already replaced (the window moved to a remote hub) is not saved: that hub owns its thresholds", async () => {
    const file = join(dir, "settings.json");
    const c = make(await storeWith((s) => (s.remoteHubs = [{ id: "prod", name: "Prod", url: "http://127.0.0.1:1", token: null }])), {
      remoteReader: () => () => Promise.resolve([]),
    });
    await c.start();
    const local = started[0];
    expect(await c.saveSettings({ ...c.settingsView().settings, activeRemoteId: "prod" })).toMatchObject({ ok: true, reconnecting: true });
    await vi.waitFor(() => expect(c.connection().mode).toBe("remote"));
    // The closed hub's core still takes a direct call: its change must not reach the settings.
    local.setThresholds({ timeouts: { ratio: 0.4 } });
    await c.saveSettings({ ...c.settingsView().settings, runDemo: false });
    expect((JSON.parse(readFileSync(file, "utf8")) as Settings).thresholds).toEqual({});
  });

  it("restarts the hub after the reply when its port or token changes", async () => {
    const c = make(await storeWith());
    await c.start();
    const first = started[0];
    const r = await c.saveSettings({ ...c.settingsView().settings, hub: { port: 7999, token: "n3w" } });
    expect(r).toMatchObject({ ok: true, reconnecting: true });
    await vi.waitFor(() => expect(view.shown).toHaveLength(2));
    expect(hubOptions[1]).toMatchObject({ port: 7999, token: "n3w" });
    await expect(fetch(`${first.url}/healthz`)).rejects.toThrow();
    expect(c.connection().token).toBe("n3w");
  });

  it("regenerates the local hub's token: saved to the file, the hub restarted with it, the old token refused and the new one let in", async () => {
    const store = await storeWith((s) => (s.hub = { port: 7777, token: "old-t0ken" }));
    const c = make(store);
    await c.start();
    const r = await c.regenerateHubToken();
    expect(r).toMatchObject({ ok: true, reconnecting: true });
    const token = c.settingsView().settings.hub.token ?? "";
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(token).not.toBe("old-t0ken");
    expect((JSON.parse(readFileSync(join(dir, "settings.json"), "utf8")) as Settings).hub).toEqual({ port: 7777, token });
    await vi.waitFor(() => expect(view.shown).toHaveLength(2));
    const hub = started[1];
    // The window comes back on the settings view, where the new token is shown.
    expect(view.shown[1].url).toBe(`${hub.url}/#/settings`);
    expect(hubOptions[1]).toMatchObject({ port: 7777, token });
    expect(c.connection().token).toBe(token);
    expect((await fetch(`${hub.url}/api/state`, { headers: { Authorization: "Bearer old-t0ken" } })).status).toBe(401);
    expect((await fetch(`${hub.url}/api/state`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    // Each regeneration is a token of its own.
    expect(await c.regenerateHubToken()).toMatchObject({ ok: true });
    expect(c.settingsView().settings.hub.token).not.toBe(token);
  });

  it("refuses to regenerate a token the command line sets for this run, and changes nothing", async () => {
    const store = await storeWith((s) => (s.hub = { port: 7777, token: "t0k" }));
    const c = make(store, { localOverride: { token: "cli" } });
    await c.start();
    expect(await c.regenerateHubToken()).toEqual({ ok: false, error: expect.stringContaining("--token") });
    expect(c.settingsView().settings.hub.token).toBe("t0k");
    expect(hubOptions).toHaveLength(1);
    expect(c.connection().token).toBe("cli");
  });

  it("restarts the local hub with the alert destinations saved in settings, and it sends to them", async () => {
    const bodies: { events: { kind: string; alert: Alert }[] }[] = [];
    const { createServer: createHttpServer } = await import("node:http");
    const receiver = createHttpServer((req, res) => {
      let text = "";
      req.on("data", (d: Buffer) => (text += d.toString()));
      req.on("end", () => {
        bodies.push(JSON.parse(text) as (typeof bodies)[number]);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    try {
      const c = make(await storeWith());
      await c.start();
      expect(hubOptions[0].alertForwarding).toEqual({ alertmanager: [], webhooks: [] });
      const next = { ...c.settingsView().settings, alertForwarding: { alertmanager: [], webhooks: [hookUrl] } };
      expect(await c.saveSettings(next)).toMatchObject({ ok: true, reconnecting: true });
      await vi.waitFor(() => expect(started).toHaveLength(2));
      expect(hubOptions[1].alertForwarding).toEqual({ alertmanager: [], webhooks: [hookUrl] });
      // A leak reported by an agent over the hub's own socket, as any agent's would be.
      const socket = await agent(started[1] as Hub, "agent-fwd", [makeInfo("db", { leakThresholdMs: 10_000 })], { service: "checkout" });
      try {
        const ack = await request<AckAnswer>(socket, "events", { items: [{ t: Date.now(), id: "db", type: "leak_suspected", holderId: "h1", heldMs: 12_000 }] });
        expect(ack.ok).toBe(true);
        await vi.waitFor(() => expect(bodies.flatMap((b) => b.events).some((e) => e.kind === "raised" && e.alert.rule === "leak")).toBe(true), { timeout: 5000 });
      } finally {
        socket.disconnect();
      }
      const bad = await c.saveSettings({ ...next, alertForwarding: { alertmanager: ["ftp://am"], webhooks: [] } });
      expect(bad).toEqual({ ok: false, error: "alertForwarding.alertmanager[0]: must be an http:// or https:// URL" });
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });

  it("runs the local hub on the command line's port and token over the settings', and keeps them when settings change", async () => {
    const store = await storeWith((s) => (s.hub = { port: 7777, token: "t0k" }));
    const c = make(store, { localOverride: { port: 7431, token: "cli" } });
    await c.start();
    expect(hubOptions[0]).toMatchObject({ port: 7431, token: "cli" });
    expect(c.connection().token).toBe("cli");
    // The settings' own port and token are left as they were, and changing them does not move this run's hub.
    expect(c.settingsView().settings.hub).toEqual({ port: 7777, token: "t0k" });
    const r = await c.saveSettings({ ...c.settingsView().settings, hub: { port: 7999, token: "n3w" } });
    expect(r).toMatchObject({ ok: true, reconnecting: false });
    expect(hubOptions).toHaveLength(1);
    expect(c.connection().token).toBe("cli");
  });

  it("closes the hub on shutdown and refuses saves after it", async () => {
    const c = make(await storeWith());
    await c.start();
    const hub = started[0];
    expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);
    await c.shutdown();
    await expect(fetch(`${hub.url}/healthz`)).rejects.toThrow();
    expect(c.localHub).toBeNull();
    expect(await c.saveSettings(c.settingsView().settings)).toEqual({ ok: false, error: "the app is quitting" });
    await c.shutdown(); // idempotent
  });
});

describe("ShellController with a remote hub", () => {
  const remote = { id: "prod", name: "Production", url: "https://hub.example.com", token: "r3mote" };

  it("shows the remote dashboard untrusted for settings, reads its alerts, and starts no local hub", async () => {
    let alerts: Alert[] = [];
    const reader = vi.fn((_origin: string, _token: string | null) => () => Promise.resolve(alerts));
    const c = make(
      await storeWith((s) => {
        s.remoteHubs = [remote];
        s.activeRemoteId = "prod";
      }),
      { remoteReader: reader },
    );
    await c.start();
    expect(started).toEqual([]);
    expect(reader).toHaveBeenCalledWith("https://hub.example.com", "r3mote");
    expect(view.shown).toEqual([{ url: "https://hub.example.com/", trusted: { origin: "https://hub.example.com", local: false } }]);
    expect(c.connection()).toEqual({ mode: "remote", name: "Production", url: "https://hub.example.com", token: "r3mote" });
    await vi.waitFor(() => expect(view.trays.length).toBeGreaterThan(0));
    alerts = [makeAlert()];
    await vi.waitFor(() => expect(view.notes).toHaveLength(1));
    expect(view.trays.at(-1)).toMatchObject({ tooltip: "Semscope — Production: 1 active alert (1 critical)" });
    // Settings… does not reach a remote page.
    c.onMenuAction({ type: "show-settings" });
    expect(view.settingsShown).toBe(0);
  });

  it("shows the hub as unreachable in the tray while it cannot be read", async () => {
    const c = make(
      await storeWith((s) => {
        s.remoteHubs = [remote];
        s.activeRemoteId = "prod";
      }),
      { remoteReader: () => () => Promise.reject(new Error("ECONNREFUSED")) },
    );
    await c.start();
    await vi.waitFor(() => expect(view.trays.at(-1)).toMatchObject({ level: "offline", tooltip: "Semscope — Production unreachable" }));
  });

  it("switches between the local hub and a remote one from the Hub menu", async () => {
    const c = make(await storeWith((s) => (s.remoteHubs = [remote])), { remoteReader: () => () => Promise.resolve([]) });
    await c.start();
    const local = started[0];
    c.onMenuAction({ type: "switch-hub", remoteId: "prod" });
    await vi.waitFor(() => expect(view.shown).toHaveLength(2));
    expect(view.shown[1].trusted).toEqual({ origin: "https://hub.example.com", local: false });
    await expect(fetch(`${local.url}/healthz`)).rejects.toThrow();
    c.onMenuAction({ type: "switch-hub", remoteId: null });
    await vi.waitFor(() => expect(view.shown).toHaveLength(3));
    expect(view.shown[2].trusted.local).toBe(true);
    expect(started).toHaveLength(2);
  });
});

describe("ShellController menu actions", () => {
  it("shows the window, the settings view (local only) and quits", async () => {
    const c = make(await storeWith());
    await c.start();
    c.onMenuAction({ type: "show-window" });
    c.onMenuAction({ type: "show-settings" });
    c.onMenuAction({ type: "quit" });
    expect(view.focused).toBe(2);
    expect(view.settingsShown).toBe(1);
    expect(view.quits).toBe(1);
  });
});
