// The hub's state and the one place its inputs go: every input arrives here already validated
// (agent-session.ts parses), is stamped with the hub clock, fed to the engine through the store
// pipeline, recorded, and marked for dashboards. Knows nothing of sockets or HTTP.
import { AlertEngine, agentKey, type AlertChange, type AlertThresholds, type ThresholdsPatch } from "../../../shared/alerts/index.js";
import { HistoryStore, type SemaphoreHistory } from "../../../shared/history/index.js";
import { globalViews, PROTOCOL_VERSION, type Alert, type HubAdmission, type EventsBatch, type FlightRecord, type Hello, type HubState, type Register, type SamplesBatch } from "../../../shared/protocol/index.js";
import { RECORDING_FORMAT, type RecordLine, type RecordSink } from "./record-line.js";
import { AlertEvidence, FLIGHT_RULES } from "./alert-evidence.js";
import { ChangeTracker } from "./change-tracker.js";
import { FlightLinks } from "./flight-links.js";
import { ForgetSlices } from "./forget-slices.js";
import { TurnBudget } from "./turn-budget.js";
import { AgentRegistry, type AgentRecord } from "./registry.js";
import { QuietFill } from "./quiet-fill.js";
import { StorePipeline, type StoreJob } from "./store-pipeline.js";

export type { AgentRecord, SemaphoreSlot } from "./registry.js";

export interface HubCoreOptions {
  now: () => number;
  version: string;
  thresholds: ThresholdsPatch;
  maxHistories: number;
  /** Memory bound of the history store (HistoryStoreOptions.maxBytes); its default when absent. */
  maxHistoryBytes?: number;
  /** The core is kept for as long as its hub runs, as a running hub's is (HistoryStoreOptions.longLived). */
  longLived?: boolean;
  forgetAfterMs: number;
  recorder: RecordSink | undefined;
  /** Lets small acknowledged batches be stored a little later, together (StorePipeline's deferStores). */
  deferStores?: (urgent: boolean) => void;
  /** The budget the hub's background work shares each event-loop turn (turn-budget.ts); a core of its own when absent. */
  turns?: TurnBudget;
  /** Every alert change, as the engine makes it (the hub forwards them: forwarding/alert-forwarder.ts). */
  onAlertChanges?: (changes: readonly AlertChange[]) => void;
  /** Each accepted threshold change, after it applies (HubOptions.onThresholdsChanged). */
  onThresholdsChanged?: (patch: ThresholdsPatch) => void;
}

export type SamplesOutcome = { ok: true; duplicate: boolean } | { ok: false; error: string };
export type SamplesStart = { ok: true; duplicate: true } | { ok: true; duplicate: false; job: StoreJob } | { ok: false; error: string };

export class HubCore {
  private readonly histories: HistoryStore;
  /** Agents and semaphores (the engine's facts too); outside the core read it through `registry`. */
  private readonly agents = new AgentRegistry();
  readonly changes = new ChangeTracker();
  /** Flight recorder rings and diagnoses on alerts (alert-evidence.ts). */
  readonly evidence: AlertEvidence;
  /** Agents' connections, for flight_request (flight-links.ts); empty in a replay. */
  readonly flightLinks = new FlightLinks();
  /** Where samples go; inputs reach the engine through its settled(), so none sees a batch half stored. */
  readonly ingest: StorePipeline;
  readonly startedAt: number;
  readonly version: string;
  readonly now: () => number;
  /** hub.rejected in /api/state: every refused handshake, message, or connection closed for size. */
  rejected = 0;
  readonly stats = { accepted: 0, duplicates: 0, rateLimited: 0, closedForSize: 0, handshakesRefused: 0, uiDropped: 0 };
  /** The live hub's caps and refusals (ingest/admission.ts), in hub info; none in a replay. */
  admission: (() => HubAdmission) | undefined;
  /** The live hub has an agent token (HubOptions.agentToken): said in hub info, never the token. */
  agentToken = false;
  private readonly alerts: AlertEngine;
  private readonly recorder: RecordSink | undefined;
  private readonly forgetAfterMs: number;
  /** Changed entries only: quiet samples for semaphores an interval left out that a rule still needs. */
  private readonly quiet = new QuietFill();
  private readonly onAlertChanges: ((changes: readonly AlertChange[]) => void) | undefined;
  private readonly onThresholdsChanged: ((patch: ThresholdsPatch) => void) | undefined;
  /** Agents evicted to make room, forgotten a slice per turn (forget-slices.ts). */
  private readonly forgets: ForgetSlices;
  /** What each event-loop turn may spend on background work: the forgets here, and the hub's agents, dashboards and scrapes. */
  readonly turns: TurnBudget;

