// The dashboard's socket.io connection to the hub's /ui namespace: a snapshot on every connect,
// then deltas in seq order; a gap in seq means a delta was lost, so the client asks for a fresh
// snapshot (snapshot:get) and replays whatever arrived meanwhile. Requests go out with acks and
// a timeout; their answers are checked for ok:false here, so callers get a value or an Error.
import { io, type Socket } from "socket.io-client";
import { PROTOCOL_VERSION, UI_NAMESPACE } from "../../../shared/protocol/types.js";
import type { Ack } from "../../../shared/protocol/types.js";
import type { HubToUiEvents, UiDelta, UiSnapshot, UiToHubEvents } from "../../../shared/ui-protocol/types.js";
import type { DashboardStore } from "./dashboard-store.js";
import type { HubTarget } from "./hub-target.js";

type AckOf<E extends keyof UiToHubEvents> = UiToHubEvents[E] extends (req: never, ack: (a: Ack<infer T>) => void) => void ? T : never;
type ReqOf<E extends keyof UiToHubEvents> = Parameters<UiToHubEvents[E]>[0];

/** What socket.io's typed emitWithAck cannot express for a union of events. */
interface LooseEmitter {
  timeout(ms: number): { emitWithAck(event: string, payload: unknown): Promise<unknown> };
}

export const REQUEST_TIMEOUT_MS = 10_000;
/** A snapshot is built a slice at a time, once for all who asked (docs/protocol.md): on a busy hub it takes longer. */
const SNAPSHOT_TIMEOUT_MS = 60_000;
/** A refused handshake (other than for the token) is retried this long after. */
const RETRY_REFUSED_MS = 3000;

export class UiClient {
  private socket: Socket<HubToUiEvents, UiToHubEvents> | null = null;
  /** Deltas that arrived while a resync snapshot was on its way. */
  private pending: UiDelta[] | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: DashboardStore,
    private target: HubTarget,
  ) {}

  get hubUrl(): string {
    return this.target.url;
  }

  start(): void {
    this.stop();
    const target = this.target;
    this.store.setConnection({ phase: "connecting", url: target.url, error: null, attempts: 0, hasToken: target.token !== null });
    const socket: Socket<HubToUiEvents, UiToHubEvents> = io(`${target.url}${UI_NAMESPACE}`, {
      // A function, so a reconnect presents the token in force then.
      auth: (cb) => cb(this.target.token !== null ? { protocol: PROTOCOL_VERSION, token: this.target.token } : { protocol: PROTOCOL_VERSION }),
      reconnectionDelay: 500,
      reconnectionDelayMax: 5000,
      forceNew: true,
    });
    this.socket = socket;

    socket.on("snapshot", (snap) => this.onSnapshot(snap));
    socket.on("delta", (d) => this.onDelta(d));
    socket.on("connect", () => this.store.setConnection({ error: null }));
    socket.on("disconnect", (reason) => {
      this.pending = null;
      if (reason === "io client disconnect") return;
      this.store.setConnection({ phase: "reconnecting", error: reason });
      // The hub closed us on purpose (e.g. we fell behind): socket.io does not retry that by itself.
      if (reason === "io server disconnect") socket.connect();
    });
    socket.on("connect_error", (err) => {
      const message = err.message;
      if (message === "unauthorized") {
        socket.disconnect();
        this.store.setConnection({ phase: "unauthorized", error: message });
        return;
      }
      if (message === "unsupported_protocol") {
        socket.disconnect();
        this.store.setConnection({ phase: "refused", error: "the hub speaks another protocol version" });
        return;
      }
      const attempts = this.store.connection.attempts + 1;
      this.store.setConnection({ phase: this.store.hasSnapshot ? "reconnecting" : "connecting", error: message, attempts });
      // A refusal by the namespace's middleware is final for socket.io; anything else it retries.
      if (!socket.active) this.retryTimer = setTimeout(() => socket.connect(), RETRY_REFUSED_MS);
    });
  }

  stop(): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.socket?.removeAllListeners();
    this.socket?.disconnect();
    this.socket = null;
    this.pending = null;
  }

  /** Connect again with another token (the token form). */
  reconnectWith(token: string | null): void {
    this.target = { ...this.target, token };
    this.start();
  }

  async request<E extends keyof UiToHubEvents>(event: E, payload: ReqOf<E>, timeoutMs = REQUEST_TIMEOUT_MS): Promise<AckOf<E>> {
    const socket = this.socket;
    if (socket === null) throw new Error("not connected");
    const ack = (await (socket as unknown as LooseEmitter).timeout(timeoutMs).emitWithAck(event, payload)) as Ack<AckOf<E>>;
    if (!ack.ok) throw new Error(ack.error);
    return ack as AckOf<E>;
  }

  private onSnapshot(snap: UiSnapshot): void {
    this.store.applySnapshot(snap);
    this.store.setConnection({ phase: "live", error: null, attempts: 0 });
  }

  private onDelta(d: UiDelta): void {
    if (this.pending !== null) {
      this.pending.push(d);
      return;
    }
    if (!this.store.hasSnapshot || d.seq <= this.store.lastSeq) return;
    if (d.seq !== this.store.lastSeq + 1) {
      void this.resync(d);
      return;
    }
    if (!this.store.applyDelta(d)) void this.resync(d);
  }

  private async resync(first: UiDelta): Promise<void> {
    this.pending = [first];
    try {
      const { snapshot } = await this.request("snapshot:get", {}, SNAPSHOT_TIMEOUT_MS);
      this.store.applySnapshot(snapshot);
    } catch {
      // No snapshot: a fresh connection brings one.
      this.pending = null;
      this.socket?.disconnect().connect();
      return;
    }
    const queued = (this.pending ?? []).sort((a, b) => a.seq - b.seq);
    this.pending = null;
    for (const d of queued) this.onDelta(d);
  }
}
