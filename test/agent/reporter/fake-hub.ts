// A minimal hub for the reporter's tests: a real socket.io server on 127.0.0.1 that checks the
// handshake, validates every payload with the protocol's zod schemas and acks per docs/protocol.md.
// What it received survives stop()/start(), so a test can restart it and look for gaps and
// duplicates across the outage.
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import {
  AGENT_NAMESPACE,
  agentPayloadSchemas,
  LIMITS,
  parsePayload,
  PROTOCOL_VERSION,
  type AgentEvent,
  type Register,
  type SamplesBatch,
} from "../../../shared/protocol/index.js";

type AgentEventName = keyof typeof agentPayloadSchemas;

export interface Received {
  event: AgentEventName;
  payload: unknown;
  /** One per connection: a reconnect gets a new one. */
  socketId: string;
  at: number;
}

export interface FakeHubOptions {
  port?: number;
  token?: string;
  /** "never": handlers record but never call the ack (a broken hub); "hello-only": only hello is acked. */
  ackMode?: "normal" | "never" | "hello-only";
  maxHttpBufferSize?: number;
  /**
   * Close the connection, with no telling close code, on any message whose JSON is over this many
   * bytes: what a proxy with a smaller limit in front of the hub would do.
   */
  closeTransportOver?: number;
  /** Features its hello ack accepts (as a hub that has them); absent: none, as an older hub. */
  features?: string[];
  /** Refuse a valid message with ok:false and this reason (to test how refusals are handled). */
  refuse?: (event: AgentEventName, payload: unknown) => string | undefined;
}

export class FakeHub {
  port: number;
  readonly log: Received[] = [];
  /** Payloads that failed the schemas; a correct agent leaves this empty. */
  readonly invalid: { event: string; error: string }[] = [];
  /** Accepted sample batches per agentId, by seq (duplicates are acked and ignored, as the hub does). */
  readonly batches = new Map<string, Map<number, SamplesBatch>>();
  readonly registers: Register[] = [];
  readonly events: AgentEvent[] = [];
  duplicates = 0;
  rejected = 0;
  connections = 0;
  handshakeErrors = 0;
  /** Connections closed by closeTransportOver. */
  closedForSize = 0;
  private http: HttpServer | undefined;
  private io: Server | undefined;

  constructor(private readonly options: FakeHubOptions = {}) {
    this.port = options.port ?? 0;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const http = createServer();
    const io = new Server(http, { maxHttpBufferSize: this.options.maxHttpBufferSize ?? LIMITS.maxPacketBytes });
    io.of(AGENT_NAMESPACE).use((socket, next) => {
      const auth = socket.handshake.auth as { protocol?: unknown; token?: unknown };
      if (this.options.token !== undefined && auth.token !== this.options.token) {
        this.handshakeErrors++;
        next(new Error("unauthorized"));
      } else if (auth.protocol !== PROTOCOL_VERSION) {
        this.handshakeErrors++;
        next(new Error("unsupported_protocol"));
      } else next();
    });
    io.of(AGENT_NAMESPACE).on("connection", (socket) => {
      this.connections++;
      let agentId: string | undefined;
      for (const event of Object.keys(agentPayloadSchemas) as AgentEventName[]) {
        socket.on(event, (payload: unknown, ack: unknown) => {
          this.log.push({ event, payload, socketId: socket.id, at: Date.now() });
          const over = this.options.closeTransportOver;
          if (over !== undefined && Buffer.byteLength(JSON.stringify(payload)) > over) {
            this.closedForSize++;
            socket.conn.close();
            return;
          }
          const mode = this.options.ackMode ?? "normal";
          const reply = (answer: object) => {
            if (mode === "never" || (mode === "hello-only" && event !== "hello")) return;
            if (typeof ack === "function") (ack as (a: object) => void)(answer);
          };
          const parsed = parsePayload(agentPayloadSchemas[event], payload);
          if (!parsed.ok) {
            this.invalid.push({ event, error: parsed.error });
            this.rejected++;
            return reply({ ok: false, error: parsed.error });
          }
          if (event !== "hello" && agentId === undefined) {
            this.rejected++;
            return reply({ ok: false, error: "hello first" });
          }
          const refusal = this.options.refuse?.(event, payload);
          if (refusal !== undefined) {
            this.rejected++;
            return reply({ ok: false, error: refusal });
          }
          switch (event) {
            case "hello":
              agentId = (payload as { agentId: string }).agentId;
              return reply({ ok: true, hubVersion: "fake-hub", serverTime: Date.now(), ...(this.options.features !== undefined ? { features: this.options.features } : {}) });
            case "register":
              this.registers.push(payload as Register);
              return reply({ ok: true });
            case "samples": {
              const batch = payload as SamplesBatch;
              let seen = this.batches.get(agentId as string);
              if (seen === undefined) this.batches.set(agentId as string, (seen = new Map()));
              if (seen.has(batch.seq)) this.duplicates++;
              else seen.set(batch.seq, batch);
              return reply({ ok: true, seq: batch.seq });
            }
            case "events":
              this.events.push(...(payload as { items: AgentEvent[] }).items);
              return reply({ ok: true });
          }
        });
      }
    });
    await new Promise<void>((resolve, reject) => {
      http.once("error", reject);
      http.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (http.address() as AddressInfo).port;
    this.http = http;
    this.io = io;
    return this;
  }

  /** Closes every connection and the port; what was received is kept. */
  async stop(): Promise<void> {
    const io = this.io;
    this.io = undefined;
    this.http = undefined;
    if (io === undefined) return;
    await new Promise<void>((resolve) => {
      io.close(() => resolve());
    });
  }

  /** Seqs received from one agent, ascending. */
  seqs(agentId: string): number[] {
    return [...(this.batches.get(agentId)?.keys() ?? [])].sort((a, b) => a - b);
  }

  received(event: AgentEventName): Received[] {
    return this.log.filter((r) => r.event === event);
  }
}

/** Polls until `check` holds (or throws with `what` after timeoutMs). */
export async function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A port nothing listens on: bound, read and released. */
export async function deadPort(): Promise<number> {
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  const port = (http.address() as AddressInfo).port;
  await new Promise<void>((resolve) => http.close(() => resolve()));
  return port;
}
