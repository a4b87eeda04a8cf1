// One agent connection: rate, hello-first, schema, then the hub core. Every message gets exactly
// one answer (the ack), and every refusal is counted; nothing here throws or waits.
import { agentPayloadSchemas, parsePayload, type AgentToHubEvents } from "../../shared/protocol/index.js";
import type { AgentRecord, HubCore } from "./hub-core.js";
import { TokenBucket } from "./rate-limit.js";

/** An answer to any message: what each event adds on ok:true is in its ack type. */
export type AnyAck = { ok: true; [field: string]: unknown } | { ok: false; error: string };

export type AgentEventName = keyof AgentToHubEvents;
export const AGENT_EVENTS = Object.keys(agentPayloadSchemas) as AgentEventName[];

export function isAgentEvent(name: string): name is AgentEventName {
  return Object.hasOwn(agentPayloadSchemas, name);
}

/**
 * How a connection's close reads (engine.io's reason and description): over maxHttpBufferSize,
 * a WebSocket fails with ws's "Max payload size exceeded" (close code 1009) and polling with
 * "payload too large" (HTTP 413).
 */
export function closedForSize(reason: string, description: unknown): boolean {
  if (reason !== "transport error" && reason !== "transport close") return false;
  return /max payload size exceeded|payload too large|\b1009\b/i.test(describe(description));
}

function describe(d: unknown, depth = 0): string {
  if (d === null || d === undefined || depth > 3) return "";
  if (typeof d === "string" || typeof d === "number") return String(d);
  if (typeof d !== "object") return "";
  const o = d as { message?: unknown; description?: unknown; code?: unknown; context?: unknown };
  return [o.message, o.code, describe(o.description, depth + 1)].filter((x) => typeof x === "string" || typeof x === "number").join(" ");
}

export class AgentSession {
  private rec: AgentRecord | undefined;
  private undecodable = false;
  private readonly bucket: TokenBucket;

  constructor(
    private readonly core: HubCore,
    readonly connection: number,
    rate: { perSecond: number; burst: number },
  ) {
    this.bucket = new TokenBucket(rate.perSecond, rate.burst);
  }

  get agentId(): string | undefined {
    return this.rec?.agentId;
  }

  handle(event: AgentEventName, payload: unknown): AnyAck {
    // Refused for rate before anything else costs time; it does not touch the engine either
    // (the messages within the rate already prove the agent alive).
    if (!this.bucket.take()) {
      this.core.stats.rateLimited++;
      return this.refuse("rate limit exceeded", false);
    }
    if (event === "hello") return this.hello(payload);
    const rec = this.rec;
    if (rec === undefined) return this.refuse("hello first", false);
    switch (event) {
      case "register": {
        const p = parsePayload(agentPayloadSchemas.register, payload);
        if (!p.ok) return this.refuse(p.error, true);
        this.core.register(rec, p.value);
        return { ok: true };
      }
      case "samples": {
        const p = parsePayload(agentPayloadSchemas.samples, payload);
        if (!p.ok) return this.refuse(p.error, true);
        const out = this.core.samples(rec, p.value);
        if (!out.ok) return this.refuse(out.error, true);
        return { ok: true, seq: p.value.seq };
      }
      case "events": {
        const p = parsePayload(agentPayloadSchemas.events, payload);
        if (!p.ok) return this.refuse(p.error, true);
        const out = this.core.events(rec, p.value);
        return out.ok ? out : this.refuse(out.error, true);
      }
    }
    return this.refuse("unknown event", true);
  }

  /** An event name the protocol does not have. */
  unknown(): AnyAck {
    if (!this.bucket.take()) {
      this.core.stats.rateLimited++;
      return this.refuse("rate limit exceeded", false);
    }
    return this.refuse("unknown event", true);
  }

  /** socket.io could not decode a packet; it closes the connection next. */
  decodeError(): void {
    this.undecodable = true;
  }

  /** The connection closed; `reason`/`description` as engine.io gives them. */
  closed(reason: string, description: unknown): void {
    if (closedForSize(reason, description)) {
      // The message that was too big is one the hub refused.
      this.core.stats.closedForSize++;
      this.core.reject();
    } else if (this.undecodable || reason === "parse error" || reason === "forced server close") {
      // A packet socket.io could not decode or place: refused too, with the connection.
      this.core.reject();
    }
    if (this.rec !== undefined) this.core.disconnect(this.connection, this.rec);
  }

  private hello(payload: unknown): AnyAck {
    const p = parsePayload(agentPayloadSchemas.hello, payload);
    if (!p.ok) return this.refuse(p.error, true);
    if (this.rec !== undefined && this.rec.agentId !== p.value.agentId) {
      return this.refuse("hello already received for another agentId on this connection", true);
    }
    this.rec = this.core.hello(this.connection, p.value);
    return { ok: true, hubVersion: this.core.version, serverTime: this.core.now() };
  }

  private refuse(error: string, touch: boolean): AnyAck {
    this.core.reject();
    if (touch && this.rec !== undefined) this.core.touch(this.rec);
    return { ok: false, error };
  }
}
