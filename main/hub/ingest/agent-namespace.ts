// Namespace /agent: handshake auth, then one AgentSession per connection, whose messages run on
// the shared AgentScheduler (its lane: in order, a fair share, a work budget). A hostile agent can
// only get refusals and its share: no handler throws, none waits, and no message of one
// connection touches another.
import type { Namespace, Server, Socket } from "socket.io";
import { AGENT_NAMESPACE, type AgentToHubEvents, type HubToAgentEvents } from "../../../shared/protocol/index.js";
import { AgentScheduler, Lane, type Item, type Transport } from "./agent-scheduler.js";
import type { Ack } from "../../../shared/protocol/index.js";
import { AGENT_EVENTS, AgentSession, isAgentEvent, type AgentEventName, type Job } from "./agent-session.js";
import type { TokenCheck } from "../auth.js";
import type { HubCore } from "../core/hub-core.js";
import { AddressBudgets, CombinedBudget } from "./rate-limit.js";
import { contained, reply, splitArgs } from "../socket/listener.js";
import { TokenBucket } from "../socket/token-bucket.js";
import { Admission, type AdmissionLimits } from "./admission.js";
import { HelloGate, type HelloLimits } from "./hello-gate.js";

/**
 * Pausing a WebSocket stops reading its TCP socket (ws's pause()), so what the lane cannot yet
 * afford stays in the kernel and then with the sender. Long-polling cannot be paused this way.
 */
function transportOf(socket: Socket): Transport {
  let paused: { resume(): void } | undefined;
  const ws = () => {
    const t = socket.conn.transport as unknown as { name?: string; socket?: { pause?: () => void; resume?: () => void } };
    return t.name === "websocket" && typeof t.socket?.pause === "function" && typeof t.socket.resume === "function"
      ? (t.socket as { pause(): void; resume(): void })
      : undefined;
  };
  return {
    pausable: () => ws() !== undefined,
    pause() {
      if (paused !== undefined) return;
      const w = ws();
      w?.pause();
      paused = w;
    },
    resume() {
      const ws = paused;
      paused = undefined;
      ws?.resume();
    },
  };
}

/** The items a message carries (samples, events, a register's semaphores, a flight's ops), as sent: its cost to the hub beyond itself. */
function listLength(event: string, payload: unknown): number {
  if (typeof payload !== "object" || payload === null) return 0;
  const list =
    event === "register"
      ? (payload as { semaphores?: unknown }).semaphores
      : event === "flight"
        ? (payload as { ops?: unknown }).ops
        : (payload as { items?: unknown }).items;
  // A list over the limit is refused at its length check, which costs nothing more.
  return Array.isArray(list) ? Math.min(list.length, 1001) : 0;
}

/** One message on its lane (a class, not closures: a few hundred thousand a minute on a busy hub). */
class Message implements Item {
  readonly claims: string | undefined;

  constructor(
    private readonly session: AgentSession,
    /** undefined: an event name the protocol does not have. */
    private readonly event: AgentEventName | undefined,
    private readonly payload: unknown,
    readonly ack: ((answer: unknown) => void) | undefined,
    /** Called when a hello is taken: the connection is past hello. */
    private readonly helloTaken: () => void,
  ) {
    const service = event === "hello" ? (payload as { service?: unknown } | null | undefined)?.service : undefined;
    this.claims = typeof service === "string" ? service : undefined;
  }

  run(): Ack | Job {
    return this.event === undefined ? this.session.unknown() : this.session.process(this.event, this.payload);
  }

  answer(a: Ack): void {
    if (this.event === "hello" && a.ok) this.helloTaken();
    reply(this.ack, a);
  }
}

export interface AgentLimits {
  rate: { perSecond: number; burst: number };
  budget: { itemsPerSecond: number; burst: number };
  /** Shared by every connection from one remote address. */
  addressBudget: { itemsPerSecond: number; burst: number };
  /** Agents and semaphores held, per remote address and in all (admission.ts), and connections not yet past hello (hello-gate.ts). */
  admission: AdmissionLimits & HelloLimits;
}

export function attachAgentNamespace(
  io: Server,
  core: HubCore,
  tokens: TokenCheck,
  limits: AgentLimits,
  scheduler: AgentScheduler,
  log: (line: string) => void,
): Namespace<AgentToHubEvents, HubToAgentEvents> {
  const nsp: Namespace<AgentToHubEvents, HubToAgentEvents> = io.of(AGENT_NAMESPACE);
  let connections = 0;
  const addresses = new AddressBudgets(limits.addressBudget.itemsPerSecond, limits.addressBudget.burst);
  const admission = new Admission(core, limits.admission);
  const gate = new HelloGate(limits.admission);
  core.admission = () => gate.admission(admission.info());

  nsp.use((socket, next) => {
    const unauthorized = tokens.refuseHandshake(socket.handshake.auth);
    const capped = unauthorized === null ? gate.refuse(socket.handshake.address) : null;
    const why = unauthorized ?? capped;
    if (why === null) return next();
    core.stats.handshakesRefused++;
    core.reject();
    next(new Error(why));
    // Over a pending cap the connection goes too, unless it carries another namespace: after the
    // refusal, which socket.io writes on the next tick (close() then waits for it to drain).
    if (capped === null) return;
    setImmediate(() => {
      if ((socket.client as unknown as { sockets: Map<unknown, unknown> }).sockets.size === 0) socket.conn.close();
    });
  });

  nsp.on("connection", (socket) => {
    const address = socket.handshake.address;
    const connection = ++connections;
    admission.opened(connection);
    gate.opened(connection, address, () => {
      log(`semscope hub: closed an agent connection from ${address}: no hello within ${limits.admission.helloTimeoutMs} ms`);
      socket.disconnect(true);
    });
    const helloTaken = () => gate.settled(connection);
    const session = new AgentSession(core, connection, limits.rate, (request) => socket.emit("flight_request", request), { admission, address });
    const budget = new CombinedBudget([new TokenBucket(limits.budget.itemsPerSecond, limits.budget.burst), addresses.acquire(address)]);
    const lane = scheduler.add(new Lane(session, transportOf(socket), budget));
    /** Rate first, as it arrives; then in order, on the lane. */
    const submit = (item: Message, cost: number) => {
      const refused = contained("agent message", log, null as Ack | null, () => session.admit());
      if (refused !== null) return reply(item.ack, refused);
      if (!scheduler.push(lane, item, cost)) reply(item.ack, contained("agent message", log, null as Ack | null, () => session.busy()));
    };
    for (const event of AGENT_EVENTS) {
      socket.on(event, (...args: unknown[]) => {
        const { payload, ack } = splitArgs(args);
        submit(new Message(session, event, payload, ack, helloTaken), 1 + listLength(event, payload));
      });
    }
    socket.onAny((event: unknown, ...args: unknown[]) => {
      if (typeof event === "string" && isAgentEvent(event)) return;
      submit(new Message(session, undefined, undefined, splitArgs(args).ack, helloTaken), 1);
    });
    socket.on("error", () => session.decodeError());
    socket.on("disconnect", (reason, description) => {
      // Counted at once; the agent goes down after what it sent before.
      gate.settled(connection);
      contained("agent disconnect", log, undefined, () => session.closing(reason, description));
      scheduler.end(lane, {
        run: () => {
          addresses.release(address);
          session.closed();
          return { ok: true };
        },
        answer: () => undefined,
      });
    });
  });
  return nsp;
}
