// Everything the hub told this dashboard, outside React: the snapshot, then each delta applied
// in place. Components subscribe per channel (useSyncExternalStore) and read what they need, so
// a sample delta does not re-render the alerts list and an alert does not re-sort 500 rows.
// Charts do not go through React at all: they listen per semaphore (onSemaphore) and draw in
// the next animation frame.
import { fleetKey } from "../../../shared/alerts/fleet.js";
import type { AlertThresholds } from "../../../shared/alerts/index.js";
import type { Alert, AgentState, HubAdmission } from "../../../shared/protocol/types.js";
import { applyPatch } from "../../../shared/ui-protocol/semaphore-patch.js";
import type { UiDelta, UiFleetEntry, UiSemaphore, UiSnapshot } from "../../../shared/ui-protocol/types.js";
import { compareAlerts } from "../logic/alert-target.js";
import { toItem, type SemaphoreItem } from "../logic/overview-item.js";
import { SparkRing } from "./sparkline-ring.js";

/**
 * "semaphores": any semaphore changed (every delta with samples). "structure": the set of
 * semaphores or any one's status changed: what decides the overview's rows and their order
 * when the sort is by status or name, so a list of 500 re-sorts only when something happened.
 */
export type Channel = "semaphores" | "structure" | "alerts" | "fleet" | "agents" | "connection";

export type ConnectionPhase = "connecting" | "live" | "reconnecting" | "unauthorized" | "refused";

export interface ConnectionState {
  phase: ConnectionPhase;
  /** Hub origin the dashboard talks to. */
  url: string;
  /** The last error, for the banner. */
  error: string | null;
  /** Reconnect attempts since the last successful connect. */
  attempts: number;
  /** Whether a token was presented (so an "unauthorized" can say "wrong" rather than "missing"). */
  hasToken: boolean;
}

const SPARK_POINTS = 60;

