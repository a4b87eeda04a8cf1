// Namespace /ui (dashboards): a snapshot on connect, then deltas of what changed, batched on one
// timer (at most 4 a second), and a few requests with acks (docs/protocol.md, "Dashboard
// namespace `/ui`"). A dashboard that falls behind is dropped, never buffered without bound.
import type { Namespace, Server, Socket } from "socket.io";
import { parsePayload } from "../../../shared/protocol/index.js";
import {
  FleetChangeTracker,
  toPatch,
  UI_IDENTITY_FIELDS,
  UI_LIMITS,
  uiAlertAckSchema,
  uiEmptyRequestSchema,
  uiFleetHistoryRequestSchema,
  uiHistoryRequestSchema,
  uiThresholdsSetSchema,
  UI_NAMESPACE_EVENTS,
  type HubToUiEvents,
  type UiDelta,
  type UiIdentityField,
  type UiToHubEvents,
} from "../../../shared/ui-protocol/index.js";
import { UI_NAMESPACE } from "../../../shared/protocol/index.js";
import { contained, reply, splitArgs } from "../socket/listener.js";
import type { Ack } from "../../../shared/protocol/index.js";
import type { TokenCheck } from "../auth.js";
import type { HubCore } from "../core/hub-core.js";
import { TokenBucket } from "../socket/token-bucket.js";
import type { SemaphoreInfo, SemaphoreState } from "../../../shared/protocol/index.js";
import { fleetHistoryView, historyView, snapshot, uiFleet, uiSemaphore, type ViewResult } from "./views.js";

type UiSocket = Socket<UiToHubEvents, HubToUiEvents>;
type RequestName = keyof UiToHubEvents;

export interface UiOptions {
  readonly deltaIntervalMs: number;
  readonly maxBufferedBytes: number;
  readonly maxBufferedPackets: number;
  readonly log: (line: string) => void;
}

const INTERNAL_ERROR = { ok: false, error: "internal error" } as const;

/** What engine.io holds for a connection and has not yet handed to its transport. */
export function buffered(socket: Socket): { packets: number; bytes: number } {
  const wb = (socket.conn as unknown as { writeBuffer?: unknown }).writeBuffer;
  if (!Array.isArray(wb)) return { packets: 0, bytes: 0 };
  let bytes = 0;
  for (const p of wb as { data?: unknown }[]) {
    const d = p?.data;
    bytes += typeof d === "string" ? d.length : d instanceof Uint8Array || d instanceof ArrayBuffer ? d.byteLength : 0;
  }
  return { packets: wb.length, bytes };
}

function answer<T extends object>(r: ViewResult<T>): Ack {
  return r.ok ? { ok: true, ...r.value } : { ok: false, error: r.error };
}