  constructor(opts: HubCoreOptions) {
    this.now = opts.now;
    this.turns = opts.turns ?? new TurnBudget();
    this.forgets = new ForgetSlices(this.turns);
    this.version = opts.version;
    this.alerts = new AlertEngine({ thresholds: opts.thresholds, registry: this.agents });
    this.histories = new HistoryStore({
      maxSemaphores: opts.maxHistories,
      maxBytes: opts.maxHistoryBytes,
      now: opts.now,
      longLived: opts.longLived === true,
    });
    this.evidence = new AlertEvidence(this.alerts, this.histories);
    this.ingest = new StorePipeline(
      { engine: this.alerts, history: this.histories, registry: this.agents, evidence: this.evidence, changes: this.changes, applied: (c, rec) => this.applied(c, rec), alertsChanged: (c) => this.alertsChanged(c) },
      opts.deferStores,
    );
    this.recorder = opts.recorder;
    this.onAlertChanges = opts.onAlertChanges;
    this.onThresholdsChanged = opts.onThresholdsChanged;
    this.forgetAfterMs = opts.forgetAfterMs;
    this.startedAt = this.now();
    this.record({ r: this.startedAt, k: "start", p: { format: RECORDING_FORMAT, hubVersion: this.version, protocol: PROTOCOL_VERSION, thresholds: this.alerts.thresholds } });
  }

  /**
   * The engine for reading: what was acknowledged and put off is stored first. An agent being
   * forgotten (forgetSoon) is not in it, nor are its semaphores, groups' members or alerts.
   */
  get engine(): AlertEngine {
    this.ingest.flush();
    return this.alerts;
  }

  /** The registry for reading (/api/state, /ui, /metrics): what was acknowledged and put off is stored first. */
  get registry(): AgentRegistry {
    this.ingest.flush();
    return this.agents;
  }

  /** The histories for reading: none of an agent being forgotten. */
  get history(): HistoryStore {
    return this.histories;
  }

  /** Agents still being forgotten a slice per turn (forgetSoon). */
  get forgetting(): number {
    return this.forgets.pending;
  }

  /** Per-semaphore running totals of the sample counters (SAMPLE_COUNTERS order), for /metrics. */
  get totals(): Map<string, Float64Array> {
    return this.agents.totals;
  }

  agent(agentId: string): AgentRecord | undefined {
    return this.agents.get(agentId);
  }

  reject(): void {
    this.rejected++;
  }

  // ---- agent inputs (validated) ----

  hello(connection: number, hello: Hello): AgentRecord {
    this.forgotten(hello.service, hello.instance);
    // Nothing half-stored of the service it joins, or (a resumed agent changing its name) leaves.
    const known = this.agents.get(hello.agentId);
    if (known !== undefined && known.service !== hello.service) this.ingest.settled(known.service);
    const engine = this.ingest.settled(hello.service);
    const now = this.now();
    if (known !== undefined && (known.service !== hello.service || known.instance !== hello.instance)) this.changes.structural();
    this.stats.accepted++;
    this.quiet.hello(hello.agentId, hello.features);
    this.record({ r: now, k: "hello", a: hello.agentId, p: hello });
    // The engine admits the agent (or takes it under its new name) into the registry.
    const changes = engine.hello(hello.agentId, hello, now);
    const rec = this.agents.connected(hello.agentId, connection, hello.features);
    this.applied(changes, rec);
    return rec;
  }

