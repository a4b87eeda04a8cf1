// The socket to the hub, and the reconnect loop around it. socket.io-client's own reconnection
// is off, because: its backoff caps after jittering, so past the cap a fleet retries in lockstep
// (backoff.ts); it does not retry a handshake the hub refused (unauthorized, unsupported_protocol)
// while a fixed token or an upgraded hub may be one retry away; it buffers emits while
// reconnecting, a buffer we do not bound; and it counts a connection as up at the transport, where
// ours waits for the hub's hello ack. Everything socket.io calls back into is guarded: an
// exception there would surface as an uncaught exception in the host.
import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import { io, type Socket } from "socket.io-client";
import {
  AGENT_NAMESPACE,
  PROTOCOL_VERSION,
  type AgentToHubEvents,
  type HandshakeAuth,
  type Hello,
  type HubToAgentEvents,
} from "../../../shared/protocol/types.js";
import { Backoff } from "./backoff.js";
import { guard } from "./guard.js";
import type { Link } from "./outbox.js";
import { RefusalAwareWebSocket } from "./refusal-websocket.js";

/** A connection attempt (TCP + websocket handshake) that takes longer is abandoned and retried. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** The hub answers hello at once; no answer means it is not usable, so the connection is retried. */
export const HELLO_TIMEOUT_MS = 10_000;
/** WebSocket close code for "message too big": the hub closed us for a packet over its limit. */
const WS_MESSAGE_TOO_BIG = 1009;

export type Phase = "idle" | "connecting" | "handshaking" | "ready" | "closed";

export interface DownCause {
  reason: string;
  /** The hub closed the connection because a packet was over its size limit. */
  closedForSize: boolean;
  /** The connection died under us (not a clean disconnect by either side). */
  transport: boolean;
}

export interface ConnectionConfig {
  url: string;
  token: string | undefined;
  hello: Hello;
  random?: () => number;
}

export interface ConnectionEvents {
  /** Past hello; `features`: what of the hello's features the hub's ack accepted. */
  onReady(features: readonly string[]): void;
  onDown(cause: DownCause): void;
  /** A connection attempt failed (hub unreachable, or it refused the handshake). */
  onConnectError(message: string): void;
  /** The hub asked for a flight recorder ring (payload unchecked). */
  onFlightRequest?(payload: unknown): void;
}

type AgentSocket = Socket<HubToAgentEvents, AgentToHubEvents>;
type Done = (err: Error | null, ack: unknown) => void;

export class Connection implements Link {
  private readonly socket: AgentSocket;
  private readonly backoff: Backoff;
  private phaseNow: Phase = "idle";
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped per connection, so answers meant for an earlier one are recognised and ignored. */
  epoch = 0;
  /** When set, a lost connection is not retried (the agent is closing). */
  noRetry = false;
  lastError: string | null = null;
  readyCount = 0;

  constructor(
    private readonly config: ConnectionConfig,
    private readonly events: ConnectionEvents,
  ) {
    this.backoff = new Backoff(config.random ?? Math.random);
    const auth: HandshakeAuth = { protocol: PROTOCOL_VERSION, ...(config.token !== undefined ? { token: config.token } : {}) };
    this.socket = io(`${config.url}${AGENT_NAMESPACE}`, {
      autoConnect: false,
      reconnection: false,
      forceNew: true,
      // WebSocket only: one connection, no polling round trips, and a close for size is
      // recognisable (code 1009) so the message that caused it can be dropped, not re-sent. A
      // handshake the hub refuses with an HTTP answer gives its reason (refusal-websocket.ts).
      transports: [RefusalAwareWebSocket],
      timeout: CONNECT_TIMEOUT_MS,
      auth,
      // Unref'd socket and timers: a connected agent never keeps the host's process alive.
      autoUnref: true,
      // engine.io-client types `agent` for browsers (string | boolean); in Node it is handed to ws.
      agent: unrefAgent(config.url) as unknown as string,
    });
    this.socket.on("connect", () => guard(() => this.onConnect()));
    this.socket.on("disconnect", (reason, details) => guard(() => this.onDisconnect(reason, details)));
    this.socket.on("connect_error", (err) => guard(() => this.onConnectError(err)));
    this.socket.on("flight_request", (payload) => guard(() => {
      if (this.phaseNow === "ready") this.events.onFlightRequest?.(payload);
    }));
  }

