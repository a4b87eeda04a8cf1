// One agent connection: rate, hello-first, schema, then the hub core. Every message gets exactly
// one answer (the ack), and every refusal is counted; nothing here throws or waits. The rate is
// checked as a message arrives (admit); the rest runs when the scheduler (agent-scheduler.ts)
// gets to it (process), and a samples batch runs as a Job the scheduler steps through in slices.
import { agentPayloadSchemas, HUB_FEATURES, parsePayload, type Ack, type AgentToHubEvents, type FlightRequest, type SamplesBatch } from "../../../shared/protocol/index.js";
import { SamplesCheck } from "../../../shared/protocol/samples-check.js";
import type { AgentRecord, HubCore } from "../core/hub-core.js";
import { freshIds } from "../core/registry.js";
import { StoreJob } from "../core/store-pipeline.js";
import { TokenBucket } from "../socket/token-bucket.js";
import type { Admission } from "./admission.js";

/** Work done a slice at a time: `step` does about `maxUnits` units and gives the answer once finished. */
export interface Job {
  /** Units of work done so far (about one per item): the scheduler's fair share. */
  readonly work: number;
  step(maxUnits: number): Ack | undefined;
  /**
   * The answer, when it is known before the work is done and the rest is done in the very next
   * step, whole: the scheduler sends it first. So a small samples batch is acknowledged as the
   * bare server would, right after its check, while the connection is still in cache, instead of
   * after the store has filled the cache with histories (the ack's write then costs more).
   */
  readonly early?: Ack;
}

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
    /** Sends a flight_request on this connection (absent: the hub never asks it). */
    private readonly emitFlight?: (request: FlightRequest) => void,
    /** The hub's caps and identity rules, and this connection's remote address (absent: none apply). */
    private readonly gate?: { admission: Admission; address: string },
  ) {
    this.bucket = new TokenBucket(rate.perSecond, rate.burst);
  }

  get agentId(): string | undefined {
    return this.rec?.agentId;
  }

  /** The service this connection speaks for, once past hello. */
  get service(): string | undefined {
    return this.rec?.service;
  }

  /**
   * As a message arrives: refused for rate before anything else costs time (null: admitted). It
   * does not touch the engine either (the messages within the rate already prove the agent alive).
   */
  admit(): Ack | null {
    if (this.bucket.take()) return null;
    this.core.stats.rateLimited++;
    return this.refuse("rate limit exceeded", false);
  }

  /**
   * Refused by the scheduler (agent-scheduler.ts): too many of this connection's messages waiting,
   * or over its work budget on a transport that cannot be paused (long-polling). Counted as over the rate.
   */
  busy(): Ack {
    this.core.stats.rateLimited++;
    return this.refuse("rate limit exceeded", false);
  }

  /** An admitted message, in its connection's order: the answer, or the job that will give it. */
  process(event: AgentEventName, payload: unknown): Ack | Job {
    if (event === "hello") return this.hello(payload);
    if (this.rec === undefined) return this.refuse("hello first", false);
    switch (event) {
      case "register": {
        const p = parsePayload(agentPayloadSchemas.register, payload);
        if (!p.ok) return this.refuse(p.error, true);
        // A part only adds to the list the hub assembles: the whole list is admitted at its end.
        const pending = p.value.partial === "end" ? (this.rec.registerParts?.length ?? 0) : 0;
        const grows = p.value.partial === "more" ? 0 : pending + p.value.semaphores.length - this.rec.entries.size;
        const over = this.gate?.admission.semaphores(this.rec, grows, () => grows) ?? null;
        if (over !== null) {
          this.rec.registerParts = undefined;
          return this.refuse(over, true);
        }
        const out = this.core.register(this.rec, p.value);
        this.gate?.admission.settle(this.rec);
        return out.ok ? out : this.refuse(out.error, true);
      }
      case "samples":
        return new SamplesJob(this, payload);
      case "events": {
        const p = parsePayload(agentPayloadSchemas.events, payload);
        if (!p.ok) return this.refuse(p.error, true);
        const over = this.overCap(this.rec, p.value.items);
        if (over !== null) return this.refuse(over, true);
        const out = this.core.events(this.rec, p.value);
        this.gate?.admission.settle(this.rec);
        return out.ok ? out : this.refuse(out.error, true);
      }
      case "flight": {
        // Checked before the schema: a ring is up to 4,096 ops to parse, and only one asked for is worth it.
        const peek = typeof payload === "object" && payload !== null ? (payload as { alertId?: unknown; id?: unknown }) : {};
        if (typeof peek.alertId !== "string" || typeof peek.id !== "string" || !this.core.flightLinks.expects(this.rec.agentId, peek.alertId, peek.id)) {
          this.core.flightLinks.stats.unexpected++;
          return this.refuse("no flight_request pending for that alert and semaphore", true);
        }
        const p = parsePayload(agentPayloadSchemas.flight, payload);
        if (!p.ok) return this.refuse(p.error, true);
        if (!this.core.flightLinks.take(this.rec.agentId, p.value.alertId, p.value.id)) return this.refuse("no flight_request pending for that alert and semaphore", true);
        const out = this.core.flight(this.rec, p.value);
        return out.ok ? out : this.refuse(out.error, true);
      }
    }
    return this.refuse("unknown event", true);
  }

  /** Handles a message whole, at once (tests, tools): admit, then process and every step. */
  handle(event: AgentEventName, payload: unknown): Ack {
    const refused = this.admit();
    if (refused !== null) return refused;
    const r = this.process(event, payload);
    if (!isJob(r)) return r;
    let answer: Ack | undefined;
    while ((answer = r.step(Infinity)) === undefined);
    // Whole, as it says: a batch the hub put off (StorePipeline.defer) is stored before this returns.
    this.core.ingest.flush();
    return answer;
  }

  /** An event name the protocol does not have (admitted). */
  unknown(): Ack {
    return this.refuse("unknown event", true);
  }

  /** SamplesJob's part once the batch is checked. */
  startSamples(value: Parameters<HubCore["startSamples"]>[1]): Ack | StoreJob {
    const rec = this.rec;
    if (rec === undefined) return this.refuse("hello first", false);
    const over = this.overCap(rec, value.items);
    if (over !== null) return this.refuse(over, true);
    const out = this.core.startSamples(rec, value);
    if (!out.ok) return this.refuse(out.error, true);
    return out.duplicate ? { ok: true, seq: value.seq } : out.job;
  }

  /**
   * SamplesJob's part before startSamples: a slice of a batch of this service half stored (by
   * another connection), which its start would otherwise finish whole. The units stored; 0 when
   * none is half stored.
   */
  storeBefore(maxUnits: number): number {
    return this.rec === undefined ? 0 : this.core.ingest.advance(this.rec.service, maxUnits);
  }

  refused(error: string): Ack {
    return this.refuse(error, true);
  }

  /** SamplesJob's part once a batch is stored: the semaphores it added count at once. */
  stored(): void {
    if (this.rec !== undefined) this.gate?.admission.settle(this.rec);
  }

  /** SamplesJob's part as it answers a small batch early: true when the hub stores it later (StorePipeline.defer). */
  defer(job: StoreJob): boolean {
    return this.core.ingest.defer(job);
  }

  /** socket.io could not decode a packet; it closes the connection next. */
  decodeError(): void {
    this.undecodable = true;
  }

  /** The connection closed; `reason`/`description` as engine.io gives them. Counts a refused packet. */
  closing(reason: string, description: unknown): void {
    this.gate?.admission.closed(this.connection);
    if (closedForSize(reason, description)) {
      // The message that was too big is one the hub refused.
      this.core.stats.closedForSize++;
      this.core.reject();
    } else if (this.undecodable || reason === "parse error" || reason === "forced server close") {
      // A packet socket.io could not decode or place: refused too, with the connection.
      this.core.reject();
    }
  }

  /** After everything the connection sent before it closed: the agent is down. */
  closed(): void {
    if (this.rec === undefined) return;
    this.core.flightLinks.unbind(this.rec.agentId, this.connection);
    this.core.disconnect(this.connection, this.rec);
    this.gate?.admission.gone(this.rec);
  }

  private hello(payload: unknown): Ack {
    const p = parsePayload(agentPayloadSchemas.hello, payload);
    if (!p.ok) return this.refuse(p.error, true);
    if (this.rec !== undefined && this.rec.agentId !== p.value.agentId) {
      return this.refuse("hello already received for another agentId on this connection", true);
    }
    const gate = this.gate;
    const refusal = gate?.admission.hello(this.connection, gate.address, p.value) ?? null;
    if (refusal !== null) return this.refuse(refusal, false);
    this.rec = this.core.hello(this.connection, p.value);
    gate?.admission.joined(this.rec, gate.address);
    if (this.emitFlight !== undefined) this.core.flightLinks.bind(this.rec.agentId, this.connection, this.emitFlight);
    // Optional features: the ack names those of the agent's it accepts (absent: none).
    const features = p.value.features?.filter((f) => HUB_FEATURES.includes(f));
    return { ok: true, hubVersion: this.core.version, serverTime: this.core.now(), ...(features !== undefined && features.length > 0 ? { features } : {}) };
  }

  /** Why the semaphores `items` name would take the hub past a cap (admission.ts), or null. */
  private overCap(rec: AgentRecord, items: readonly { id: string }[]): string | null {
    return this.gate?.admission.semaphores(rec, items.length, () => freshIds(rec, items)) ?? null;
  }

  private refuse(error: string, touch: boolean): Ack {
    this.core.reject();
    if (touch && this.rec !== undefined) this.core.touch(this.rec);
    return { ok: false, error };
  }
}

