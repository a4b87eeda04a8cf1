// Namespace /agent: handshake auth, then one AgentSession per connection. A hostile agent can
// only get refusals: no handler throws, none waits, and no message of one connection touches another.
import type { Namespace, Server } from "socket.io";
import { AGENT_NAMESPACE, type AgentToHubEvents, type HubToAgentEvents } from "../../shared/protocol/index.js";
import { AGENT_EVENTS, AgentSession, isAgentEvent } from "./agent-session.js";
import type { TokenCheck } from "./auth.js";
import type { HubCore } from "./hub-core.js";

/** socket.io appends the ack callback as the last argument, when the client asked for one. */
export function splitArgs(args: unknown[]): { payload: unknown; ack: ((answer: unknown) => void) | undefined } {
  const last = args.at(-1);
  if (typeof last === "function") {
    return { payload: args.length > 1 ? args[0] : undefined, ack: last as (answer: unknown) => void };
  }
  return { payload: args[0], ack: undefined };
}

export function reply(ack: ((answer: unknown) => void) | undefined, answer: unknown): void {
  if (ack === undefined) return;
  try {
    ack(answer);
  } catch {
    // An answer that cannot be sent (connection gone) is nothing the hub can act on.
  }
}

/**
 * Runs a handler so that a bug in it costs one message, not the process: socket.io calls
 * listeners synchronously from the socket's data handler, where a throw would be uncaught.
 */
export function contained<T>(what: string, log: (line: string) => void, fallback: T, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    log(`semscope hub: ${what} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return fallback;
  }
}

const INTERNAL_ERROR = { ok: false, error: "internal error" } as const;

export function attachAgentNamespace(
  io: Server,
  core: HubCore,
  tokens: TokenCheck,
  rate: { perSecond: number; burst: number },
  log: (line: string) => void,
): Namespace<AgentToHubEvents, HubToAgentEvents> {
  const nsp: Namespace<AgentToHubEvents, HubToAgentEvents> = io.of(AGENT_NAMESPACE);
  let connections = 0;

  nsp.use((socket, next) => {
    const why = tokens.refuseHandshake(socket.handshake.auth);
    if (why === null) return next();
    core.stats.handshakesRefused++;
    core.reject();
    next(new Error(why));
  });

  nsp.on("connection", (socket) => {
    const session = new AgentSession(core, ++connections, rate);
    for (const event of AGENT_EVENTS) {
      socket.on(event, (...args: unknown[]) => {
        const { payload, ack } = splitArgs(args);
        reply(ack, contained(`agent ${event}`, log, INTERNAL_ERROR, () => session.handle(event, payload)));
      });
    }
    socket.onAny((event: unknown, ...args: unknown[]) => {
      if (typeof event === "string" && isAgentEvent(event)) return;
      reply(splitArgs(args).ack, contained("agent message", log, INTERNAL_ERROR, () => session.unknown()));
    });
    socket.on("error", () => session.decodeError());
    socket.on("disconnect", (reason, description) => contained("agent disconnect", log, undefined, () => session.closed(reason, description)));
  });
  return nsp;
}
