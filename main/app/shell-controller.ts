// The desktop shell's behaviour, without Electron: which hub the window shows, the in-process
// hub's life, alerts turned into notifications and a tray count, menu actions, settings saved
// and applied, and the shutdown a clean quit waits for. main/electron/ supplies a ShellView
// (the window, tray, menu and notifications) and a StartHub, and forwards events here.
import { applyThresholds, DEFAULT_THRESHOLDS, type AlertThresholds, type ThresholdsPatch } from "../../shared/alerts/index.js";
import type { FocusSemaphore, HubConnection, SaveSettingsResult, Settings, SettingsView } from "../../shared/ipc/ipc-contract.js";
import type { Alert } from "../../shared/protocol/types.js";
import { newHubToken, type SettingsStore } from "../settings/settings-store.js";
import { overridesAfter, sameOverrides } from "../settings/threshold-overrides.js";
import { AlertNotifier, notificationText, summaryText, type NotificationText } from "./alert-notifier.js";
import type { DemoService } from "./demo-service.js";
import { AlertPoller, LOCAL_POLL_MS, localAlertReader, REMOTE_POLL_MS, remoteAlertReader, type AlertReader, type AlertUpdate } from "./alert-source.js";
import { applicationMenu, trayMenu, type MenuAction, type MenuItemData } from "./menu-template.js";
import type { TrustedOrigin } from "./navigation-policy.js";
import { originOf } from "./origin.js";
import { connectionFor, hubTarget, LOCAL_HUB_HOST, LOCAL_HUB_NAME, sameTarget, type HubTarget, type LocalOverride, type ShellHub, type StartHub } from "./shell-hub.js";
import { trayState, type TrayState } from "./tray-state.js";

/** What the shell does to the screen; implemented over Electron in main/electron/. */
export interface ShellView {
  /** Point the window at `url`; from now on only `trusted` is trusted (navigation, IPC, CSP). */
  show(url: string, trusted: TrustedOrigin): Promise<void>;
  focusWindow(): void;
  sendFocusSemaphore(focus: FocusSemaphore): void;
  sendShowSettings(): void;
  setApplicationMenu(menu: MenuItemData[]): void;
  setTray(state: TrayState, menu: MenuItemData[]): void;
  notify(text: NotificationText, opts: { silent: boolean; onClick: () => void }): void;
  /** A problem the user must hear of (non-blocking). */
  reportProblem(title: string, detail: string): void;
  quit(): void;
}

export interface ShellControllerOptions {
  store: SettingsStore;
  startHub: StartHub;
  view: ShellView;
  platform: string;
  isPackaged: boolean;
  /** The built dashboard the local hub serves. */
  staticDir?: string;
  /** NDJSON recording for the local hub (`--record <file>`). */
  record?: string;
  /** The local hub's port and token from the command line, over the settings' (launch.ts). */
  localOverride?: LocalOverride;
  /** The built-in demo, run against the local hub while settings.runDemo is on; absent: none bundled. */
  demo?: DemoService;
  remoteReader?: (origin: string, token: string | null) => AlertReader;
  localPollMs?: number;
  remotePollMs?: number;
  log?: (line: string) => void;
}

export class ShellController {
  private hub: ShellHub | null = null;
  private target: HubTarget;
  private trusted: TrustedOrigin | null = null;
  private poller: AlertPoller | null = null;
  private readonly notifier = new AlertNotifier();
  private lastTray = "";
  private chain: Promise<unknown> = Promise.resolve();
  private shutDown = false;
  /** Where the next page opens on the hub ("" = the overview); the settings view after a new token. */
  private reopenAt = "";
  /** Counts local hubs started: a late change from a hub already replaced is not saved. */
  private hubGeneration = 0;
  private readonly log: (line: string) => void;