export function isJob(r: Ack | Job): r is Job {
  return typeof (r as Partial<Job>).step === "function";
}

/** A samples message: checked (pure) then stored (store-pipeline.ts's StoreJob), a slice at a time. */
class SamplesJob implements Job {
  private readonly check: SamplesCheck;
  private store: StoreJob | undefined;
  private answer: Ack | undefined;
  private seq = 0;
  /** Put off (StorePipeline.defer) as it was answered: its units are charged as done (the lane's fair share counts them). */
  private deferred = false;
  /** The batch once checked, until its store starts. */
  private checked: SamplesBatch | undefined;
  /** Units of other batches of its service this job stored before its own could start (storeBefore). */
  private helped = 0;
  /** Set when the store fits the rest of the slice: the next step stores it whole. */
  early: Ack | undefined;

  constructor(
    private readonly session: AgentSession,
    payload: unknown,
  ) {
    this.check = new SamplesCheck(payload);
  }

  get work(): number {
    return this.check.checked + this.helped + (this.store === undefined ? 0 : this.deferred ? this.store.planned : this.store.work);
  }

  step(maxItems: number): Ack | undefined {
    if (this.answer !== undefined) return this.answer;
    let budget = maxItems;
    if (this.store === undefined) {
      const before = this.check.checked;
      if (this.checked === undefined) {
        const p = this.check.step(budget);
        if (p === undefined) return undefined;
        if (!p.ok) return (this.answer = this.session.refused(p.error));
        this.checked = p.value;
        this.seq = p.value.seq;
      }
      // Stores are in order per service: one half done goes first, a slice per step.
      const helped = this.session.storeBefore(budget - (this.check.checked - before));
      if (helped > 0) {
        this.helped += helped;
        return undefined;
      }
      const started = this.session.startSamples(this.checked);
      this.checked = undefined;
      if (!(started instanceof StoreJob)) return (this.answer = started);
      this.store = started;
      // A small batch is answered first, and stored with others a little later (StorePipeline.defer)
      // or else whole in the next step; a big one stores from the next step, a slice at a time,
      // and is answered once stored.
      budget -= this.check.checked - before;
      if (budget > 0 && started.fitsIn(budget)) {
        this.early = { ok: true, seq: this.seq };
        // Nothing runs between this step and the next but the ack: put off before the ack goes.
        this.deferred = this.session.defer(started);
        if (!this.deferred) started.hold();
        return undefined;
      }
      if (budget <= 0) {
        started.hold();
        return undefined;
      }
    }
    if (this.deferred && this.early !== undefined) return (this.answer = this.early);
    if (!this.store.step(this.early !== undefined ? Infinity : budget)) return undefined;
    this.session.stored();
    return (this.answer = this.early ?? { ok: true, seq: this.seq });
  }
}
