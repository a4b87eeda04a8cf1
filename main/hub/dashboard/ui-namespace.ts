// Namespace /ui (dashboards): a snapshot on connect, then deltas of what changed, batched on one
// timer (at most 4 a second), and a few requests with acks (docs/protocol.md, "Dashboard
// namespace `/ui`"). A dashboard that falls behind is dropped, never buffered without bound.
// Snapshots (once for every dashboard that asked meanwhile) and deltas are built a few ms at a
// time, one at a time, and sent as JSON serialised once; deltas go to the "live" room (dashboards
// that hold a snapshot) and wait while a snapshot is built or handed out, and a snapshot waits for
// the delta being built. Dashboards are capped per address and in all.
import type { Namespace, Server, Socket } from "socket.io";
import { parsePayload } from "../../../shared/protocol/index.js";
import {
  UI_LIMITS,
  uiAlertAckSchema,
  uiEmptyRequestSchema,
  uiFleetHistoryRequestSchema,
  uiHistoryRequestSchema,
  uiThresholdsSetSchema,
  UI_NAMESPACE_EVENTS,
  type HubToUiEvents,
  type UiDelta,
  type UiSnapshot,
  type UiToHubEvents,
} from "../../../shared/ui-protocol/index.js";
import { UI_NAMESPACE } from "../../../shared/protocol/index.js";
import { contained, reply, splitArgs } from "../socket/listener.js";
import type { Ack, CapScope, HubAdmission } from "../../../shared/protocol/index.js";
import type { TokenCheck } from "../auth.js";
import type { Changes } from "../core/change-tracker.js";
import type { HubCore } from "../core/hub-core.js";
import { TokenBucket } from "../socket/token-bucket.js";
import { AddressCounts } from "../socket/address-counts.js";
import { performance } from "node:perf_hooks";
import { AFTER_ACK, AFTER_EVENT, rawJsonBroadcasts, rawJsonReplies, RawJson } from "./raw-json.js";
import { UiDeltas } from "./delta-builder.js";
import { buildSnapshot, type BuiltSnapshot } from "./snapshot-builder.js";
import { runToEnd, runUntil, type Job } from "./slices.js";
import type { Task, TurnBudget } from "../core/turn-budget.js";
import { currentFleet, fleetJson } from "./fleet-answer.js";
import { fleetHistoryView, historyView, type ViewResult } from "./views.js";

type UiSocket = Socket<UiToHubEvents, HubToUiEvents>;
type RequestName = keyof UiToHubEvents;