export class UiNamespace {
  readonly nsp: Namespace<UiToHubEvents, HubToUiEvents>;
  private seq = 0;
  private lastRejected = -1;
  /** hub.admission as last sent, as JSON (it changes seldom: compared whole). */
  private lastAdmission = "";
  /** Keys dashboards have been told about, to say which went away. */
  private known = new Set<string>();
  /** The registration each key's config was last sent in a delta with (snapshots carry every config). */
  private sentInfo = new Map<string, SemaphoreInfo>();
  /** The identity each key was last sent with in a delta (UiSemaphorePatch: later entries leave it out). */
  private sentIdentity = new Map<string, Pick<SemaphoreState, UiIdentityField>>();
  /** The fleet entries dashboards hold: a delta carries only those that changed. */
  private readonly fleet = new FleetChangeTracker();
  /** Bytes already buffered right after a dashboard's snapshot: a big snapshot is not "behind". */
  private readonly allowance = new WeakMap<UiSocket, number>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    io: Server,
    private readonly core: HubCore,
    tokens: TokenCheck,
    private readonly opts: UiOptions,
  ) {
    this.nsp = io.of(UI_NAMESPACE);
    this.nsp.use((socket, next) => {
      const why = tokens.refuseHandshake(socket.handshake.auth);
      if (why === null) return next();
      core.stats.handshakesRefused++;
      core.reject();
      next(new Error(why));
    });
    this.nsp.on("connection", (socket) => contained("dashboard connect", opts.log, undefined, () => this.connected(socket)));
    this.timer = setInterval(() => contained("dashboard delta", opts.log, undefined, () => this.flush()), opts.deltaIntervalMs);
    this.timer.unref();
  }

  get clients(): number {
    return this.nsp.sockets.size;
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** What was acknowledged before a dashboard reads is in what it reads (StorePipeline.defer). */
  private storeDeferred(): void {
    contained("deferred stores", this.opts.log, undefined, () => this.core.ingest.flush());
  }

  private connected(socket: UiSocket): void {
    this.storeDeferred();
    const bucket = new TokenBucket(UI_LIMITS.requestsPerSecond, UI_LIMITS.requestBurst);
    const snap = snapshot(this.core, this.seq, this.opts.deltaIntervalMs);
    for (const s of snap.state.semaphores) this.known.add(s.key);
    // Alone, it holds exactly this fleet; with others, the next delta brings everyone level.
    if (this.nsp.sockets.size <= 1) this.fleet.resetTo(snap.fleet);
    else this.fleet.snapshotTaken(snap.fleet);
    socket.emit("snapshot", snap);
    this.allowance.set(socket, buffered(socket).bytes);

    for (const name of UI_NAMESPACE_EVENTS) {
      socket.on(name, (...args: unknown[]) => {
        const { payload, ack } = splitArgs(args);
        const run = () => (bucket.take() ? this.request(name, payload) : this.refuse("rate limit exceeded"));
        reply(ack, contained(`dashboard ${name}`, this.opts.log, INTERNAL_ERROR, run));
      });
    }
    socket.onAny((event: unknown, ...args: unknown[]) => {
      if (typeof event === "string" && (UI_NAMESPACE_EVENTS as readonly string[]).includes(event)) return;
      reply(splitArgs(args).ack, this.refuse("unknown event"));
    });
  }

  private refuse(error: string): Ack {
    this.core.reject();
    return { ok: false, error };
  }

  private request(name: RequestName, payload: unknown): Ack {
    this.storeDeferred();
    const core = this.core;
    switch (name) {
      case "snapshot:get": {
        const p = parsePayload(uiEmptyRequestSchema, payload);
        if (!p.ok) return this.refuse(p.error);
        const snap = snapshot(core, this.seq, this.opts.deltaIntervalMs);
        for (const s of snap.state.semaphores) this.known.add(s.key);
        this.fleet.snapshotTaken(snap.fleet);
        return { ok: true, snapshot: snap };
      }
      case "history:get": {
        const p = parsePayload(uiHistoryRequestSchema, payload);
        if (!p.ok) return this.refuse(p.error);
        const r = answer(historyView(core, p.value.key, p.value));
        return r.ok ? r : this.refuse(r.error);
      }
      case "fleet:get": {
        const p = parsePayload(uiEmptyRequestSchema, payload);
        return p.ok ? { ok: true, fleet: uiFleet(core.engine.fleet()) } : this.refuse(p.error);
      }
      case "fleet:history": {
        const p = parsePayload(uiFleetHistoryRequestSchema, payload);
        if (!p.ok) return this.refuse(p.error);
        const r = answer(fleetHistoryView(core, p.value.service, p.value.name, p.value));
        return r.ok ? r : this.refuse(r.error);
      }
      case "alerts:get": {
        const p = parsePayload(uiEmptyRequestSchema, payload);
        return p.ok ? { ok: true, alerts: core.engine.allAlerts() } : this.refuse(p.error);
      }
      case "alert:ack": {
        const p = parsePayload(uiAlertAckSchema, payload);
        if (!p.ok) return this.refuse(p.error);
        const alert = core.acknowledge(p.value.id);
        return alert === undefined ? this.refuse("no such alert") : { ok: true, alert };
      }
      case "thresholds:set": {
        const p = parsePayload(uiThresholdsSetSchema, payload);
        if (!p.ok) return this.refuse(p.error);
        try {
          return { ok: true, thresholds: core.setThresholds(p.value.patch) };
        } catch (err) {
          return this.refuse(err instanceof Error ? err.message : String(err));
        }
      }
    }
  }

  /** A fresh snapshot for every dashboard, as if each had just connected (a replay's cursor jumped). */
  resync(): void {
    this.storeDeferred();
    this.core.changes.take();
    const snap = snapshot(this.core, this.seq, this.opts.deltaIntervalMs);
    this.known = new Set(snap.state.semaphores.map((s) => s.key));
    // Every dashboard holds every identity now; keys the snapshot dropped must not linger.
    this.sentIdentity.clear();
    this.fleet.resetTo(snap.fleet);
    for (const socket of this.nsp.sockets.values()) {
      socket.emit("snapshot", snap);
      this.allowance.set(socket, buffered(socket).bytes);
    }
  }

  /** One delta for every dashboard: what changed since the last one. Runs on the timer. */
  flush(): void {
    this.storeDeferred();
    // Taken even with nobody listening, so the tracker never grows.
    const changes = this.core.changes.take();
    // Checked every tick, changes or not: a dashboard can fall behind on its own requests too.
    for (const socket of this.nsp.sockets.values()) if (this.behind(socket)) this.drop(socket);
    if (this.nsp.sockets.size === 0) {
      this.known.clear();
      this.sentInfo.clear();
      this.sentIdentity.clear();
      this.fleet.clear();
      return;
    }
    const rejected = this.core.rejected;
    const admission = this.core.admission?.();
    const admissionJson = admission === undefined ? "" : JSON.stringify(admission);
    const quiet =
      changes.keys.size === 0 && !changes.structure && changes.agents.size === 0 && changes.removedAgents.size === 0 &&
      changes.alerts.length === 0 && !changes.thresholds && rejected === this.lastRejected && admissionJson === this.lastAdmission;
    if (quiet) return;
    this.lastRejected = rejected;

    const core = this.core;
    const delta: UiDelta = { seq: ++this.seq, serverTime: core.now(), rejected };
    if (admission !== undefined && admissionJson !== this.lastAdmission) delta.admission = admission;
    this.lastAdmission = admissionJson;
    if (changes.keys.size > 0 || changes.structure) {
      const all = core.registry.semaphores();
      const current = new Set(all.map((s) => s.key));
      // A config goes out once per registration: dashboards keep the one they have.
      const configChanged = (key: string, info: SemaphoreInfo): boolean => {
        if (this.sentInfo.get(key) === info) return false;
        this.sentInfo.set(key, info);
        return true;
      };
      const changed = all.filter((s) => changes.keys.has(s.key)).map((s) => toPatch(uiSemaphore(core, s, configChanged), this.identityChanged(s)));
      if (changed.length > 0) delta.semaphores = changed;
      const removed = [...this.known].filter((k) => !current.has(k));
      if (removed.length > 0) delta.removed = removed;
      for (const k of removed) {
        this.sentInfo.delete(k);
        this.sentIdentity.delete(k);
      }
      this.known = current;
    }
    if (changes.agents.size > 0) delta.agents = core.registry.agents().filter((a) => changes.agents.has(a.agentId));
    if (changes.removedAgents.size > 0) delta.removedAgents = [...changes.removedAgents];
    if (changes.alerts.length > 0) delta.alerts = [...changes.alerts];
    if (changes.keys.size > 0 || changes.structure || changes.agents.size > 0 || changes.removedAgents.size > 0) {
      const fleet = this.fleet.take(uiFleet(core.engine.fleet()));
      if (fleet.changed.length > 0) delta.fleet = fleet.changed;
      if (fleet.removed.length > 0) delta.removedFleet = fleet.removed;
    }
    if (changes.thresholds) delta.thresholds = core.engine.thresholds;
    this.nsp.emit("delta", delta);
  }

  /**
   * Whether a delta must carry `s`'s identity: dashboards have not had it from a delta yet, or it
   * changed since (a new agent, a register). A dashboard that connected later has it from its snapshot.
   */
  private identityChanged(s: SemaphoreState): boolean {
    const sent = this.sentIdentity.get(s.key);
    if (sent !== undefined && UI_IDENTITY_FIELDS.every((f) => sent[f] === s[f])) return false;
    this.sentIdentity.set(s.key, { agentId: s.agentId, service: s.service, instance: s.instance, id: s.id, name: s.name, kind: s.kind });
    return true;
  }

  /** More bytes or packets waiting for it than the bounds allow (beyond what its snapshot left). */
  private behind(socket: UiSocket): boolean {
    const b = buffered(socket);
    return b.bytes - (this.allowance.get(socket) ?? 0) > this.opts.maxBufferedBytes || b.packets > this.opts.maxBufferedPackets;
  }

  /** Close a dashboard that is behind at once, discarding what it has not read. */
  private drop(socket: UiSocket): void {
    this.core.stats.uiDropped++;
    const conn = socket.conn as unknown as { close(discard?: boolean): void; transport?: { socket?: { terminate?: () => void } } };
    const ws = conn.transport?.socket;
    conn.close(true);
    // A WebSocket close waits for the peer's handshake behind the unread data; this one is not reading.
    if (typeof ws?.terminate === "function") ws.terminate();
  }
}
