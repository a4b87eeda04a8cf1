// The hub's state and the one place that feeds the alert engine and the history: every input
// arrives here already validated (agent-session.ts parses), is stamped with the hub clock, fed
// to the engine, recorded, and marked for dashboards. Knows nothing of sockets or HTTP.
import { AlertEngine, type AlertChange, type AlertThresholds, type ThresholdsPatch } from "../../shared/alerts/index.js";
import { HistoryStore } from "../../shared/history/index.js";
import {
  LIMITS,
  PROTOCOL_VERSION,
  semaphoreKey,
  type Alert,
  type EventsBatch,
  type Hello,
  type HubState,
  type Register,
  type SamplesBatch,
} from "../../shared/protocol/index.js";
import { ChangeTracker } from "./change-tracker.js";
import type { Recorder, RecordLine } from "./recorder.js";
import { SeqWindow } from "./seq-window.js";

/** What the hub keeps per agent across its connections (a hello with a known agentId resumes it). */
export interface AgentRecord {
  readonly agentId: string;
  service: string;
  instance: string;
  /** Sample batches already accepted, for dedupe. */
  readonly seqs: SeqWindow;
  /** Semaphore ids the engine holds for it: registered ones and any seen in samples or events since. */
  ids: Set<string>;
  intervalMs: number;
  /** The connection speaking for it; a stale connection's close does not mark it down. */
  owner: number | undefined;
  disconnectedAt: number | null;
}

/** Per-semaphore running totals of the sample counters, for /metrics. */
export const COUNTER_FIELDS = ["acquired", "released", "timeouts", "rejections", "aborts", "doubleReleases", "leaseExpiries"] as const;

export interface HubCoreOptions {
  now: () => number;
  version: string;
  thresholds: ThresholdsPatch;
  maxHistories: number;
  forgetAfterMs: number;
  recorder: Recorder | undefined;
}

export type SamplesOutcome = { ok: true; duplicate: boolean } | { ok: false; error: string };

export class HubCore {
  readonly engine: AlertEngine;
  readonly history: HistoryStore;
  readonly changes = new ChangeTracker();
  readonly startedAt: number;
  readonly version: string;
  readonly now: () => number;
  /** hub.rejected in /api/state: every refused handshake, message, or connection closed for size. */
  rejected = 0;
  readonly stats = { accepted: 0, duplicates: 0, rateLimited: 0, closedForSize: 0, handshakesRefused: 0, uiDropped: 0 };
  readonly totals = new Map<string, Float64Array>();
  private readonly agents = new Map<string, AgentRecord>();
  private readonly recorder: Recorder | undefined;
  private readonly forgetAfterMs: number;

  constructor(opts: HubCoreOptions) {
    this.now = opts.now;
    this.version = opts.version;
    this.engine = new AlertEngine({ thresholds: opts.thresholds });
    this.history = new HistoryStore({ maxSemaphores: opts.maxHistories });
    this.recorder = opts.recorder;
    this.forgetAfterMs = opts.forgetAfterMs;
    this.startedAt = this.now();
    this.record({ r: this.startedAt, k: "start", p: { format: 1, hubVersion: this.version, protocol: PROTOCOL_VERSION, thresholds: this.engine.thresholds } });
  }

  agent(agentId: string): AgentRecord | undefined {
    return this.agents.get(agentId);
  }

  reject(): void {
    this.rejected++;
  }

  // ---- agent inputs (validated) ----

  hello(connection: number, hello: Hello): AgentRecord {
    const now = this.now();
    let rec = this.agents.get(hello.agentId);
    if (rec === undefined) {
      rec = {
        agentId: hello.agentId,
        service: hello.service,
        instance: hello.instance,
        seqs: new SeqWindow(),
        ids: new Set(),
        intervalMs: this.engine.thresholds.agentDown.defaultIntervalMs,
        owner: connection,
        disconnectedAt: null,
      };
      this.agents.set(hello.agentId, rec);
    } else if (rec.service !== hello.service || rec.instance !== hello.instance) {
      // The engine retires the old identity's semaphores; the next register brings them back.
      rec.service = hello.service;
      rec.instance = hello.instance;
      rec.ids = new Set();
      this.changes.structural();
    }
    rec.owner = connection;
    rec.disconnectedAt = null;
    this.stats.accepted++;
    this.record({ r: now, k: "hello", a: hello.agentId, p: hello });
    this.applied(this.engine.hello(hello.agentId, hello, now), rec);
    return rec;
  }