export interface UiOptions {
  readonly deltaIntervalMs: number;
  readonly maxBufferedBytes: number;
  readonly maxBufferedPackets: number;
  /** Dashboards at once, in all and from one address (default UI_LIMITS'). */
  readonly maxClients?: number;
  readonly maxClientsPerAddress?: number;
  /** New dashboard connections a second and in one burst, in all and from one address (default UI_LIMITS'). */
  readonly handshakes?: { readonly perSecond: number; readonly burst: number; readonly perSecondPerAddress: number; readonly burstPerAddress: number };
  /** Work between two yields to the event loop when building a delta or snapshot, at most (default: what the turn's budget leaves; tests set 0 to cut at every step). */
  readonly sliceMs?: number;
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

type JobKind = "delta" | "snapshot" | "fleet";

type AckFn = (answer: unknown) => void;

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
  /** What dashboards were told, and the delta being built against it. */
  private readonly deltas: UiDeltas;
  /** Bytes buffered right after a dashboard's snapshot, shrinking as it reads: a big snapshot is not "behind". */
  private readonly allowance = new WeakMap<UiSocket, number>();
  /** Asked for a snapshot after the build under way began: they get the next one. */
  private queued: Waiter[] = [];
  /** `fleet:get`s waiting for the next fleet job, and those the one under way answers. */
  private fleetAsked: AckFn[] = [];
  private fleetAnswering: AckFn[] = [];
  /** The delta or snapshot being built or sent, one at a time. */
  private job: Job | undefined;
  /** Who the snapshot being built or handed out is for, and how many of them have it. */
  private handing: { waiters: readonly Waiter[]; next: number } | undefined;
  /** The last snapshot built, served again while nothing changed (same delta seq, no change since). */
  private cached: { built: BuiltSnapshot; raw: RawJson; seq: number; hub: string; at: number } | undefined;
  /** A delta is due but waits for a snapshot's build or hand-out. */
  private flushOwed = false;
  /** Handshakes refused over a dashboard cap, by the cap's scope (the old total is stats.handshakesRefused). */
  readonly refusedScope: Record<CapScope, number> = { address: 0, total: 0 };
  /** Snapshots built (tests read it: one per generation, not one per dashboard). */
  builds = 0;
  /** Dashboards connected per remote address, and recent handshakes per address and in all. */
  private readonly perAddress = new AddressCounts();
  private readonly handshakesFrom = new Map<string, { bucket: TokenBucket; at: number }>();
  private readonly handshakes: TokenBucket;
  private readonly handshakeRate: NonNullable<UiOptions["handshakes"]>;
  private readonly maxClients: number;
  private readonly maxClientsPerAddress: number;
  private readonly timer: ReturnType<typeof setInterval>;
  /** The dashboards' part of each event-loop turn's budget: the job's slices, then the next job. */
  private readonly turns: TurnBudget;
  private readonly task: Task = { kind: "dashboards", run: (deadline) => this.slice(deadline) };
  /** The kind of `job`, or of the job just ended while the next is not yet started. */
  private kind: JobKind = "delta";
  /** A job ended: the next is picked (idle()) in a later step, not in the ended one's slice. */
  private ended = false;

