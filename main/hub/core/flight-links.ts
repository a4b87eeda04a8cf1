// The hub's side of the flight recorder's request (docs/protocol.md, "Flight recorder"): which
// connection speaks for each agent, and the requests sent to it that await an answer. Only an
// answer to a pending request is accepted, once: an agent cannot push rings (up to a packet each,
// shown to every dashboard) the hub never asked for.
import type { FlightRequest } from "../../../shared/protocol/index.js";

/** Requests awaiting an answer, per agent; beyond it the oldest is forgotten. */
export const MAX_PENDING_FLIGHTS = 256;

interface Link {
  readonly connection: number;
  readonly emit: (request: FlightRequest) => void;
  /** alertId → semaphore id. */
  readonly pending: Map<string, string>;
}

export class FlightLinks {
  private readonly links = new Map<string, Link>();
  readonly stats = { requested: 0, answered: 0, unexpected: 0 };

  /** The connection `connection` now speaks for `agentId` (its hello was accepted). */
  bind(agentId: string, connection: number, emit: (request: FlightRequest) => void): void {
    const old = this.links.get(agentId);
    // A resumed agent keeps its pending requests: it may answer on the new connection.
    this.links.set(agentId, { connection, emit, pending: old?.pending ?? new Map() });
  }

  /** The connection closed; a newer connection for the same agent keeps its link. */
  unbind(agentId: string, connection: number): void {
    if (this.links.get(agentId)?.connection === connection) this.links.delete(agentId);
  }

  /** Asks the agent for semaphore `id`'s ring, for `alertId`; false when it has no live connection. */
  request(agentId: string, id: string, alertId: string): boolean {
    const link = this.links.get(agentId);
    if (link === undefined) return false;
    if (link.pending.size >= MAX_PENDING_FLIGHTS) link.pending.delete(link.pending.keys().next().value as string);
    link.pending.set(alertId, id);
    this.stats.requested++;
    try {
      link.emit({ id, alertId });
    } catch {
      // A connection going away as we speak: the answer will never come, nothing else to do.
    }
    return true;
  }

  /** A request for that alert and semaphore awaits this agent's answer (does not consume it). */
  expects(agentId: string, alertId: string, id: string): boolean {
    return this.links.get(agentId)?.pending.get(alertId) === id;
  }

  /** An answer arrived: true (once) when it answers a pending request for that semaphore. */
  take(agentId: string, alertId: string, id: string): boolean {
    const pending = this.links.get(agentId)?.pending;
    if (pending === undefined || pending.get(alertId) !== id) {
      this.stats.unexpected++;
      return false;
    }
    pending.delete(alertId);
    this.stats.answered++;
    return true;
  }

  get size(): number {
    return this.links.size;
  }
}