  get phase(): Phase {
    return this.phaseNow;
  }

  get ready(): boolean {
    return this.phaseNow === "ready";
  }

  /** Connects now unless already connecting or connected (also cuts a pending backoff short). */
  open(): void {
    if (this.phaseNow !== "idle") return;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.phaseNow = "connecting";
    this.socket.connect();
  }

  send(event: keyof AgentToHubEvents, payload: unknown, timeoutMs: number, done: Done): void {
    if (this.phaseNow !== "ready" && !(event === "hello" && this.phaseNow === "handshaking")) {
      done(new Error("not connected"), undefined);
      return;
    }
    // One untyped emit for the four events: each payload is built from its own protocol type.
    const emitter = this.socket.timeout(timeoutMs) as unknown as { emit(ev: string, p: unknown, cb: (err: Error | null, ack: unknown) => void): void };
    try {
      emitter.emit(event, payload, (err, ack) => guard(() => done(err ?? null, ack)));
    } catch (err) {
      // The payload could not be serialised (only an exotic adapter value could do that).
      done(err instanceof Error ? err : new Error(String(err)), undefined);
    }
  }

  close(): void {
    this.noRetry = true;
    this.phaseNow = "closed";
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.socket.disconnect();
  }

  private onConnect(): void {
    if (this.phaseNow === "closed") return;
    this.phaseNow = "handshaking";
    const epoch = ++this.epoch;
    this.send("hello", this.config.hello, HELLO_TIMEOUT_MS, (err, ack) => {
      if (epoch !== this.epoch || this.phaseNow !== "handshaking") return;
      const a = ack as { ok?: unknown; error?: unknown } | undefined;
      if (err !== null || a?.ok === false) {
        this.lastError = err !== null ? `hello: ${err.message}` : `hello refused: ${String(a?.error)}`;
        // Dropping the connection lets the retry loop try again later, with backoff.
        this.socket.disconnect();
        return;
      }
      this.phaseNow = "ready";
      this.readyCount++;
      this.backoff.reset();
      const features = (ack as { features?: unknown } | undefined)?.features;
      this.events.onReady(Array.isArray(features) ? features.filter((f): f is string => typeof f === "string") : []);
    });
  }

  private onDisconnect(reason: string, details: unknown): void {
    if (this.phaseNow === "closed") return;
    this.phaseNow = "idle";
    this.epoch++;
    const code = (details as { context?: { code?: unknown } } | undefined)?.context?.code;
    this.events.onDown({
      reason,
      closedForSize: code === WS_MESSAGE_TOO_BIG,
      transport: reason === "transport close" || reason === "transport error" || reason === "ping timeout",
    });
    this.scheduleRetry();
  }

  private onConnectError(err: Error): void {
    if (this.phaseNow === "closed") return;
    this.phaseNow = "idle";
    this.lastError = err.message;
    this.events.onConnectError(err.message);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.noRetry || this.phaseNow !== "idle" || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      guard(() => this.open());
    }, this.backoff.next());
    this.retryTimer.unref();
  }
}

/**
 * An http(s) Agent whose sockets are unref'd from the start: even a connection attempt to a host
 * that never answers does not keep the process alive (ws's autoUnref only acts once it is open).
 */
function unrefAgent(url: string): http.Agent {
  const Base = url.startsWith("https:") ? https.Agent : http.Agent;
  const agent = new Base({ keepAlive: false });
  const create = agent.createConnection.bind(agent);
  agent.createConnection = (options, callback) => {
    const socket = create(options, callback);
    (socket as (Duplex & { unref?: () => void }) | null | undefined)?.unref?.();
    return socket;
  };
  return agent;
}
