// Namespace /ui (dashboards): a snapshot on connect, then deltas of what changed, batched on one
// timer (at most 4 a second), and a few requests with acks (docs/protocol.md, "Dashboard
// namespace `/ui`"). A dashboard that falls behind is dropped, never buffered without bound.
// Snapshots are built a slice at a time, once for every dashboard that asked meanwhile, and sent
// as JSON serialised once; deltas go to the "live" room (dashboards that hold a snapshot) and
// wait while a snapshot is built or handed out. Dashboards are capped per address and in all.
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
  type UiSemaphorePatch,
  type UiSnapshot,
  type UiToHubEvents,
} from "../../../shared/ui-protocol/index.js";
import { UI_NAMESPACE } from "../../../shared/protocol/index.js";
import { contained, reply, splitArgs } from "../socket/listener.js";
import type { Ack } from "../../../shared/protocol/index.js";
import type { TokenCheck } from "../auth.js";
import type { HubCore } from "../core/hub-core.js";
import { TokenBucket } from "../socket/token-bucket.js";
import type { SemaphoreInfo, SemaphoreState } from "../../../shared/protocol/index.js";
import { performance } from "node:perf_hooks";
import { rawJsonBroadcasts, rawJsonReplies, RawJson } from "./raw-json.js";
import { FleetView } from "./fleet-view.js";
import { SnapshotBuilder, SNAPSHOT_SLICE_MS, type BuiltSnapshot } from "./snapshot-builder.js";
import { fleetHistoryView, historyView, uiFleet, uiSemaphore, type ViewResult } from "./views.js";

type UiSocket = Socket<UiToHubEvents, HubToUiEvents>;
type RequestName = keyof UiToHubEvents;

export interface UiOptions {
  readonly deltaIntervalMs: number;
  readonly maxBufferedBytes: number;
  readonly maxBufferedPackets: number;
  /** Dashboards at once, in all and from one address (default UI_LIMITS'). */
  readonly maxClients?: number;
  readonly maxClientsPerAddress?: number;
  readonly log: (line: string) => void;
}

/** A snapshot is served again, while nothing changed, for at most this long (its serverTime ages). */
const CACHE_MS = 1000;

/** Dashboards that hold a snapshot: every delta goes to them. */
const LIVE = "live";