  /** A register, or one of its parts: the whole list is applied (and recorded) when it is complete. */
  register(rec: AgentRecord, reg: Register): { ok: true } | { ok: false; error: string } {
    this.forgotten(rec.service, rec.instance);
    const list = this.agents.registerList(rec, reg.semaphores, reg.partial);
    if (list === undefined) return { ok: true };
    if (!Array.isArray(list)) return { ok: false, error: list.error };
    const engine = this.ingest.settled(rec.service);
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "register", a: rec.agentId, p: { semaphores: list } });
    // The engine replaces the agent's entries with the list's (registry.ts).
    const changes = engine.register(rec.agentId, list, now);
    this.quiet.keepOnly(rec.agentId, rec.entries);
    for (const e of rec.entries.values()) this.changes.key(e.key);
    this.changes.structural();
    this.applied(changes, rec);
    return { ok: true };
  }

  /** Stores a batch whole (startSamples and every step at once). */
  samples(rec: AgentRecord, batch: SamplesBatch): SamplesOutcome {
    const start = this.startSamples(rec, batch);
    if (!start.ok) return start;
    if (!start.duplicate) start.job.step(Infinity);
    return { ok: true, duplicate: start.duplicate };
  }

  /**
   * Accepts (dedupe, the semaphore limit, the recording) a batch and returns the job that stores
   * it; until that job is done, other inputs for the same service wait for it or finish it.
   */
  startSamples(rec: AgentRecord, sent: SamplesBatch): SamplesStart {
    this.forgotten(rec.service, rec.instance);
    // Not the deferred stores: a batch deferred too is stored after them, in order, and one
    // stored now stores them first (StoreJob.step).
    this.ingest.settleSliced(rec.service);
    if (rec.seqs.has(sent.seq)) {
      this.stats.duplicates++;
      this.touch(rec);
      return { ok: true, duplicate: true };
    }
    const refusal = this.agents.overSemaphoreLimit(rec, sent.items);
    if (refusal !== null) return { ok: false, error: refusal };
    const batch = this.quiet.complete(rec.agentId, sent, (id) => this.agents.keyOf(rec, id), this.alerts.thresholds);
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "samples", a: rec.agentId, p: batch });
    rec.seqs.add(batch.seq);
    return { ok: true, duplicate: false, job: this.ingest.job(rec, batch, now) };
  }

  events(rec: AgentRecord, batch: EventsBatch): { ok: true } | { ok: false; error: string } {
    this.forgotten(rec.service, rec.instance);
    const engine = this.ingest.settled(rec.service);
    const refusal = this.agents.overSemaphoreLimit(rec, batch.items);
    if (refusal !== null) return { ok: false, error: refusal };
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "events", a: rec.agentId, p: batch });
    this.applied(engine.events(rec.agentId, batch, now), rec);
    // An event may name a semaphore no register or sample made yet: the engine creates it, and
    // deltas and the fleet view learn of it only through its key.
    for (const ev of batch.items) this.changes.key(this.agents.keyOf(rec, ev.id));
    return { ok: true };
  }

  /**
   * An agent's flight recorder ring, already checked (schema, and by the session: an answer to a
   * request of ours), attached to its alert. Replays call it for each recorded `flight` line.
   */
  flight(rec: AgentRecord, record: FlightRecord): { ok: true } | { ok: false; error: string } {
    this.forgotten(rec.service, rec.instance);
    this.ingest.settled(rec.service);
    const out = this.evidence.flight(rec.service, rec.instance, record);
    if (!out.ok) return out;
    this.stats.accepted++;
    this.record({ r: this.now(), k: "flight", a: rec.agentId, p: record });
    this.applied(out.changes, rec);
    return { ok: true };
  }

  /** A refused (or duplicate) message: it still proves the agent alive. */
  touch(rec: AgentRecord): void {
    const engine = this.ingest.settled(rec.service);
    const now = this.now();
    this.record({ r: now, k: "touch", a: rec.agentId });
    this.applied(engine.touch(rec.agentId, now), rec);
  }

  disconnect(connection: number, rec: AgentRecord): void {
    // A newer connection took the agent over: this one's close says nothing about the agent.
    if (rec.owner !== connection) return;
    const engine = this.ingest.settled(rec.service);
    const now = this.now();
    rec.owner = undefined;
    rec.disconnectedAt = now;
    this.record({ r: now, k: "disconnect", a: rec.agentId });
    this.applied(engine.disconnect(rec.agentId, now), rec);
  }

  // ---- the hub clock ----

  /** agent_down for silent agents; forgets agents disconnected past forgetAfterMs. */
  tick(): void {
    const engine = this.ingest.settled();
    const now = this.now();
    // tick changes nothing unless some agent is connected, so only those ticks are recorded:
    // a replay that ticks exactly where the hub did raises exactly the same agent_down alerts.
    if (this.agents.anyConnected()) {
      this.record({ r: now, k: "tick" });
      this.applied(engine.tick(now));
    }
    if (this.forgetAfterMs <= 0) return;
    // No copy: forget() deletes only the entry being visited, which a Map's iterator allows.
    for (const rec of this.agents.values()) {
      if (rec.owner === undefined && rec.disconnectedAt !== null && now - rec.disconnectedAt >= this.forgetAfterMs) this.forget(rec, now);
    }
  }

  /** Public for replay-session.ts, which forgets where the recording says the hub did. */
  forget(rec: AgentRecord, now: number): void {
    const engine = this.ingest.settled();
    this.record({ r: now, k: "forget", a: rec.agentId });
    this.quiet.forget(rec.agentId);
    const keys = this.agents.ownKeysOf(rec);
    this.applied(engine.forget(rec.agentId, now));
    this.agents.dropTotals(keys);
    for (const key of keys) this.histories.delete(key);
    this.changes.agentRemoved(rec.agentId);
  }

  /**
   * forget(), for an agent evicted to make room: it, its semaphores and their histories leave
   * every index readers use at once (O(its semaphores) map deletes) and its alerts are hidden
   * from reads; the alerts are resolved and the histories' rows given back a slice per turn.
   * Recorded as a forget: a replay forgets it whole there, to the same end.
   */
  forgetSoon(rec: AgentRecord, now: number): void {
    this.ingest.settled();
    const engine = this.alerts;
    this.record({ r: now, k: "forget", a: rec.agentId });
    this.quiet.forget(rec.agentId);
    const keys = this.agents.ownKeysOf(rec);
    const parts = engine.forgetInParts(rec.agentId, now);
    this.agents.dropTotals(keys);
    this.changes.agentRemoved(rec.agentId);
    if (parts !== undefined) this.applied(parts.changes);
    const held: SemaphoreHistory[] = [];
    for (const key of keys) {
      const h = this.histories.detach(key);
      if (h !== undefined) held.push(h);
    }
    let k = 0;
    const step = (n: number): boolean => {
      if (parts !== undefined && parts.left > 0) {
        // Its groups are evaluated after its last semaphore: no batch of their service half
        // stored (one is, a slice of it per step until it is not).
        if (parts.left <= n) {
          if (this.ingest.advance(rec.service, n) > 0) return false;
          this.ingest.settled(rec.service);
        }
        this.applied(parts.step(n));
        return false;
      }
      for (const end = Math.min(held.length, k + n); k < end; k++) held[k]!.release();
      return k === held.length;
    };
    this.forgets.add({ name: agentKey(rec.service, rec.instance), step });
  }

  // ---- people ----

  /** Acknowledge an alert; undefined when no such alert is kept. */
  acknowledge(id: string): Alert | undefined {
    if (this.alerts.alert(id) === undefined) return undefined;
    const engine = this.ingest.settled();
    const now = this.now();
    this.record({ r: now, k: "ack", p: { id } });
    this.applied(engine.acknowledge(id, now));
    return engine.alert(id);
  }

  /** Throws TypeError/RangeError (from the engine) for a bad patch, and then changes nothing. */
  setThresholds(patch: ThresholdsPatch): AlertThresholds {
    const next = this.ingest.settled().setThresholds(patch);
    this.record({ r: this.now(), k: "thresholds", p: patch });
    this.changes.thresholdsChanged();
    this.onThresholdsChanged?.(patch);
    return next;
  }

  // ---- reading ----

  hubInfo(): HubState["hub"] {
    const admission = this.admission?.();
    return {
      version: this.version,
      startedAt: this.startedAt,
      rejected: this.rejected,
      ...(admission !== undefined ? { admission } : {}),
      ...(this.agentToken ? { agentToken: true as const } : {}),
    };
  }

  state(): HubState {
    const engine = this.engine;
    const agents = this.agents.agents();
    const semaphores = this.agents.semaphores();
    const live = new Set(agents.filter((a) => a.connected).map((a) => a.agentId));
    const withT = semaphores.map((s) => ({ ...s, t: this.histories.get(s.key)?.latestT() ?? null }));
    const globals = globalViews(withT, (id) => live.has(id));
    const state: HubState = { hub: this.hubInfo(), agents, semaphores, alerts: engine.activeAlerts() };
    // An optional addition to /api/state: present only when there is a global semaphore to show.
    if (globals.length > 0) state.globals = globals;
    return state;
  }

  get agentCount(): number {
    return this.agents.size;
  }

  get recording(): { file: string; lines: number; bytes: number; open: boolean } | null {
    const r = this.recorder;
    return r === undefined ? null : { file: r.file, lines: r.lines, bytes: r.bytes, open: r.open };
  }

  close(): void {
    this.ingest.settled();
    this.forgets.finish();
    this.turns.close();
    this.recorder?.close();
  }

  // ---- internals ----

  private alertsChanged(changes: readonly AlertChange[]): void {
    this.changes.alert(changes);
    this.onAlertChanges?.(changes);
  }

  /** Before an input under `service`/`instance`: an agent of that name being forgotten is gone first. */
  private forgotten(service: string, instance: string): void {
    if (this.forgets.pending > 0) this.forgets.finish(agentKey(service, instance));
  }

  private record(line: RecordLine): void {
    this.recorder?.write(line);
  }

  private applied(changes: AlertChange[], rec?: AgentRecord): void {
    if (rec !== undefined) this.changes.agent(rec.agentId);
    if (changes.length === 0) return;
    this.quiet.onAlerts(changes);
    this.alertsChanged(changes);
    const more = this.evidence.onChanges(changes);
    if (more.length > 0) this.alertsChanged(more);
    if (rec !== undefined) this.requestFlights(changes, rec);
  }

  /** A per-semaphore alert raised by this agent's input: ask it for the semaphore's ring. */
  private requestFlights(changes: readonly AlertChange[], rec: AgentRecord): void {
    for (const c of changes) {
      const a = c.alert;
      if (c.kind !== "raised" || !FLIGHT_RULES.has(a.rule) || a.semaphore === undefined) continue;
      if (a.service !== rec.service || a.instance !== rec.instance) continue;
      this.flightLinks.request(rec.agentId, a.semaphore, a.id);
    }
  }
}