const byKey = (a: UiFleetEntry, b: UiFleetEntry): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export class DashboardStore {
  private readonly sems = new Map<string, UiSemaphore>();
  private readonly items = new Map<string, SemaphoreItem>();
  readonly agents = new Map<string, AgentState>();
  private readonly alertMap = new Map<string, Alert>();
  private readonly fleetMap = new Map<string, UiFleetEntry>();
  /** Sorted by key, as the hub sends it; a new array whenever an entry changes. */
  fleet: UiFleetEntry[] = [];
  thresholds: AlertThresholds | null = null;
  /** `agentToken`: the hub has an agent token, so this page's token is not the one for services. */
  hub: { version: string; startedAt: number; agentToken: boolean } | null = null;
  rejected = 0;
  /** The hub's caps and what it refused (hub.admission), when it has them. */
  admission: HubAdmission | undefined;
  /** Hub clock minus this browser's, from the last snapshot or delta. */
  clockOffset = 0;
  /** Hub time of the last snapshot or delta: what "data as of" means while disconnected. */
  lastUpdate = 0;
  hasSnapshot = false;
  lastSeq = 0;
  connection: ConnectionState = { phase: "connecting", url: "", error: null, attempts: 0, hasToken: false };
  readonly sparks = new Map<string, SparkRing>();

  private readonly versions: Record<Channel, number> = { semaphores: 0, structure: 0, alerts: 0, fleet: 0, agents: 0, connection: 0 };
  private readonly listeners: Record<Channel, Set<() => void>> = {
    semaphores: new Set(),
    structure: new Set(),
    alerts: new Set(),
    fleet: new Set(),
    agents: new Set(),
    connection: new Set(),
  };
  private readonly perKey = new Map<string, Set<(s: UiSemaphore) => void>>();
  private itemCache: { version: number; list: SemaphoreItem[] } | null = null;
  private alertCache: { version: number; list: Alert[] } | null = null;

  // ---- subscriptions ----

  subscribe(channel: Channel, fn: () => void): () => void {
    this.listeners[channel].add(fn);
    return () => this.listeners[channel].delete(fn);
  }

  version(channel: Channel): number {
    return this.versions[channel];
  }

  /** Every change to one semaphore (sample, status), called synchronously as deltas apply. */
  onSemaphore(key: string, fn: (s: UiSemaphore) => void): () => void {
    let set = this.perKey.get(key);
    if (set === undefined) this.perKey.set(key, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.perKey.delete(key);
    };
  }

  private bump(changed: Iterable<Channel>): void {
    const list = [...new Set(changed)];
    for (const c of list) this.versions[c]++;
    for (const c of list) for (const fn of [...this.listeners[c]]) fn();
  }

  // ---- reads ----

  semaphore(key: string): UiSemaphore | undefined {
    return this.sems.get(key);
  }

  item(key: string): SemaphoreItem | undefined {
    return this.items.get(key);
  }

  get semaphoreCount(): number {
    return this.sems.size;
  }

  /** Every semaphore as an overview item; the same array until a semaphore or agent changes. */
  itemList(): SemaphoreItem[] {
    const v = this.versions.semaphores;
    if (this.itemCache?.version !== v) this.itemCache = { version: v, list: [...this.items.values()] };
    return this.itemCache.list;
  }

  /** Alerts known (active and retained resolved), newest raisedAt first. */
  alertList(): Alert[] {
    const v = this.versions.alerts;
    if (this.alertCache?.version !== v) this.alertCache = { version: v, list: [...this.alertMap.values()].sort(compareAlerts) };
    return this.alertCache.list;
  }

  alert(id: string): Alert | undefined {
    return this.alertMap.get(id);
  }

  fleetEntry(service: string, name: string): UiFleetEntry | undefined {
    return this.fleetMap.get(fleetKey(service, name));
  }

  /** The hub's clock now (epoch ms). */
  now(): number {
    return Date.now() + this.clockOffset;
  }

  agentConnected(agentId: string): boolean {
    return this.agents.get(agentId)?.connected ?? false;
  }

  // ---- writes ----

  setConnection(patch: Partial<ConnectionState>): void {
    this.connection = { ...this.connection, ...patch };
    this.bump(["connection"]);
  }

  applySnapshot(snap: UiSnapshot): void {
    this.clockOffset = snap.serverTime - Date.now();
    this.lastUpdate = snap.serverTime;
    this.lastSeq = snap.deltaSeq;
    this.hub = { version: snap.state.hub.version, startedAt: snap.state.hub.startedAt, agentToken: snap.state.hub.agentToken === true };
    this.rejected = snap.state.hub.rejected;
    this.admission = snap.state.hub.admission;
    this.agents.clear();
    for (const a of snap.state.agents) this.agents.set(a.agentId, a);
    this.sems.clear();
    this.items.clear();
    const liveKeys = new Set<string>();
    for (const s of snap.state.semaphores) {
      this.sems.set(s.key, s);
      this.items.set(s.key, toItem(s, this.agentConnected(s.agentId)));
      liveKeys.add(s.key);
      let ring = this.sparks.get(s.key);
      if (ring === undefined) this.sparks.set(s.key, (ring = new SparkRing(SPARK_POINTS)));
      ring.reset(snap.sparklines[s.key]);
      if (s.t !== null) ring.push(s.t, s.inUse, s.waiters);
    }
    for (const k of [...this.sparks.keys()]) if (!liveKeys.has(k)) this.sparks.delete(k);
    this.alertMap.clear();
    for (const a of snap.alertLog) this.alertMap.set(a.id, a);
    // state.alerts holds the active ones; alertLog should too, but trust whichever is newer.
    for (const a of snap.state.alerts) if (!this.alertMap.has(a.id)) this.alertMap.set(a.id, a);
    this.fleetMap.clear();
    for (const f of snap.fleet) this.fleetMap.set(f.key, f);
    this.fleet = [...this.fleetMap.values()].sort(byKey);
    this.thresholds = snap.thresholds;
    this.hasSnapshot = true;
    this.bump(["semaphores", "structure", "alerts", "fleet", "agents", "connection"]);
    for (const s of this.sems.values()) this.emitKey(s);
  }

  /**
   * Applies a delta already known to follow the last one (the client checks seq). False when it
   * patched a semaphore this store never had without saying what it is (UiSemaphorePatch): the
   * store missed something, and only a snapshot brings it level. Everything else was applied.
   */
  applyDelta(d: UiDelta): boolean {
    let complete = true;
    this.clockOffset = d.serverTime - Date.now();
    this.lastUpdate = d.serverTime;
    this.lastSeq = d.seq;
    this.rejected = d.rejected;
    const changed: Channel[] = [];
    if (d.admission !== undefined) {
      this.admission = d.admission;
      changed.push("connection");
    }
    /** The semaphores this delta changed, by key: each one's listeners hear of it once. */
    const touched = new Map<string, UiSemaphore>();

    if (d.agents !== undefined || d.removedAgents !== undefined) {
      const flipped = new Set<string>();
      for (const a of d.agents ?? []) {
        if (this.agents.get(a.agentId)?.connected !== a.connected) flipped.add(a.agentId);
        this.agents.set(a.agentId, a);
      }
      for (const id of d.removedAgents ?? []) {
        this.agents.delete(id);
        flipped.add(id);
      }
      // A semaphore's item carries its agent's connection, so an agent that came or went re-derives its rows.
      if (flipped.size > 0) {
        for (const s of this.sems.values()) if (flipped.has(s.agentId)) this.items.set(s.key, toItem(s, this.agentConnected(s.agentId)));
        changed.push("semaphores", "structure");
      }
      changed.push("agents");
    }
    if (d.semaphores !== undefined) {
      for (const p of d.semaphores) {
        const s = applyPatch(this.sems.get(p.key), p);
        if (s === undefined) {
          complete = false;
          continue;
        }
        const before = this.items.get(s.key);
        const item = toItem(s, this.agentConnected(s.agentId));
        if (before === undefined || before.status !== item.status) changed.push("structure");
        this.sems.set(s.key, s);
        this.items.set(s.key, item);
        let ring = this.sparks.get(s.key);
        if (ring === undefined) this.sparks.set(s.key, (ring = new SparkRing(SPARK_POINTS)));
        if (s.t !== null) ring.push(s.t, s.inUse, s.waiters);
        touched.set(s.key, s);
      }
      changed.push("semaphores");
    }
    if (d.unconfigured !== undefined) {
      // A patch keeps the config held when it carries none: these keys' configs are gone.
      for (const k of d.unconfigured) {
        const s = this.sems.get(k);
        if (s?.config === undefined) continue;
        const { config: _dropped, ...rest } = s;
        this.sems.set(k, rest);
        touched.set(k, rest);
      }
      changed.push("semaphores");
    }
    if (d.removed !== undefined) {
      for (const k of d.removed) {
        this.sems.delete(k);
        this.items.delete(k);
        this.sparks.delete(k);
      }
      changed.push("semaphores", "structure");
    }
    if (d.alerts !== undefined) {
      for (const c of d.alerts) this.alertMap.set(c.alert.id, c.alert);
      changed.push("alerts");
    }
    if (d.fleet !== undefined || d.removedFleet !== undefined) {
      this.patchFleet(d.fleet ?? [], d.removedFleet ?? []);
      changed.push("fleet");
    }
    if (d.thresholds !== undefined) {
      // Thresholds are the alert rules' numbers: the alerts channel covers them.
      this.thresholds = d.thresholds;
      changed.push("alerts");
    }
    if (changed.length > 0) this.bump(changed);
    for (const s of touched.values()) this.emitKey(s);
    return complete;
  }

  /** A delta's fleet part: entries new or changed (upserts by key) and keys gone. */
  private patchFleet(upserts: readonly UiFleetEntry[], removed: readonly string[]): void {
    let regroup = false;
    for (const k of removed) if (this.fleetMap.delete(k)) regroup = true;
    for (const f of upserts) {
      if (!this.fleetMap.has(f.key)) regroup = true;
      this.fleetMap.set(f.key, f);
    }
    // Values only (the usual delta): same order, no sort.
    this.fleet = regroup ? [...this.fleetMap.values()].sort(byKey) : this.fleet.map((f) => this.fleetMap.get(f.key) ?? f);
  }

  /** The thresholds as the hub answered thresholds:set (the next delta says the same). */
  setThresholds(t: AlertThresholds): void {
    this.thresholds = t;
    this.bump(["alerts"]);
  }

  /** An alert as the hub answered alert:ack: applied at once rather than on the next delta. */
  upsertAlert(a: Alert): void {
    this.alertMap.set(a.id, a);
    this.bump(["alerts"]);
  }

  private emitKey(s: UiSemaphore): void {
    const set = this.perKey.get(s.key);
    if (set !== undefined) for (const fn of [...set]) fn(s);
  }
}
