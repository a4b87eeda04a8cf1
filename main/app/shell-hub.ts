// What the shell needs of a hub, and which hub the window shows. The in-process hub
// (main/hub/, createHub) satisfies ShellHub; main/electron/main.ts passes it in as StartHub.
import type { ThresholdsPatch } from "../../shared/alerts/index.js";
import type { HubConnection, Settings } from "../../shared/ipc/ipc-contract.js";
import type { Alert } from "../../shared/protocol/types.js";

export interface ShellHub {
  /** e.g. `http://127.0.0.1:7420` (no trailing slash needed). */
  readonly url: string;
  readonly port: number;
  readonly engine: {
    activeAlerts(): Alert[];
  };
  /** Recorded and pushed to every dashboard (createHub's hub.setThresholds); throws for a bad patch. */
  setThresholds(patch: ThresholdsPatch): unknown;
  /** Stops listening and flushes the recording. */
  close(): Promise<void>;
}

export interface LocalHubOptions {
  port: number;
  host: string;
  token?: string;
  record?: string;
  staticDir?: string;
  thresholds?: ThresholdsPatch;
  /** Where every alert change is sent besides the window (createHub's alertForwarding). */
  alertForwarding?: { alertmanager?: readonly string[]; webhooks?: readonly string[] };
  /** Each threshold change the hub accepts, from any dashboard (createHub's onThresholdsChanged). */
  onThresholdsChanged?: (patch: ThresholdsPatch) => void;
}

export type StartHub = (opts: LocalHubOptions) => Promise<ShellHub>;

/** The in-process hub listens on loopback only: the desktop app is not a server for others. */
export const LOCAL_HUB_HOST = "127.0.0.1";
export const LOCAL_HUB_NAME = "Local hub";

export type HubTarget =
  | { kind: "local"; port: number; token: string | null }
  | { kind: "remote"; id: string; name: string; origin: string; token: string | null };

/** What the command line sets for this run's local hub, over the settings (`npm start --port/--token`). */
export interface LocalOverride {
  readonly port?: number;
  readonly token?: string;
}

export function hubTarget(settings: Settings, local: LocalOverride = {}): HubTarget {
  if (settings.activeRemoteId !== null) {
    const remote = settings.remoteHubs.find((h) => h.id === settings.activeRemoteId);
    // The schema guarantees the id exists; fall back to local rather than trust that blindly.
    if (remote !== undefined) return { kind: "remote", id: remote.id, name: remote.name, origin: new URL(remote.url).origin, token: remote.token };
  }
  return { kind: "local", port: local.port ?? settings.hub.port, token: local.token ?? settings.hub.token };
}

export function sameTarget(a: HubTarget, b: HubTarget): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function connectionFor(target: HubTarget, localOrigin: string | null): HubConnection {
  if (target.kind === "remote") return { mode: "remote", name: target.name, url: target.origin, token: target.token };
  return { mode: "local", name: LOCAL_HUB_NAME, url: localOrigin ?? `http://${LOCAL_HUB_HOST}:${target.port}`, token: target.token };
}