  constructor(
    io: Server,
    private readonly core: HubCore,
    tokens: TokenCheck,
    private readonly opts: UiOptions,
  ) {
    this.deltas = new UiDeltas(core);
    this.turns = core.turns;
    this.maxClients = opts.maxClients ?? UI_LIMITS.maxClients;
    this.maxClientsPerAddress = opts.maxClientsPerAddress ?? UI_LIMITS.maxClientsPerAddress;
    this.handshakeRate = opts.handshakes ?? {
      perSecond: UI_LIMITS.handshakesPerSecond,
      burst: UI_LIMITS.handshakeBurst,
      perSecondPerAddress: UI_LIMITS.handshakesPerSecondPerAddress,
      burstPerAddress: UI_LIMITS.handshakeBurstPerAddress,
    };
    this.handshakes = new TokenBucket(this.handshakeRate.perSecond, this.handshakeRate.burst);
    this.nsp = io.of(UI_NAMESPACE);
    rawJsonBroadcasts(this.nsp);
    this.nsp.use((socket, next) => {
      const unauthorized = tokens.refuseHandshake(socket.handshake.auth);
      const capped = unauthorized === null ? this.refuseAdmission(socket.handshake.address) : null;
      const why = unauthorized ?? capped?.why ?? null;
      if (why === null) return next();
      if (capped !== null) this.refusedScope[capped.scope]++;
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
    this.turns.drop(this.task);
    this.job = undefined;
    this.ended = false;
    this.handing = undefined;
    this.queued = [];
    this.fleetAsked = [];
    this.fleetAnswering = [];
    this.core.changes.unwatch();
  }

  /**
   * `admission` (the agents' caps and refusals) with the dashboards refused over a /ui cap, by the
   * cap's scope (hub.admission's refused.dashboards and refusedScope.dashboards).
   */
  admission(admission: HubAdmission): HubAdmission {
    const { address, total } = this.refusedScope;
    const scope = admission.refusedScope;
    return {
      ...admission,
      refused: { ...admission.refused, dashboards: address + total },
      ...(scope !== undefined ? { refusedScope: { ...scope, dashboards: { address, total } } } : {}),
    };
  }

  /** Why a new dashboard from `address` is refused (a sentence the page shows) and which cap's scope refused it, or null. */
  private refuseAdmission(address: string): { why: string; scope: CapScope } | null {
    const atAddress = (why: string) => ({ why, scope: "address" as const });
    const inAll = (why: string) => ({ why, scope: "total" as const });
    if (this.perAddress.of(address) >= this.maxClientsPerAddress) return atAddress(`too many dashboards from this address (at most ${this.maxClientsPerAddress})`);
    if (this.nsp.sockets.size >= this.maxClients) return inAll(`too many dashboards connected to this hub (at most ${this.maxClients})`);
    const now = performance.now();
    let from = this.handshakesFrom.get(address);
    if (from === undefined) {
      // Addresses not seen for a while hold a full bucket: forgetting them changes nothing.
      if (this.handshakesFrom.size >= 1024) for (const [a, f] of this.handshakesFrom) if (now - f.at > 60_000) this.handshakesFrom.delete(a);
      from = { bucket: new TokenBucket(this.handshakeRate.perSecondPerAddress, this.handshakeRate.burstPerAddress), at: now };
      if (this.handshakesFrom.size < 4096) this.handshakesFrom.set(address, from);
    }
    from.at = now;
    if (!from.bucket.take(now)) return atAddress("too many dashboard connections from this address: try again in a few seconds");
    if (!this.handshakes.take(now)) return inAll("too many dashboard connections: try again in a few seconds");
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
    this.perAddress.add(address);
    socket.on("disconnect", () => this.perAddress.remove(address));
    rawJsonReplies(socket);
    const bucket = new TokenBucket(UI_LIMITS.requestsPerSecond, UI_LIMITS.requestBurst);
    this.chargeSnapshot(bucket);

    for (const name of UI_NAMESPACE_EVENTS) {
      socket.on(name, (...args: unknown[]) => {
        const { payload, ack } = splitArgs(args);
        if (name === "snapshot:get") return contained("dashboard snapshot:get", this.opts.log, undefined, () => this.snapshotRequest(socket, bucket, payload, ack));
        if (name === "fleet:get") return contained("dashboard fleet:get", this.opts.log, undefined, () => this.fleetRequest(bucket, payload, ack));
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

  /**
   * `fleet:get`: charged as a snapshot is (it can recompute every group), answered by the next
   * fleet job, which answers everyone who asked meanwhile with one fleet.
   */
  private fleetRequest(bucket: TokenBucket, payload: unknown, ack: AckFn | undefined): void {
    const p = parsePayload(uiEmptyRequestSchema, payload);
    if (!p.ok) return reply(ack, this.refuse(p.error));
    if (!this.chargeSnapshot(bucket)) return reply(ack, this.refuse("rate limit exceeded"));
    this.storeDeferred();
    this.fleetAsked.push(ack ?? (() => undefined));
    if (!this.busy) this.startFleet();
  }

  private startFleet(): void {
    const acks = this.fleetAsked;
    this.fleetAsked = [];
    this.start("fleet", this.answerFleet(acks));
  }

  /** The fleet brought up to date a slice at a time (fleet-answer.ts), then its text to each who asked. */
  private *answerFleet(acks: AckFn[]): Job {
    this.fleetAnswering = acks;
    let raw: RawJson | undefined;
    try {
      const fleet = yield* currentFleet(this.core, this.deltas.fleetView);
      raw = new RawJson(yield* fleetJson(fleet));
      yield* raw.prepare(AFTER_ACK);
    } catch (err) {
      this.opts.log(`semscope hub: dashboard fleet:get failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    this.fleetAnswering = [];
    for (const ack of acks) reply(ack, raw === undefined ? INTERNAL_ERROR : { ok: true, fleet: raw });
  }

  private refuse(error: string): Ack {
    this.core.reject();
    return { ok: false, error };
  }

  private request(name: Exclude<RequestName, "snapshot:get" | "fleet:get">, payload: unknown): Ack {
    this.storeDeferred();
    const core = this.core;
    switch (name) {
      case "history:get": {
        const p = parsePayload(uiHistoryRequestSchema, payload);
        if (!p.ok) return this.refuse(p.error);
        const r = answer(historyView(core, p.value.key, p.value));
        return r.ok ? r : this.refuse(r.error);
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
    return this.job !== undefined;
  }

  /**
   * Runs `job` (a delta or a snapshot: one at a time) in the dashboards' part of the turns to
   * come; then whatever waited for it (idle()).
   */
  private start(kind: JobKind, job: Job): void {
    this.job = job;
    this.kind = kind;
    this.ended = false;
    this.turns.want(this.task);
  }

  /** The job's steps until `deadline`; once it ended, the next job is picked in the next call. True while there is more. */
  private slice(deadline: number): boolean {
    if (this.ended) {
      // Picked a turn after the ended job's last slice (that turn's budget may be spent), then
      // its first slice in what is left of this one.
      this.ended = false;
      contained(`dashboard ${this.kind}`, this.opts.log, undefined, () => this.idle(this.kind));
      if (this.job === undefined || performance.now() >= deadline) return this.job !== undefined;
    }
    const job = this.job;
    if (job === undefined) return false;
    let ended = true;
    try {
      const sliceMs = this.opts.sliceMs;
      ended = runUntil(job, sliceMs === undefined ? deadline : Math.min(deadline, performance.now() + sliceMs));
    } catch (err) {
      this.opts.log(`semscope hub: dashboard ${this.kind} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    if (this.job !== job) return this.job !== undefined;
    if (!ended) return true;
    this.job = undefined;
    this.ended = true;
    return true;
  }

  /**
   * Nothing is being built or sent: the next job, the kinds taken in turn after the one that ran
   * (a delta, a snapshot, a fleet:get answer), so none waits for more than one of each other kind.
   */
  private idle(after: JobKind): void {
    const order: readonly JobKind[] = after === "delta" ? ["snapshot", "fleet", "delta"] : after === "snapshot" ? ["fleet", "delta", "snapshot"] : ["delta", "snapshot", "fleet"];
    for (const kind of order) {
      if (this.busy) return;
      if (kind === "delta" && this.flushOwed) this.flush();
      else if (kind === "snapshot" && this.queued.length > 0) this.startBuild();
      else if (kind === "fleet" && this.fleetAsked.length > 0) this.startFleet();
    }
  }

  /** `w` gets a snapshot holding everything stored by now, and the deltas after it. */
  private wantSnapshot(w: Waiter): void {
    this.storeDeferred();
    const c = this.cached;
    const fresh =
      c !== undefined && c.seq === this.deltas.seq && this.core.changes.empty && performance.now() - c.at < CACHE_MS && JSON.stringify(this.core.hubInfo()) === c.hub;
    if (fresh && !this.busy) return this.start("snapshot", this.handOut(c.built, c.raw, [w]));
    this.queued.push(w);
    if (!this.busy) this.startBuild();
  }

  /** Builds one snapshot for everyone queued, and hands it out. */
  private startBuild(): void {
    const waiters = this.queued;
    this.queued = [];
    this.start("snapshot", this.buildAndHandOut(waiters));
  }

  private *buildAndHandOut(waiters: Waiter[]): Job {
    this.handing = { waiters, next: 0 };
    const seq = this.deltas.seq;
    let built: BuiltSnapshot;
    try {
      built = yield* buildSnapshot(this.core, seq, this.opts.deltaIntervalMs, this.deltas.fleetView);
    } catch (err) {
      this.opts.log(`semscope hub: dashboard snapshot failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      this.handing = undefined;
      for (const w of waiters) if (w.ack === undefined) w.socket.disconnect(true);
      else reply(w.ack, INTERNAL_ERROR);
      return;
    }
    this.builds++;
    const raw = new RawJson(built.json);
    this.cached = { built, raw, seq, hub: JSON.stringify(this.core.hubInfo()), at: performance.now() };
    yield* this.handOut(built, raw, waiters);
  }

  /**
   * Sends `raw` to the dashboards waiting for it, one per slice at most (each copies a few MB):
   * a `snapshot` event to new connections, an answer to each `snapshot:get`. No delta goes out
   * until all are sent, so each dashboard gets the deltas after its snapshot and no other.
   */
  private *handOut(built: BuiltSnapshot, raw: RawJson, waiters: readonly Waiter[]): Job {
    const handing = { waiters, next: 0 };
    this.handing = handing;
    yield* this.deltas.taken(built, false, this.live === 0);
    if (waiters.some((w) => w.ack === undefined)) yield* raw.prepare(AFTER_EVENT);
    if (waiters.some((w) => w.ack !== undefined)) yield* raw.prepare(AFTER_ACK);
    for (const w of waiters) {
      handing.next++;
      if (!w.socket.connected) continue;
      if (w.ack === undefined) w.socket.emit("snapshot", raw as unknown as UiSnapshot);
      else reply(w.ack, { ok: true, snapshot: raw });
      this.joined(w.socket);
      yield;
    }
    this.handing = undefined;
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
    // Those changes are dropped: the fleet is computed whole.
    this.deltas.fleetView.clear();
    // Whatever was built or queued describes the hub before the jump: everyone gets this one instead.
    const answers = [...(this.handing?.waiters.slice(this.handing.next) ?? []), ...this.queued].filter((w) => w.ack !== undefined);
    const fleetAsked = [...this.fleetAnswering, ...this.fleetAsked];
    this.job = undefined;
    this.handing = undefined;
    this.queued = [];
    this.fleetAsked = [];
    this.fleetAnswering = [];
    // A fleet:get's watch, if one was under way: its answer is made below.
    this.core.changes.unwatch();
    this.flushOwed = false;
    const seq = this.deltas.seq;
    const built = runToEnd(buildSnapshot(this.core, seq, this.opts.deltaIntervalMs, this.deltas.fleetView));
    this.builds++;
    const raw = new RawJson(built.json);
    this.cached = { built, raw, seq, hub: JSON.stringify(this.core.hubInfo()), at: performance.now() };
    runToEnd(this.deltas.taken(built, true, true));
    this.nsp.emit("snapshot", raw as unknown as UiSnapshot);
    for (const socket of this.nsp.sockets.values()) this.joined(socket);
    for (const w of answers) if (w.socket.connected) reply(w.ack, { ok: true, snapshot: raw });
    // The snapshot's build brought the fleet view up to date with the hub after the jump.
    if (fleetAsked.length > 0) {
      const fleet = this.deltas.fleetView.list();
      for (const ack of fleetAsked) reply(ack, { ok: true, fleet });
    }
  }

  /** One delta for every dashboard: what changed since the last one. Runs on the timer. */
  flush(): void {
    if (this.busy) {
      this.flushOwed = true;
      return;
    }
    this.flushOwed = false;
    this.storeDeferred();
    const unchanged = this.core.changes.empty;
    // Taken even with nobody listening, so the tracker never grows.
    const changes = this.core.changes.take();
    // Checked every tick, changes or not: a dashboard can fall behind on its own requests too.
    for (const socket of this.nsp.sockets.values()) if (this.behind(socket)) this.drop(socket);
    if (this.live === 0) {
      // No delta will ever say what changed: a snapshot built before it is not one to serve again.
      if (!unchanged) this.cached = undefined;
      return this.deltas.clear();
    }
    this.start("delta", this.sendDelta(changes));
  }

  /** Builds the delta a slice at a time, then sends its text to each live dashboard, one per slice at most. */
  private *sendDelta(changes: Changes): Job {
    const delta = yield* this.deltas.build(changes);
    if (delta === undefined) return;
    const raw = new RawJson(delta.json);
    yield* raw.prepare(AFTER_EVENT);
    const ids = [...(this.nsp.adapter.rooms.get(LIVE) ?? [])];
    for (const id of ids) {
      const socket = this.nsp.sockets.get(id);
      if (socket === undefined || !socket.connected) continue;
      socket.emit("delta", raw as unknown as UiDelta);
      yield;
    }
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
