// The desktop app's IPC, declared once: channel names (`entity:verb`) and payload types that the
// preload, main and the renderer all import. Types only say what an honest caller sends: main
// validates every argument (main/app/ipc-contract.ts) and checks who sent it.
import type { ThresholdsPatch } from "../alerts/index.js";
import type { AlertRule, Severity } from "../protocol/types.js";

/** A hub the app may open instead of its own. */
export interface RemoteHub {
  /** Stable id, [a-z0-9-], used by `activeRemoteId` and the Hub menu. */
  id: string;
  /** What the menu and the tray call it. */
  name: string;
  /** Origin of the hub, e.g. `https://hub.example.com:7420`; plain http only for loopback hosts. */
  url: string;
  /** Bearer token the hub expects, or null when it needs none. */
  token: string | null;
}

export interface NotificationPrefs {
  /** Native notifications at all. */
  enabled: boolean;
  /** Notify alerts of this severity and above ("critical" = critical only). */
  minSeverity: Severity;
  /** Rules never notified, whatever their severity. */
  mutedRules: AlertRule[];
  /** Notifications without sound. */
  silent: boolean;
}

/** Everything the app persists, in `<userData>/settings.json`. */
export interface Settings {
  /** Bumped when a field changes meaning; a file with another version is reported and replaced. */
  version: 1;
  /** The in-process hub (always bound to 127.0.0.1). */
  hub: {
    port: number;
    /** Token agents and dashboards must present, or null for none (loopback only). */
    token: string | null;
  };
  remoteHubs: RemoteHub[];
  /** The remote hub the window opens instead of the local one; null = the local hub. */
  activeRemoteId: string | null;
  /** Alert thresholds changed from the protocol's defaults (applied at start and on save). */
  thresholds: ThresholdsPatch;
  notifications: NotificationPrefs;
  /**
   * "Run the demo service": the built-in demo services stream to the local hub while it runs
   * (not to a remote hub). On for a first launch, so a new user sees every rule at work.
   */
  runDemo: boolean;
  /**
   * The local hub records by default into a rolling set of compact files in the user data folder
   * (`recordings/`), the oldest deleted first once they hold more than capBytes.
   */
  recording: RecordingPrefs;
  /** Where the local hub sends every alert change besides the window (docs/integrations.md). */
  alertForwarding: AlertForwardingPrefs;
}

export interface AlertForwardingPrefs {
  /** Alertmanager base URLs (http(s)://host:9093). */
  alertmanager: string[];
  /** Webhook URLs. */
  webhooks: string[];
}

export interface RecordingPrefs {
  enabled: boolean;
  /** At least 16 MiB. */
  capBytes: number;
}

/** `settings:get`: the settings in force, and what went wrong loading them, if anything. */
export interface SettingsView {
  settings: Settings;
  /** Why the file on disk was replaced by defaults at start (null when it loaded cleanly). */
  problem: string | null;
  /** Where they are kept. */
  file: string;
}

/** `settings:save`: refused settings come back as a message, not a rejected promise. */
export type SaveSettingsResult =
  | { ok: true; settings: Settings; /** The hub connection changes: the window reloads shortly. */ reconnecting: boolean }
  | { ok: false; error: string };

/** `connection:get`: where the dashboard's socket.io `/ui` connection goes, and with what token. */
export interface HubConnection {
  mode: "local" | "remote";
  /** "Local hub" or the remote hub's name. */
  name: string;
  /** Origin of the hub (the page's own origin). */
  url: string;
  token: string | null;
}

/** `semaphore:focus` (main → renderer): a notification was clicked; show this semaphore. */
export interface FocusSemaphore {
  /** `<service>/<instance>/<id>` (semaphoreKey), or the fleet key for fleet alerts. */
  key: string;
  alertId: string;
}

/** `settings:show` (main → renderer): the menu asked for the settings view. */
export type ShowSettings = Record<string, never>;

/** Renderer → main requests (ipcRenderer.invoke / ipcMain.handle). */
export interface IpcInvokeMap {
  "settings:get": { args: []; result: SettingsView };
  "settings:save": { args: [settings: Settings]; result: SaveSettingsResult };
  "connection:get": { args: []; result: HubConnection };
  /** A new local hub token, saved; the hub restarts with it and the window reloads (reconnecting). */
  "token:regenerate": { args: []; result: SaveSettingsResult };
}

/** Main → renderer events (webContents.send / ipcRenderer.on). */
export interface IpcEventMap {
  "semaphore:focus": FocusSemaphore;
  "settings:show": ShowSettings;
}

export type InvokeChannel = keyof IpcInvokeMap;
export type EventChannel = keyof IpcEventMap;

export const INVOKE_CHANNELS = ["settings:get", "settings:save", "connection:get", "token:regenerate"] as const satisfies readonly InvokeChannel[];
export const EVENT_CHANNELS = ["semaphore:focus", "settings:show"] as const satisfies readonly EventChannel[];
// Compile-time checks that each list names every channel of its map.
const _allInvokeListed: [Exclude<InvokeChannel, (typeof INVOKE_CHANNELS)[number]>] extends [never] ? true : false = true;
const _allEventsListed: [Exclude<EventChannel, (typeof EVENT_CHANNELS)[number]>] extends [never] ? true : false = true;
void _allInvokeListed;
void _allEventsListed;

/** The name the preload exposes the bridge under: `window.semscope`. */
export const BRIDGE_KEY = "semscope";

/** What `window.semscope` offers the dashboard (absent in web mode: check before use). */
export interface SemscopeBridge {
  readonly bridgeVersion: 1;
  getSettings(): Promise<SettingsView>;
  saveSettings(settings: Settings): Promise<SaveSettingsResult>;
  getConnection(): Promise<HubConnection>;
  /** Absent from a preload older than it: check before use. */
  regenerateHubToken?(): Promise<SaveSettingsResult>;
  /** Returns a function that removes the listener. */
  onFocusSemaphore(listener: (focus: FocusSemaphore) => void): () => void;
  onShowSettings(listener: () => void): () => void;
}
