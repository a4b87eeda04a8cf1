// Delivery of one kind of message (samples or events): at-least-once over a connection that
// comes and goes. Messages wait in a bounded BatchBuffer until acked; they are sent oldest first,
// with a bounded number in flight, and everything un-acked is sent again on the next connection.
import type { Ack } from "../../../shared/protocol/types.js";
import { BatchBuffer, type Outgoing } from "./batch-buffer.js";

/** Un-acked emits at once: enough to replay a backlog quickly, few enough that a hub that never acks costs little. */
export const MAX_IN_FLIGHT = 32;
/** The same window counted in bytes, so big messages cannot pile up in the socket's write buffer. */
export const MAX_IN_FLIGHT_BYTES = 4 * 1024 * 1024;
/** How long an ack may take before the message waits for the next connection instead. */
export const ACK_TIMEOUT_MS = 10_000;

/** What an outbox needs from the connection. */
export interface Link {
  readonly ready: boolean;
  readonly epoch: number;
  send(event: "samples" | "events", payload: unknown, timeoutMs: number, done: (err: Error | null, ack: unknown) => void): void;
}

export interface OutboxHooks<P> {
  /** Last chance to change a message before it first leaves (samples: the `dropped` count). */
  beforeFirstSend?(entry: Outgoing<P>): void;
  /** Messages removed without an ok ack: "evicted" (buffer full), "rejected" (ok:false), "size" (closed for size). */
  onLost(entries: readonly Outgoing<P>[], why: "evicted" | "rejected" | "size", error?: string): void;
  /** Every ack or timeout, so close() can tell when it is done. */
  onSettled?(): void;
}

export class Outbox<P> {
  private token = 0;
  /**
   * Emits awaiting an ack, by token. A message evicted from the buffer keeps its slot here until
   * its ack or timeout: socket.io holds its callback (and so its payload) until then, and the
   * window is what bounds that too.
   */
  private readonly flights = new Map<number, Outgoing<P>>();
  private inFlightBytes = 0;
  acked = 0;
  timeouts = 0;

  constructor(
    private readonly event: "samples" | "events",
    readonly buffer: BatchBuffer<P>,
    private readonly link: Link,
    private readonly hooks: OutboxHooks<P>,
    private readonly ackTimeoutMs: number = ACK_TIMEOUT_MS,
  ) {}

  get size(): number {
    return this.buffer.size;
  }

  add(key: number, payload: P, bytes: number): void {
    const evicted = this.buffer.push(key, payload, bytes);
    if (evicted.length > 0) this.hooks.onLost(evicted, "evicted");
    this.pump();
  }

  /** Sends what the window allows, oldest first; call on ready, on every ack, on every add. */
  pump(): void {
    if (!this.link.ready) return;
    const epoch = this.link.epoch;
    for (const entry of this.buffer.values()) {
      if (this.flights.size >= MAX_IN_FLIGHT) return;
      if (this.flights.size > 0 && this.inFlightBytes + entry.bytes > MAX_IN_FLIGHT_BYTES) return;
      // Timed out on this connection: sent again on the next one, never out of order on this one.
      if (entry.inFlight !== 0 || entry.sentEpoch === epoch) continue;
      this.sendOne(entry, epoch);
    }
  }

  private sendOne(entry: Outgoing<P>, epoch: number): void {
    if (!entry.everSent) this.hooks.beforeFirstSend?.(entry);
    const token = ++this.token;
    entry.inFlight = token;
    entry.sentEpoch = epoch;
    entry.everSent = true;
    this.flights.set(token, entry);
    this.inFlightBytes += entry.bytes;
    this.link.send(this.event, entry.payload, this.ackTimeoutMs, (err, ack) => this.onAck(token, err, ack));
  }

  private onAck(token: number, err: Error | null, ack: unknown): void {
    // Already settled: the connection was lost before this answer (socket.io fails pending acks).
    const entry = this.settle(token);
    if (entry === undefined) return;
    // Evicted (and counted) meanwhile, or dropped for size: its slot is all there was to free.
    if (this.buffer.get(entry.key) !== entry) {
      this.pump();
      return;
    }
    if (err !== null) {
      // Timed out, or the connection closed under it: it stays, for the next connection.
      this.timeouts++;
    } else if (isRefusal(ack)) {
      // A refused message would be refused again: drop it rather than retry it forever.
      if (this.buffer.remove(entry.key) !== undefined) this.hooks.onLost([entry], "rejected", String(ack.error));
    } else {
      this.acked++;
      this.buffer.remove(entry.key);
    }
    this.hooks.onSettled?.();
    this.pump();
  }

  private settle(token: number): Outgoing<P> | undefined {
    const entry = this.flights.get(token);
    if (entry === undefined) return undefined;
    this.flights.delete(token);
    this.inFlightBytes -= entry.bytes;
    if (entry.inFlight === token) entry.inFlight = 0;
    return entry;
  }

  /** Buffered messages in flight, for deciding which one a connection closed for size was about. */
  inFlight(): Outgoing<P>[] {
    return [...this.flights.values()].filter((e) => this.buffer.get(e.key) === e);
  }

  /** The connection is gone: nothing is in flight any more (socket.io fails those acks too). */
  connectionLost(): void {
    for (const token of [...this.flights.keys()]) this.settle(token);
  }

  /** Removes a message that must never be sent again (it got its connection closed for size). */
  dropForSize(entry: Outgoing<P>): void {
    if (this.buffer.remove(entry.key) !== undefined) this.hooks.onLost([entry], "size");
  }

  clear(): void {
    this.connectionLost();
    this.buffer.clear();
  }

  get inFlightCount(): number {
    return this.flights.size;
  }
}

function isRefusal(ack: unknown): ack is Extract<Ack, { ok: false }> {
  return typeof ack === "object" && ack !== null && (ack as { ok?: unknown }).ok === false;
}
