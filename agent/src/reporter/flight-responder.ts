// Answers the hub's flight_request (docs/protocol.md, "Flight recorder"): exactly one `flight`
// answer per request, and at most one ring per semaphore per interval. A request inside the
// interval is answered with status "rate_limited" and the alert the last ring went to (`sameAs`),
// so the hub can show that ring under the new alert too without the agent sending it twice.
import { PAYLOAD_LIMITS } from "../../../shared/protocol/payload-limits.js";
import { LIMITS, type FlightRecord } from "../../../shared/protocol/types.js";
import type { Tracked } from "../registry.js";
import { jsonBytes, PACKET_BUDGET_BYTES } from "./packet-split.js";

/** At most one ring per semaphore this often. */
export const FLIGHT_INTERVAL_MS = 10_000;

export interface FlightResponderConfig {
  /** The tracked item the hub knows by this wire id. */
  find(id: string): Tracked | undefined;
  send(record: FlightRecord): void;
  now?: () => number;
  intervalMs?: number;
}

const isWireString = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= LIMITS.maxString;

export class FlightResponder {
  private readonly last = new Map<string, { at: number; alertId: string }>();
  private readonly now: () => number;
  private readonly intervalMs: number;
  /** Requests that could not be read (not answered: there is nothing to answer to). */
  malformed = 0;
  sent = 0;
  limited = 0;

  constructor(private readonly config: FlightResponderConfig) {
    this.now = config.now ?? Date.now;
    this.intervalMs = config.intervalMs ?? FLIGHT_INTERVAL_MS;
  }

  /** A flight_request as it came off the socket (unchecked). */
  onRequest(payload: unknown): void {
    const p = payload as { id?: unknown; alertId?: unknown } | null | undefined;
    if (typeof p !== "object" || p === null || !isWireString(p.id) || !isWireString(p.alertId)) {
      this.malformed++;
      return;
    }
    const { id, alertId } = p;
    const t = this.now();
    const base = { id, alertId, t, capacity: 0, total: 0, ops: [], holders: [], stacks: [] };
    const recorder = this.config.find(id)?.flightRecorder;
    if (recorder === undefined) {
      this.config.send({ ...base, status: "unavailable" });
      return;
    }
    const prev = this.last.get(id);
    if (prev !== undefined && t - prev.at < this.intervalMs && t >= prev.at) {
      this.limited++;
      this.config.send({ ...base, capacity: recorder.capacity, total: recorder.total, status: "rate_limited", sameAs: prev.alertId });
      return;
    }
    this.last.set(id, { at: t, alertId });
    this.prune(t);
    this.config.send(fit(recorder.toRecord.bind(recorder), id, alertId, t));
    this.sent++;
  }

  private prune(t: number): void {
    if (this.last.size <= LIMITS.maxSemaphoresPerAgent) return;
    for (const [id, v] of this.last) if (t - v.at >= this.intervalMs) this.last.delete(id);
  }
}

type ToRecord = (id: string, alertId: string, t: number, limits: { maxOps: number; maxHolders: number; maxStacks: number }) => FlightRecord;

/** The newest operations that fit one packet: halve what is sent until it does. */
function fit(toRecord: ToRecord, id: string, alertId: string, t: number): FlightRecord {
  let limits: { maxOps: number; maxHolders: number; maxStacks: number } = { maxOps: PAYLOAD_LIMITS.maxFlightOps, maxHolders: PAYLOAD_LIMITS.maxFlightHolders, maxStacks: PAYLOAD_LIMITS.maxFlightStacks };
  for (;;) {
    const rec = toRecord(id, alertId, t, limits);
    if (jsonBytes(rec) <= PACKET_BUDGET_BYTES || (limits.maxOps === 0 && limits.maxStacks === 0)) return rec;
    limits = { maxOps: limits.maxOps >> 1, maxHolders: limits.maxHolders >> 1, maxStacks: limits.maxStacks >> 1 };
  }
}