  register(rec: AgentRecord, reg: Register): void {
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "register", a: rec.agentId, p: reg });
    rec.ids = new Set(reg.semaphores.map((s) => s.id));
    for (const id of rec.ids) this.changes.key(semaphoreKey(rec.service, rec.instance, id));
    this.changes.structural();
    this.applied(this.engine.register(rec.agentId, reg.semaphores, now), rec);
  }

  samples(rec: AgentRecord, batch: SamplesBatch): SamplesOutcome {
    if (rec.seqs.has(batch.seq)) {
      this.stats.duplicates++;
      this.touch(rec);
      return { ok: true, duplicate: true };
    }
    const refusal = this.overSemaphoreLimit(rec, batch.items);
    if (refusal !== null) return { ok: false, error: refusal };
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "samples", a: rec.agentId, p: batch });
    rec.seqs.add(batch.seq);
    rec.intervalMs = batch.intervalMs;
    for (const item of batch.items) {
      rec.ids.add(item.id);
      const key = semaphoreKey(rec.service, rec.instance, item.id);
      this.history.push(key, item, batch.t, batch.intervalMs);
      let tot = this.totals.get(key);
      if (tot === undefined) this.totals.set(key, (tot = new Float64Array(COUNTER_FIELDS.length)));
      for (let i = 0; i < COUNTER_FIELDS.length; i++) tot[i] += item[COUNTER_FIELDS[i]];
      this.changes.key(key);
    }
    this.applied(this.engine.samples(rec.agentId, batch, now), rec);
    return { ok: true, duplicate: false };
  }

  events(rec: AgentRecord, batch: EventsBatch): { ok: true } | { ok: false; error: string } {
    const refusal = this.overSemaphoreLimit(rec, batch.items);
    if (refusal !== null) return { ok: false, error: refusal };
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "events", a: rec.agentId, p: batch });
    for (const ev of batch.items) rec.ids.add(ev.id);
    this.applied(this.engine.events(rec.agentId, batch, now), rec);
    return { ok: true };
  }

  /** A refused (or duplicate) message: it still proves the agent alive. */
  touch(rec: AgentRecord): void {
    const now = this.now();
    this.record({ r: now, k: "touch", a: rec.agentId });
    this.applied(this.engine.touch(rec.agentId, now), rec);
  }

  disconnect(connection: number, rec: AgentRecord): void {
    // A newer connection took the agent over: this one's close says nothing about the agent.
    if (rec.owner !== connection) return;
    const now = this.now();
    rec.owner = undefined;
    rec.disconnectedAt = now;
    this.record({ r: now, k: "disconnect", a: rec.agentId });
    this.applied(this.engine.disconnect(rec.agentId, now), rec);
  }

  // ---- the hub clock ----

  /** agent_down for silent agents; forgets agents disconnected past forgetAfterMs. */
  tick(): void {
    const now = this.now();
    // tick changes nothing unless some agent is connected, so only those ticks are recorded:
    // a replay that ticks exactly where the hub did raises exactly the same agent_down alerts.
    if (this.engine.agents().some((a) => a.connected)) {
      this.record({ r: now, k: "tick" });
      this.applied(this.engine.tick(now));
    }
    if (this.forgetAfterMs <= 0) return;
    for (const rec of [...this.agents.values()]) {
      if (rec.owner === undefined && rec.disconnectedAt !== null && now - rec.disconnectedAt >= this.forgetAfterMs) this.forget(rec, now);
    }
  }

  private forget(rec: AgentRecord, now: number): void {
    this.record({ r: now, k: "forget", a: rec.agentId });
    this.applied(this.engine.forget(rec.agentId, now));
    for (const id of rec.ids) {
      const key = semaphoreKey(rec.service, rec.instance, id);
      this.history.delete(key);
      this.totals.delete(key);
    }
    this.agents.delete(rec.agentId);
    this.changes.agentRemoved(rec.agentId);
  }

  // ---- people ----

  /** Acknowledge an alert; undefined when no such alert is kept. */
  acknowledge(id: string): Alert | undefined {
    if (this.engine.alert(id) === undefined) return undefined;
    const now = this.now();
    this.record({ r: now, k: "ack", p: { id } });
    this.applied(this.engine.acknowledge(id, now));
    return this.engine.alert(id);
  }

  /** Throws TypeError/RangeError (from the engine) for a bad patch, and then changes nothing. */
  setThresholds(patch: ThresholdsPatch): AlertThresholds {
    const next = this.engine.setThresholds(patch);
    this.record({ r: this.now(), k: "thresholds", p: patch });
    this.changes.thresholdsChanged();
    return next;
  }

  // ---- reading ----

  hubInfo(): HubState["hub"] {
    return { version: this.version, startedAt: this.startedAt, rejected: this.rejected };
  }

  state(): HubState {
    return {
      hub: this.hubInfo(),
      agents: this.engine.agents(),
      semaphores: this.engine.semaphores(),
      alerts: this.engine.activeAlerts(),
    };
  }

  get agentCount(): number {
    return this.agents.size;
  }

  get recording(): { file: string; lines: number; bytes: number; open: boolean } | null {
    const r = this.recorder;
    return r === undefined ? null : { file: r.file, lines: r.lines, bytes: r.bytes, open: r.open };
  }

  close(): void {
    this.recorder?.close();
  }

  // ---- internals ----

  private overSemaphoreLimit(rec: AgentRecord, items: readonly { id: string }[]): string | null {
    let fresh = 0;
    let seen: Set<string> | undefined;
    for (const { id } of items) {
      if (rec.ids.has(id) || seen?.has(id) === true) continue;
      (seen ??= new Set()).add(id);
      fresh++;
    }
    if (rec.ids.size + fresh <= LIMITS.maxSemaphoresPerAgent) return null;
    return `too many semaphores: an agent may report at most ${LIMITS.maxSemaphoresPerAgent}`;
  }

  private record(line: RecordLine): void {
    this.recorder?.write(line);
  }

  private applied(changes: AlertChange[], rec?: AgentRecord): void {
    if (rec !== undefined) this.changes.agent(rec.agentId);
    if (changes.length > 0) this.changes.alert(changes);
  }
}