  constructor(private readonly opts: ShellControllerOptions) {
    this.target = hubTarget(opts.store.current, opts.localOverride);
    this.log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /** The origin IPC, navigation and CSP trust right now (null before the first page). */
  get trustedOrigin(): TrustedOrigin | null {
    return this.trusted;
  }

  get localHub(): ShellHub | null {
    return this.hub;
  }

  /** Reports a settings file that was replaced, or fields of it left out, then opens the hub the settings name. */
  start(): Promise<boolean> {
    const problem = this.opts.store.problem;
    if (problem !== null) {
      this.log(`semscope: ${problem}`);
      this.opts.view.reportProblem(this.opts.store.reset ? "Settings were reset" : "Some settings were left out", problem);
    }
    return this.serial(() => this.connect());
  }

  settingsView(): SettingsView {
    return { settings: this.opts.store.current, problem: this.opts.store.problem, file: this.opts.store.file };
  }

  connection(): HubConnection {
    return connectionFor(this.target, this.hub === null ? null : originOf(this.hub.url));
  }

  /** Validates and persists; applies thresholds and notification choices at once, a new hub shortly after. */
  async saveSettings(candidate: unknown): Promise<SaveSettingsResult> {
    if (this.shutDown) return { ok: false, error: "the app is quitting" };
    const before = this.opts.store.current;
    const saved = await this.opts.store.save(candidate);
    if (!saved.ok) return { ok: false, error: saved.error };
    const next = saved.settings;
    // New alert destinations take a new local hub, as a new port does.
    const forwardingChanged = this.target.kind === "local" && JSON.stringify(before.alertForwarding) !== JSON.stringify(next.alertForwarding);
    const reconnecting = !sameTarget(hubTarget(next, this.opts.localOverride), this.target) || forwardingChanged;
    if (!reconnecting && this.hub !== null) this.applyThresholds(before, next);
    // A reconnect starts or stops it with the new hub.
    if (!reconnecting && before.runDemo !== next.runDemo) void this.serial(() => this.syncDemo());
    this.refreshMenu();
    // After the reply: the reconnect reloads the very page that asked.
    if (reconnecting) setImmediate(() => void this.serial(() => this.connect()));
    return { ok: true, settings: next, reconnecting };
  }

  /**
   * A new token for the local hub, saved like any setting: the hub restarts with it after the reply
   * and the window reloads. Agents and other dashboards holding the old one are refused from then on.
   */
  async regenerateHubToken(): Promise<SaveSettingsResult> {
    // This run's hub would keep the command line's token: a new one in settings would change nothing the user sees.
    if (this.opts.localOverride?.token !== undefined) {
      return { ok: false, error: "this run's local hub token was given on the command line (--token): change it there" };
    }
    const current = this.opts.store.current;
    const r = await this.saveSettings({ ...current, hub: { ...current.hub, token: newHubToken() } });
    // The reconnect runs after this reply; the window comes back on the settings view that shows the new token.
    if (r.ok && r.reconnecting) this.reopenAt = "#/settings";
    return r;
  }

  onMenuAction(action: MenuAction): void {
    switch (action.type) {
      case "show-window":
        this.opts.view.focusWindow();
        return;
      case "show-settings":
        this.opts.view.focusWindow();
        if (this.trusted?.local === true) this.opts.view.sendShowSettings();
        return;
      case "switch-hub": {
        const current = this.opts.store.current;
        if (current.activeRemoteId === action.remoteId) return;
        void this.saveSettings({ ...current, activeRemoteId: action.remoteId }).then((r) => {
          if (!r.ok) this.opts.view.reportProblem("Could not switch hubs", r.error);
        });
        return;
      }
      case "toggle-demo": {
        const current = this.opts.store.current;
        void this.saveSettings({ ...current, runDemo: !current.runDemo }).then((r) => {
          if (!r.ok) this.opts.view.reportProblem("Could not change the demo setting", r.error);
        });
        return;
      }
      case "quit":
        this.opts.view.quit();
        return;
    }
  }

  /** Stops polling and closes the local hub (flushing its recording). Idempotent. */
  shutdown(): Promise<void> {
    this.shutDown = true;
    return this.serial(async () => {
      this.stopPolling();
      // Both at once: the quit waits a few seconds at most, and the recording matters more.
      const demoStopped = this.opts.demo?.stop();
      await this.closeHub();
      await demoStopped;
    });
  }

  // ---- internals ----

  /** Connects and shutdowns run one at a time, in order. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async connect(): Promise<boolean> {
    if (this.shutDown) return false;
    const settings = this.opts.store.current;
    this.target = hubTarget(settings, this.opts.localOverride);
    this.stopPolling();
    this.trusted = null;
    this.notifier.reset();
    this.lastTray = "";
    let origin: string;
    let reader: AlertReader;
    // Its services would only retry against a hub that is going away.
    await this.opts.demo?.stop();
    if (this.target.kind === "local") {
      // A hub from earlier settings (another port or token) makes way for the new one.
      await this.closeHub();
      const hub = await this.startLocalHub(settings, this.target);
      if (hub === null) return false;
      this.hub = hub;
      origin = originOf(hub.url) ?? `http://${LOCAL_HUB_HOST}:${hub.port}`;
      reader = localAlertReader(hub.engine);
    } else {
      await this.closeHub();
      origin = this.target.origin;
      reader = (this.opts.remoteReader ?? remoteAlertReader)(origin, this.target.token);
    }
    this.trusted = { origin, local: this.target.kind === "local" };
    this.refreshMenu();
    const interval = this.target.kind === "local" ? (this.opts.localPollMs ?? LOCAL_POLL_MS) : (this.opts.remotePollMs ?? REMOTE_POLL_MS);
    this.poller = new AlertPoller(reader, interval, (u) => this.onAlerts(u), this.log);
    this.poller.start();
    await this.syncDemo();
    const at = this.reopenAt;
    this.reopenAt = "";
    try {
      await this.opts.view.show(`${origin}/${at}`, this.trusted);
    } catch (err) {
      this.opts.view.reportProblem(`Could not open ${connectionFor(this.target, origin).name}`, errMessage(err));
    }
    return true;
  }

  /** The configured port; when it is taken, any free one (reported), so the app still opens. */
  private async startLocalHub(settings: Settings, target: Extract<HubTarget, { kind: "local" }>): Promise<ShellHub | null> {
    const generation = ++this.hubGeneration;
    const base = {
      host: LOCAL_HUB_HOST,
      ...(target.token !== null ? { token: target.token } : {}),
      ...(this.opts.record !== undefined ? { record: this.opts.record } : {}),
      ...(this.opts.staticDir !== undefined ? { staticDir: this.opts.staticDir } : {}),
      thresholds: settings.thresholds,
      alertForwarding: settings.alertForwarding,
      onThresholdsChanged: (patch: ThresholdsPatch) => this.persistThresholds(generation, patch),
    };
    try {
      return await this.opts.startHub({ ...base, port: target.port });
    } catch (first) {
      try {
        const hub = await this.opts.startHub({ ...base, port: 0 });
        this.opts.view.reportProblem(
          `Port ${target.port} is not available`,
          `The local hub could not listen on ${LOCAL_HUB_HOST}:${target.port} (${errMessage(first)}); it runs on port ${hub.port} for now, ` +
            `so agents configured for ${target.port} will not reach it. Another Semscope hub may be running there: add it as a remote hub, or pick another port in Settings.`,
        );
        return hub;
      } catch (second) {
        this.opts.view.reportProblem("The local hub could not start", `${errMessage(first)}; on a free port: ${errMessage(second)}`);
        return null;
      }
    }
  }

  /** The demo runs exactly while the local hub is up and settings.runDemo is on. */
  private async syncDemo(): Promise<void> {
    const demo = this.opts.demo;
    if (demo === undefined) return;
    const hub = this.hub;
    if (this.shutDown || hub === null || this.target.kind !== "local" || !this.opts.store.current.runDemo) {
      await demo.stop();
      return;
    }
    await demo.start(originOf(hub.url) ?? hub.url, this.target.token);
  }

  /** Sends the hub (and its recording) the fields this save changed; a field dropped from the overrides goes back to its default. */
  private applyThresholds(before: Settings, next: Settings): void {
    if (this.hub === null) return;
    try {
      const patch = changedThresholds(applyThresholds(DEFAULT_THRESHOLDS, before.thresholds), applyThresholds(DEFAULT_THRESHOLDS, next.thresholds));
      if (Object.keys(patch).length > 0) this.hub.setThresholds(patch);
    } catch (err) {
      this.opts.view.reportProblem("Thresholds not applied", errMessage(err));
    }
  }

  /**
   * A threshold change the local hub accepted (a dashboard's rules panel, or a settings save) goes
   * into settings.json as overrides, so the next start applies it; a change that leaves the
   * overrides as they are (a save's own) writes nothing. A remote hub keeps its own thresholds.
   */
  private persistThresholds(generation: number, patch: ThresholdsPatch): void {
    if (generation !== this.hubGeneration || this.target.kind !== "local") return;
    const failed = (why: string) => {
      this.log(`semscope: the thresholds changed on the local hub could not be saved: ${why}`);
      this.opts.view.reportProblem("Thresholds not saved", `The change applies to the running hub, but ${this.opts.store.file} could not keep it (${why}): it will be lost at the next start.`);
    };
    this.opts.store
      .update((s) => {
        const next = overridesAfter(s.thresholds, patch);
        return sameOverrides(next, s.thresholds) ? null : { ...s, thresholds: next };
      })
      .then(
        (r) => r !== null && !r.ok && failed(r.error),
        (err: unknown) => failed(errMessage(err)),
      );
  }

  private onAlerts(update: AlertUpdate): void {
    const name = this.target.kind === "local" ? LOCAL_HUB_NAME : this.target.name;
    const alerts = update.ok ? update.alerts : null;
    const state = trayState({ alerts, hubName: name });
    const key = JSON.stringify(state);
    if (key !== this.lastTray) {
      this.lastTray = key;
      this.opts.view.setTray(state, trayMenu(state.summary, this.opts.store.current.activeRemoteId));
    }
    if (alerts !== null) this.notifyNew(alerts);
  }

  private notifyNew(alerts: readonly Alert[]): void {
    const prefs = this.opts.store.current.notifications;
    const plan = this.notifier.update(alerts, prefs);
    for (const alert of plan.notify) {
      this.opts.view.notify(notificationText(alert, this.opts.platform), {
        silent: prefs.silent,
        onClick: () => {
          this.opts.view.focusWindow();
          this.opts.view.sendFocusSemaphore({ key: alert.key, alertId: alert.id });
        },
      });
    }
    if (plan.more > 0) this.opts.view.notify(summaryText(plan.more), { silent: prefs.silent, onClick: () => this.opts.view.focusWindow() });
  }

  private refreshMenu(): void {
    const s = this.opts.store.current;
    this.opts.view.setApplicationMenu(
      applicationMenu({
        platform: this.opts.platform,
        isPackaged: this.opts.isPackaged,
        remoteHubs: s.remoteHubs,
        activeRemoteId: s.activeRemoteId,
        localPort: this.hub?.port ?? s.hub.port,
        ...(this.opts.demo !== undefined ? { demo: { on: s.runDemo, enabled: s.activeRemoteId === null } } : {}),
      }),
    );
  }

  private stopPolling(): void {
    this.poller?.stop();
    this.poller = null;
  }

  private async closeHub(): Promise<void> {
    const hub = this.hub;
    if (hub === null) return;
    this.hub = null;
    try {
      await hub.close();
    } catch (err) {
      this.log(`semscope: closing the local hub failed: ${errMessage(err)}`);
    }
  }
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The fields of `next` that differ from `before`, as a patch (empty when none do). */
function changedThresholds(before: AlertThresholds, next: AlertThresholds): ThresholdsPatch {
  const patch: Record<string, Record<string, number>> = {};
  for (const [group, fields] of Object.entries(next) as [string, Record<string, number>][]) {
    const was = (before as unknown as Record<string, Record<string, number>>)[group];
    for (const [field, value] of Object.entries(fields)) {
      if (was[field] !== value) (patch[group] ??= {})[field] = value;
    }
  }
  return patch as ThresholdsPatch;
}