/** Who waits for a snapshot: a new connection (a `snapshot` event) or a `snapshot:get` (its ack). */
interface Waiter {
  readonly socket: UiSocket;
  readonly ack?: (answer: unknown) => void;
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
  /** Bytes buffered right after a dashboard's snapshot, shrinking as it reads: a big snapshot is not "behind". */
  private readonly allowance = new WeakMap<UiSocket, number>();
  /** Asked for a snapshot after the build under way began: they get the next one. */
  private queued: Waiter[] = [];
  /** The snapshot being built and who gets it. */
  private building: { builder: SnapshotBuilder; waiters: Waiter[] } | undefined;
  /** snapshot:get answers still to send, one per turn of the event loop (each copies a few MB). */
  private readonly outbox: { w: Waiter; raw: RawJson }[] = [];
  /** The last snapshot built, served again while nothing changed (same delta seq, no change since). */
  private cached: { built: BuiltSnapshot; raw: RawJson; seq: number; hub: string; at: number } | undefined;
  /** The fleet as the last delta computed it, group by group. */
  private readonly fleetView: FleetView;
  /** The delta seq fleetView is as of. */
  private fleetSeq = -1;
  /** A delta is due but waits for a snapshot's build or hand-out. */
  private flushOwed = false;
  /** Snapshots built (tests read it: one per generation, not one per dashboard). */
  builds = 0;
  /** Dashboards connected per remote address, and recent handshakes per address and in all. */
  private readonly perAddress = new Map<string, number>();
  private readonly handshakesFrom = new Map<string, { bucket: TokenBucket; at: number }>();
  private readonly handshakes = new TokenBucket(UI_LIMITS.handshakesPerSecond, UI_LIMITS.handshakeBurst);
  private readonly maxClients: number;
  private readonly maxClientsPerAddress: number;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    io: Server,
    private readonly core: HubCore,
    tokens: TokenCheck,
    private readonly opts: UiOptions,
  ) {
    this.fleetView = new FleetView(core);
    this.maxClients = opts.maxClients ?? UI_LIMITS.maxClients;
    this.maxClientsPerAddress = opts.maxClientsPerAddress ?? UI_LIMITS.maxClientsPerAddress;
    this.nsp = io.of(UI_NAMESPACE);
    rawJsonBroadcasts(this.nsp);
    this.nsp.use((socket, next) => {
      const why = tokens.refuseHandshake(socket.handshake.auth) ?? this.refuseAdmission(socket.handshake.address);
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
    this.building = undefined;
    this.queued = [];
    this.outbox.length = 0;
  }

  /** Why a new dashboard from `address` is refused (a sentence the page shows), or null. */
  private refuseAdmission(address: string): string | null {
    if ((this.perAddress.get(address) ?? 0) >= this.maxClientsPerAddress) return `too many dashboards from this address (at most ${this.maxClientsPerAddress})`;
    if (this.nsp.sockets.size >= this.maxClients) return `too many dashboards connected to this hub (at most ${this.maxClients})`;
    const now = performance.now();
    let from = this.handshakesFrom.get(address);
    if (from === undefined) {
      // Addresses not seen for a while hold a full bucket: forgetting them changes nothing.
      if (this.handshakesFrom.size >= 1024) for (const [a, f] of this.handshakesFrom) if (now - f.at > 60_000) this.handshakesFrom.delete(a);
      from = { bucket: new TokenBucket(UI_LIMITS.handshakesPerSecondPerAddress, UI_LIMITS.handshakeBurstPerAddress), at: now };
      if (this.handshakesFrom.size < 4096) this.handshakesFrom.set(address, from);
    }
    from.at = now;
    if (!from.bucket.take(now)) return "too many dashboard connections from this address: try again in a few seconds";
    if (!this.handshakes.take(now)) return "too many dashboard connections: try again in a few seconds";
    return null;
  }

  /** What was acknowledged before a dashboard reads is in what it reads (StorePipeline.defer). */
  private storeDeferred(): void {
    contained("deferred stores", this.opts.log, undefined, () => this.core.ingest.flush());
  }

  /**
   * Takes a snapshot's price from a dashboard's request budget: one request, plus one per
   * UI_LIMITS.semaphoresPerSnapshotRequest semaphores (the budget may go below zero: the
   * dashboard's next requests wait for it to refill). False when the budget is empty.
   */
  private chargeSnapshot(bucket: TokenBucket): boolean {
    if (!bucket.take()) return false;
    bucket.charge(Math.floor(this.core.history.size / UI_LIMITS.semaphoresPerSnapshotRequest));
    return true;
  }

  private connected(socket: UiSocket): void {
    const address = socket.handshake.address;
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    socket.on("disconnect", () => {
      const n = (this.perAddress.get(address) ?? 1) - 1;
      if (n <= 0) this.perAddress.delete(address);
      else this.perAddress.set(address, n);
    });
    rawJsonReplies(socket);
    const bucket = new TokenBucket(UI_LIMITS.requestsPerSecond, UI_LIMITS.requestBurst);
    this.chargeSnapshot(bucket);

    for (const name of UI_NAMESPACE_EVENTS) {
      socket.on(name, (...args: unknown[]) => {
        const { payload, ack } = splitArgs(args);
        if (name === "snapshot:get") return contained("dashboard snapshot:get", this.opts.log, undefined, () => this.snapshotRequest(socket, bucket, payload, ack));
        const run = () => (bucket.take() ? this.request(name, payload) : this.refuse("rate limit exceeded"));
        reply(ack, contained(`dashboard ${name}`, this.opts.log, INTERNAL_ERROR, run));
      });
    }
    socket.onAny((event: unknown, ...args: unknown[]) => {
      if (typeof event === "string" && (UI_NAMESPACE_EVENTS as readonly string[]).includes(event)) return;
      reply(splitArgs(args).ack, this.refuse("unknown event"));
    });
    this.wantSnapshot({ socket });
  }

  /** `snapshot:get`: charged by its cost, answered once a snapshot holding all stored so far is ready. */
  private snapshotRequest(socket: UiSocket, bucket: TokenBucket, payload: unknown, ack: ((answer: unknown) => void) | undefined): void {
    const p = parsePayload(uiEmptyRequestSchema, payload);
    if (!p.ok) return reply(ack, this.refuse(p.error));
    if (!this.chargeSnapshot(bucket)) return reply(ack, this.refuse("rate limit exceeded"));
    this.wantSnapshot({ socket, ack: ack ?? (() => undefined) });
  }

  private refuse(error: string): Ack {
    this.core.reject();
    return { ok: false, error };
  }

  private request(name: Exclude<RequestName, "snapshot:get">, payload: unknown): Ack {
    this.storeDeferred();
    const core = this.core;
    switch (name) {
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

  private get busy(): boolean {
    return this.building !== undefined || this.outbox.length > 0;
  }

  /** `w` gets a snapshot holding everything stored by now, and the deltas after it. */
  private wantSnapshot(w: Waiter): void {
    this.storeDeferred();
    const c = this.cached;
    const fresh =
      c !== undefined && c.seq === this.seq && this.core.changes.empty && performance.now() - c.at < CACHE_MS && JSON.stringify(this.core.hubInfo()) === c.hub;
    if (fresh && !this.busy) return this.handOut(c.built, c.raw, [w]);
    this.queued.push(w);
    if (!this.busy) this.startBuild();
  }

  /** Builds one snapshot for everyone queued, a slice per turn of the event loop (the first one now). */
  private startBuild(): void {
    // The fleet the last delta computed, while nothing changed since: a snapshot holds all stored
    // when it was asked, and samples stored after that delta would leave its fleet behind.
    const fleet = this.fleetSeq === this.seq && this.core.changes.empty ? this.fleetView.list() : undefined;
    const b = { builder: new SnapshotBuilder(this.core, this.seq, this.opts.deltaIntervalMs, fleet), waiters: this.queued };
    this.queued = [];
    this.building = b;
    const run = (): void => {
      if (this.building !== b) return;
      let built: BuiltSnapshot | undefined;
      try {
        built = b.builder.step(performance.now() + SNAPSHOT_SLICE_MS);
      } catch (err) {
        this.building = undefined;
        this.opts.log(`semscope hub: dashboard snapshot failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        for (const w of b.waiters) if (w.ack === undefined) w.socket.disconnect(true);
        else reply(w.ack, INTERNAL_ERROR);
        return this.idle();
      }
      if (built === undefined) {
        setImmediate(run);
        return;
      }
      this.building = undefined;
      this.builds++;
      const raw = new RawJson(built.json);
      this.cached = { built, raw, seq: this.seq, hub: JSON.stringify(this.core.hubInfo()), at: performance.now() };
      this.handOut(built, raw, b.waiters);
    };
    run();
  }

  /**
   * Sends `raw` to the dashboards waiting for it: one shared `snapshot` event to the new
   * connections, and each `snapshot:get` answer on its own turn of the event loop. No delta goes
   * out until all are sent, so each dashboard gets the deltas after its snapshot and no other.
   */
  private handOut(built: BuiltSnapshot, raw: RawJson, waiters: readonly Waiter[]): void {
    this.taken(built, false);
    const fresh = waiters.filter((w) => w.ack === undefined && w.socket.connected).map((w) => w.socket);
    if (fresh.length > 0) {
      this.nsp.to(fresh.map((s) => s.id)).emit("snapshot", raw as unknown as UiSnapshot);
      for (const socket of fresh) this.joined(socket);
    }
    for (const w of waiters) if (w.ack !== undefined) this.outbox.push({ w, raw });
    this.drain();
  }

  /** Sends the next snapshot:get answer, then the rest on later turns; idle() when none is left. */
  private drain(): void {
    const next = this.outbox.shift();
    if (next === undefined) return this.idle();
    const { w, raw } = next;
    if (w.socket.connected) {
      reply(w.ack, { ok: true, snapshot: raw });
      this.joined(w.socket);
    }
    setImmediate(() => contained("dashboard snapshot", this.opts.log, undefined, () => this.drain()));
  }

  /** A snapshot is no longer being built or handed out: the delta it held back, then the next build. */
  private idle(): void {
    if (this.busy) return;
    if (this.flushOwed) this.flush();
    if (this.queued.length > 0 && !this.busy) this.startBuild();
  }

  /** Dashboards now hold `built` (with `everyone`: all of them, nothing else). */
  private taken(built: BuiltSnapshot, everyone: boolean): void {
    if (everyone) {
      this.known = new Set(built.keys);
      // Every dashboard holds every identity now; keys the snapshot dropped must not linger.
      this.sentIdentity.clear();
    } else for (const k of built.keys) this.known.add(k);
    // Alone, they hold exactly this fleet; with others, the next delta brings everyone level.
    if (everyone || this.live === 0) this.fleet.resetTo(built.fleet);
    else this.fleet.snapshotTaken(built.fleet);
  }

  /** `socket` holds a snapshot: it gets every delta from now on. */
  private joined(socket: UiSocket): void {
    void socket.join(LIVE);
    this.allowance.set(socket, buffered(socket).bytes);
  }

  private get live(): number {
    return this.nsp.adapter.rooms.get(LIVE)?.size ?? 0;
  }

  /** A fresh snapshot for every dashboard, as if each had just connected (a replay's cursor jumped). */
  resync(): void {
    this.storeDeferred();
    this.core.changes.take();
    // Those changes are dropped: the next delta's fleet is computed whole, and so is a snapshot's till then.
    this.fleetView.clear();
    this.fleetSeq = -1;
    // Whatever was built or queued describes the hub before the jump: everyone gets this one instead.
    const answers = [...(this.building?.waiters ?? []), ...this.queued, ...this.outbox.map((o) => o.w)].filter((w) => w.ack !== undefined);
    this.building = undefined;
    this.queued = [];
    this.outbox.length = 0;
    this.flushOwed = false;
    const built = new SnapshotBuilder(this.core, this.seq, this.opts.deltaIntervalMs).step(Infinity) as BuiltSnapshot;
    this.builds++;
    const raw = new RawJson(built.json);
    this.cached = { built, raw, seq: this.seq, hub: JSON.stringify(this.core.hubInfo()), at: performance.now() };
    this.taken(built, true);
    this.nsp.emit("snapshot", raw as unknown as UiSnapshot);
    for (const socket of this.nsp.sockets.values()) this.joined(socket);
    for (const w of answers) if (w.socket.connected) reply(w.ack, { ok: true, snapshot: raw });
  }

  /** One delta for every dashboard: what changed since the last one. Runs on the timer. */
  flush(): void {
    if (this.busy) {
      this.flushOwed = true;
      return;
    }
    this.flushOwed = false;
    this.storeDeferred();
    // Taken even with nobody listening, so the tracker never grows.
    const changes = this.core.changes.take();
    // Checked every tick, changes or not: a dashboard can fall behind on its own requests too.
    for (const socket of this.nsp.sockets.values()) if (this.behind(socket)) this.drop(socket);
    if (this.live === 0) {
      this.fleetSeq = -1;
      this.fleetView.clear();
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
      // A config goes out once per registration: dashboards keep the one they have.
      const configChanged = (key: string, info: SemaphoreInfo): boolean => {
        if (this.sentInfo.get(key) === info) return false;
        this.sentInfo.set(key, info);
        return true;
      };
      const patch = (s: SemaphoreState) => toPatch(uiSemaphore(core, s, configChanged), this.identityChanged(s));
      const registry = core.registry;
      const changed: UiSemaphorePatch[] = [];
      if (changes.structure) {
        // Semaphores may have gone: compare every key dashboards know with the registry's.
        const all = registry.semaphores();
        const current = new Set(all.map((s) => s.key));
        for (const s of all) if (changes.keys.has(s.key)) changed.push(patch(s));
        const removed = [...this.known].filter((k) => !current.has(k));
        if (removed.length > 0) delta.removed = removed;
        for (const k of removed) {
          this.sentInfo.delete(k);
          this.sentIdentity.delete(k);
        }
        this.known = current;
      } else {
        // Only samples and alerts: the work is in proportion to what moved, not to the fleet.
        for (const key of changes.keys) {
          const s = registry.tracker(key)?.state();
          if (s === undefined) continue;
          changed.push(patch(s));
          this.known.add(key);
        }
      }
      if (changed.length > 0) delta.semaphores = changed;
    }
    if (changes.agents.size > 0) delta.agents = core.registry.agents().filter((a) => changes.agents.has(a.agentId));
    if (changes.removedAgents.size > 0) delta.removedAgents = [...changes.removedAgents];
    if (changes.alerts.length > 0) delta.alerts = [...changes.alerts];
    if (changes.keys.size > 0 || changes.structure || changes.agents.size > 0 || changes.removedAgents.size > 0) {
      const moved = this.fleetView.update(changes);
      this.fleetSeq = delta.seq;
      const fleet = moved === undefined ? this.fleet.take(this.fleetView.list()) : this.fleet.takeSome(moved);
      if (fleet.changed.length > 0) delta.fleet = fleet.changed;
      if (fleet.removed.length > 0) delta.removedFleet = fleet.removed;
    }
    if (changes.thresholds) delta.thresholds = core.engine.thresholds;
    this.nsp.to(LIVE).emit("delta", delta);
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
    // The allowance shrinks as the dashboard reads: what it drained, it cannot buffer again.
    const allowance = Math.min(this.allowance.get(socket) ?? 0, b.bytes);
    this.allowance.set(socket, allowance);
    return b.bytes - allowance > this.opts.maxBufferedBytes || b.packets > this.opts.maxBufferedPackets;
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
