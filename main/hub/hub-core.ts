// The hub's state and the one place that feeds the alert engine and the history: every input
// arrives here already validated (agent-session.ts parses), is stamped with the hub clock, fed
// to the engine, recorded, and marked for dashboards. Knows nothing of sockets or HTTP.
import { AlertEngine, type AlertChange, type AlertThresholds, type ThresholdsPatch, type WarmHandle } from "../../shared/alerts/index.js";
import { addCounters, COUNTERS, HistoryStore, type HistoryEntry } from "../../shared/history/index.js";
import {
  globalViews,
  LIMITS,
  PROTOCOL_VERSION,
  semaphoreKey,
  type Alert,
  type EventsBatch,
  type FlightRecord,
  type Hello,
  type HubState,
  type Register,
  type SamplesBatch,
} from "../../shared/protocol/index.js";
import { SemaphoreKeys } from "../../shared/protocol/semaphore-keys.js";
import { performance } from "node:perf_hooks";
import { AlertEvidence, DIAGNOSED_RULE_BITS, FLIGHT_RULES, type WatchedList } from "./alert-evidence.js";
import { ChangeTracker } from "./change-tracker.js";
import { SampleArena } from "./sample-arena.js";
import { FlightLinks } from "./flight-links.js";
import type { RecordLine, RecordSink } from "./recorder.js";
import { SeqWindow } from "./seq-window.js";
import { QuietFill } from "./quiet-fill.js";

/** What the hub keeps per agent across its connections (a hello with a known agentId resumes it). */
export interface AgentRecord {
  readonly agentId: string;
  service: string;
  instance: string;
  /** Sample batches already accepted, for dedupe. */
  readonly seqs: SeqWindow;
  /** Semaphore ids the engine holds for it: registered ones and any seen in samples or events since. */
  ids: Set<string>;
  /** semaphoreKey(service, instance, id) by id, one string per semaphore (replaced with the identity). */
  keys: SemaphoreKeys;
  /** What storing a sample needs of each semaphore, by id, found with one small lookup (replaced with the identity). */
  slots: Map<string, SemaphoreSlot>;
  intervalMs: number;
  /** The connection speaking for it; a stale connection's close does not mark it down. */
  owner: number | undefined;
  disconnectedAt: number | null;
}

/**
 * One semaphore of an agent as the store path sees it: its key, its counter totals and a handle on
 * its history, so a sample costs one lookup in its agent's small map instead of one per structure
 * in maps of every semaphore the hub holds (each a likely cache miss at 10,000 semaphores).
 */
export interface SemaphoreSlot {
  /** The semaphore's id, as its agent reports it. */
  readonly id: string;
  readonly key: string;
  readonly totals: Float64Array;
  /** Whether a StoreJob has counted its first sample (the history it creates: NEW_SEMAPHORE_UNITS). */
  counted: boolean;
  /** Undefined until its first sample is stored; no longer alive once the store dropped it. */
  history: HistoryEntry | undefined;
  /** ChangeTracker.changed()'s mark. */
  changedMark: number;
  /** What the engine keeps of it, once it keeps something: storeItems warms it. */
  engineState: WarmHandle | undefined;
  /** Its diagnosed alerts as AlertEvidence follows them, once it had one (refreshEvidence; may be emptied since). */
  watched: WatchedList | undefined;
}

/** Per-semaphore running totals of the sample counters, for /metrics: the history's COUNTERS order. */
export const COUNTER_FIELDS = COUNTERS;

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
  /**
   * Lets acknowledged small batches be stored a little later, together (see HubCore.defer): called
   * when the first is put off (`urgent`: when MAX_DEFERRED_JOBS are waiting), and the caller then
   * runs flushDeferred() soon (hub.ts: within STORE_DELAY_MS). Absent: every batch is stored at once.
   */
  deferStores?: (urgent: boolean) => void;
}

export type SamplesOutcome = { ok: true; duplicate: boolean } | { ok: false; error: string };
export type SamplesStart = { ok: true; duplicate: true } | { ok: true; duplicate: false; job: StoreJob } | { ok: false; error: string };

/**
 * An accepted samples batch being stored a slice of items at a time (history, totals, engine), so
 * a full batch does not hold the event loop for its whole cost. The engine evaluates per item, so
 * slices change it exactly as the whole batch would; HubCore keeps anything that could tell the
 * difference (another input for the same service, the tick, a person's change) from running
 * between two slices by finishing the job first (settle()).
 */
/**
 * Work units of an item whose semaphore the hub has no history for yet: creating one (its rings)
 * costs ~20× storing a sample into it (1,000 new: ~270 ms, then ~12 ms a batch).
 */
export const NEW_SEMAPHORE_UNITS = 16;
/** What storing an item costs in work units: more for its semaphore's first (see NEW_SEMAPHORE_UNITS). */
function unitsOf(slot: SemaphoreSlot): number {
  return slot.counted ? 1 : 1 + NEW_SEMAPHORE_UNITS;
}

/** Items stored per engine call within a slice, between looks at the clock. */
const CHUNK_ITEMS = 8;
/** A slice stops once it has taken this long (see StoreJob.step). */
export const MAX_SLICE_MS = 2;
/** Stores put off at most (HubCore.defer): past it the caller is asked to flush at once. */
export const MAX_DEFERRED_JOBS = 256;
/** Entries HubCore's `jobs` map keeps before it sweeps those of services with nothing being stored. */
const MAX_IDLE_JOB_ENTRIES = 256;

export class StoreJob {
  private next = 0;
  private units = 0;
  private finished = false;
  /** Put off by HubCore.defer: stored by the next flushDeferred(), which every settle() and every batch stored at once run first. */
  deferred = false;
  /** The units fitsIn() found it would take, when it fitted. */
  planned = 0;
  /**
   * Each item's slot, found once (counting its units) for every structure that needs it: one
   * lookup in its agent's map per item instead of one per structure.
   */
  private readonly slots: SemaphoreSlot[] = [];

  /** Where pack() put its items in the core's arena; -1 while `batch` holds them. */
  private packedAt = -1;
  /** Items in the batch. */
  private readonly count: number;

  constructor(
    private readonly core: HubCore,
    readonly rec: AgentRecord,
    /** The batch as accepted; once packed, its header alone (its items are in the arena). */
    private batch: SamplesBatch,
    private readonly now: number,
  ) {
    this.count = batch.items.length;
  }

  /** Work units done so far: one per item, NEW_SEMAPHORE_UNITS more for each new semaphore. */
  get work(): number {
    return this.units;
  }

  get done(): boolean {
    return this.finished;
  }

  /**
   * Stores items worth up to `maxUnits` more (at least one item), in chunks of a few items, and
   * stops early once a finite slice has taken MAX_SLICE_MS: what an item costs varies (a batch
   * that raises 1,000 alerts at once costs ~10× one that raises none). True once all are in.
   */
  step(maxUnits: number): boolean {
    if (this.finished) return true;
    try {
      // Batches accepted before this one and deferred go first (HubCore.defer).
      if (!this.deferred) this.core.flushDeferred();
      const { rec } = this;
      const batch = this.packedAt < 0 ? this.batch : this.core.arena.unpack(this.batch, this.packedAt, this.slots);
      const all = batch.items;
      const whole = !Number.isFinite(maxUnits);
      const deadline = whole ? Infinity : performance.now() + MAX_SLICE_MS;
      let units = 0;
      do {
        const start = this.next;
        let end = start;
        while (end < all.length && (end === start || ((whole || end - start < CHUNK_ITEMS) && units < maxUnits))) {
          const slot = this.slotAt(end);
          units += unitsOf(slot);
          slot.counted = true;
          end++;
        }
        this.core.storeItems(batch, this.slots, start, end);
        const items = start === 0 && end === all.length ? all : all.slice(start, end);
        this.next = end;
        const activeRules = this.core.activeRules(end - start);
        const known = this.core.engineStates(this.slots, start, end);
        this.core.applyEngine(this.core.engine.samples(rec.agentId, items === all ? batch : { ...batch, items }, this.now, activeRules, known), rec);
        if (this.core.evidence.watching) this.core.refreshEvidence(batch.t, this.slots, start, end, activeRules);
      } while (this.next < all.length && units < maxUnits && performance.now() < deadline);
      this.units += units;
    } catch (err) {
      this.finish();
      throw err;
    }
    if (this.next >= this.count) this.finish();
    else this.hold();
    return this.finished;
  }

  /**
   * Whether storing it all would take at most `units` work units (see `work`). Finds the slots
   * (making new ones) of the items it counts, which step() then uses without looking again.
   */
  fitsIn(units: number): boolean {
    let total = 0;
    for (let i = 0; i < this.count; i++) {
      total += unitsOf(this.slotAt(i));
      if (total > units) return false;
    }
    this.planned = total;
    return true;
  }

  /** Item i's slot, found (or made) the first time it is asked for. Once packed, every item's was found (pack()). */
  private slotAt(i: number): SemaphoreSlot {
    return (this.slots[i] ??= this.core.slot(this.rec, this.batch.items[i].id));
  }

  /**
   * Puts its items into the core's arena (see sample-arena.ts) and lets go of the parsed batch,
   * for a job that waits to be stored (HubCore.defer) and has not begun. False when it keeps them
   * (an item with a `global` part).
   */
  pack(): boolean {
    const { items } = this.batch;
    if (this.packedAt >= 0 || this.next > 0 || !SampleArena.packable(items)) return false;
    for (let i = 0; i < items.length; i++) this.slotAt(i);
    this.packedAt = this.core.arena.pack(items);
    const { seq, t, intervalMs } = this.batch;
    this.batch = { seq, t, intervalMs, items: [] };
    return true;
  }

  /** Marks its service busy until it is finished: call it before returning to the event loop with the job not done. */
  hold(): void {
    if (!this.finished) this.core.jobSliced(this);
  }

  private finish(): void {
    this.finished = true;
    this.core.jobFinished(this);
  }
}

export class HubCore {
  readonly engine: AlertEngine;
  readonly history: HistoryStore;
  readonly changes = new ChangeTracker();
  /** Flight recorder rings and diagnoses on alerts (alert-evidence.ts). */
  readonly evidence: AlertEvidence;
  /** Agents' connections, for flight_request (flight-links.ts); empty in a replay. */
  readonly flightLinks = new FlightLinks();
  readonly startedAt: number;
  readonly version: string;
  readonly now: () => number;
  /** hub.rejected in /api/state: every refused handshake, message, or connection closed for size. */
  rejected = 0;
  readonly stats = { accepted: 0, duplicates: 0, rateLimited: 0, closedForSize: 0, handshakesRefused: 0, uiDropped: 0 };
  readonly totals = new Map<string, Float64Array>();
  private readonly agents = new Map<string, AgentRecord>();
  private readonly recorder: RecordSink | undefined;
  private readonly forgetAfterMs: number;
  /**
   * Samples batches being stored, by service (see StoreJob); null once stored. A stored job's entry
   * is reset, not deleted: every batch passes through here, and a Map that drops to empty shrinks
   * its table, which the next set() allocates again. That was the largest of the hub's own
   * allocations to outlive a scavenge (bench:hub's heap profile): the Map is old, so its new table
   * is promoted.
   */
  private readonly jobs = new Map<string, StoreJob | null>();
  /** Entries of `jobs` that are not null. */
  private jobsBusy = 0;
  /** Deferred stores not yet done, in the order they were accepted (see defer()); never in `jobs`. */
  private deferred: StoreJob[] = [];
  /** The deferred stores' items (StoreJob.pack), until they are stored. */
  readonly arena = new SampleArena();
  private readonly deferStores: ((urgent: boolean) => void) | undefined;
  /** Changed entries only: quiet samples for semaphores an interval left out that a rule still needs. */
  private readonly quiet = new QuietFill();
  /** engine.samples()'s activeRules, reused (see activeRules()). */
  private activeRulesScratch = new Uint8Array(64);
  /** engine.samples()'s `known`, reused (see engineStates()). */
  private readonly engineStatesScratch: (WarmHandle | undefined)[] = [];

  /** What storeItems' warming loads read: kept, so that no compiler drops them as unused. */
  private warmth = 0;

  constructor(opts: HubCoreOptions) {
    this.now = opts.now;
    this.version = opts.version;
    this.engine = new AlertEngine({ thresholds: opts.thresholds });
    this.history = new HistoryStore({
      maxSemaphores: opts.maxHistories,
      maxBytes: opts.maxHistoryBytes,
      now: opts.now,
      longLived: opts.longLived === true,
    });
    this.evidence = new AlertEvidence(this.engine, this.history);
    this.recorder = opts.recorder;
    this.forgetAfterMs = opts.forgetAfterMs;
    this.deferStores = opts.deferStores;
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
    let rec = this.agents.get(hello.agentId);
    // Nothing half-stored of the service it joins, or (a resumed agent changing its name) leaves.
    this.settle(hello.service);
    if (rec !== undefined && rec.service !== hello.service) this.settle(rec.service);
    const now = this.now();
    if (rec === undefined) {
      rec = {
        agentId: hello.agentId,
        service: hello.service,
        instance: hello.instance,
        seqs: new SeqWindow(),
        ids: new Set(),
        keys: new SemaphoreKeys(hello.service, hello.instance),
        slots: new Map(),
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
      rec.keys = new SemaphoreKeys(hello.service, hello.instance);
      rec.slots = new Map();
      this.changes.structural();
    }
    rec.owner = connection;
    rec.disconnectedAt = null;
    this.quiet.hello(hello.agentId, hello.features);
    this.stats.accepted++;
    this.record({ r: now, k: "hello", a: hello.agentId, p: hello });
    this.applied(this.engine.hello(hello.agentId, hello, now), rec);
    return rec;
  }

  register(rec: AgentRecord, reg: Register): void {
    this.settle(rec.service);
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "register", a: rec.agentId, p: reg });
    rec.ids = new Set(reg.semaphores.map((s) => s.id));
    this.quiet.keepOnly(rec.agentId, rec.ids);
    // A slot adds its id to rec.ids once, when made: made again, an id the register dropped is counted again.
    rec.slots = new Map();
    for (const id of rec.ids) this.changes.key(rec.keys.key(id));
    this.changes.structural();
    this.applied(this.engine.register(rec.agentId, reg.semaphores, now), rec);
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
    // Not the deferred stores: a batch deferred too is stored after them, in order, and one
    // stored now stores them first (StoreJob.step).
    this.settleSliced(rec.service);
    if (rec.seqs.has(sent.seq)) {
      this.stats.duplicates++;
      this.touch(rec);
      return { ok: true, duplicate: true };
    }
    const refusal = this.overSemaphoreLimit(rec, sent.items);
    if (refusal !== null) return { ok: false, error: refusal };
    const batch = this.quiet.complete(rec.agentId, sent, (id) => rec.keys.key(id), this.engine.thresholds);
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "samples", a: rec.agentId, p: batch });
    rec.seqs.add(batch.seq);
    rec.intervalMs = batch.intervalMs;
    // Registered in `jobs` only if its first step leaves it half done (jobSliced): one stored
    // whole in that step is never seen half done by anything else.
    return { ok: true, duplicate: false, job: new StoreJob(this, rec, batch, now) };
  }

  /** The slot of an agent's semaphore `id`, made if new. */
  slot(rec: AgentRecord, id: string): SemaphoreSlot {
    return rec.slots.get(id) ?? this.newSlot(rec, id);
  }

  /** StoreJob's part: history and totals for a batch's items [from, to), whose slots are `slots`' same indices. */
  storeItems(batch: SamplesBatch, slots: readonly SemaphoreSlot[], from: number, to: number): void {
    const { t, intervalMs, items } = batch;
    // Every item's history was last touched a second ago, with 10,000 others since: what a store
    // reads is cold, and each read waits for the one before it (slot, history, tier, ring,
    // columns). Touching each item's state first, in a loop of loads alone, lets the processor
    // have the items' misses outstanding together; the stores then find their lines in cache.
    // (In process, 1,000 agents × 10 semaphores: 8-9 % less per sample.) The engine's state of
    // each (its tracker: rule state, latest sample, timeouts window) too, which engine.samples()
    // then reads right after: 6-10 % less again, 12 minutes in.
    let warm = 0;
    for (let i = from; i < to; i++) {
      const slot = slots[i];
      warm += slot.totals[0];
      if (slot.history !== undefined) warm += this.history.warm(slot.history);
      let state = slot.engineState;
      if (state === undefined || state.retired) state = slot.engineState = this.engine.warmHandle(slot.key);
      if (state !== undefined) warm += state.warm();
      // What refreshEvidence reads of a semaphore with a diagnosed alert (its next refresh time).
      const watched = slot.watched;
      if (watched !== undefined && watched.length !== 0) warm += watched[0].nextT;
    }
    this.warmth = warm;
    for (let i = from; i < to; i++) {
      const item = items[i];
      const slot = slots[i];
      const h = slot.history;
      if (h !== undefined && h.alive) this.history.pushTo(h, item, t, intervalMs);
      else {
        this.history.push(slot.key, item, t, intervalMs);
        slot.history = this.history.entry(slot.key);
      }
      addCounters(slot.totals, item);
      this.changes.changed(slot);
    }
  }

  private newSlot(rec: AgentRecord, id: string): SemaphoreSlot {
    rec.ids.add(id);
    const key = rec.keys.key(id);
    let totals = this.totals.get(key);
    if (totals === undefined) this.totals.set(key, (totals = new Float64Array(COUNTER_FIELDS.length)));
    const slot: SemaphoreSlot = { id, key, totals, counted: false, history: undefined, changedMark: 0, engineState: undefined, watched: undefined };
    rec.slots.set(id, slot);
    return slot;
  }

  applyEngine(changes: AlertChange[], rec: AgentRecord): void {
    this.applied(changes, rec);
  }

  /** A job stopped between two slices: until it finishes, its service is busy (settle() finishes it). */
  jobSliced(job: StoreJob): void {
    const service = job.rec.service;
    if ((this.jobs.get(service) ?? null) === null) this.jobsBusy++;
    this.jobs.set(service, job);
  }

  jobFinished(job: StoreJob): void {
    const service = job.rec.service;
    if (this.jobs.get(service) !== job) return;
    this.jobs.set(service, null);
    this.jobsBusy--;
    // Services come and go (a hello may name a new one): idle entries are swept now and then.
    if (this.jobs.size > MAX_IDLE_JOB_ENTRIES) for (const [k, v] of this.jobs) if (v === null) this.jobs.delete(k);
  }

  /**
   * A batch of `service` (of any service, without one) is half stored, between two slices. A
   * deferred store does not count: it is small, and whatever would see it undone stores it first.
   */
  busy(service?: string): boolean {
    return service === undefined ? this.jobsBusy > 0 : (this.jobs.get(service) ?? null) !== null;
  }

  /**
   * Finishes the stores in progress (of `service`, or all) and every deferred one now, so what
   * comes next sees them whole. (Deferred stores go all at once, oldest first: services' states
   * are apart, so only the order within one matters, and inputs other than samples are rare.)
   */
  settle(service?: string): void {
    this.flushDeferred();
    this.settleSliced(service);
  }

  /** Finishes the stores in progress between two slices (of `service`, or all), not the deferred ones. */
  private settleSliced(service?: string): void {
    if (this.jobsBusy === 0) return;
    if (service !== undefined) {
      this.jobs.get(service)?.step(Infinity);
      return;
    }
    for (const job of [...this.jobs.values()]) job?.step(Infinity);
  }

  /**
   * Puts off storing an accepted small batch, answered as it is put off (SamplesJob), until
   * flushDeferred(). Every input that could tell the difference runs that first: settle() does
   * (any input but another small samples batch, the tick, a person's change, and the hub's
   * readers, hub.ts and ui-namespace.ts), and so does a batch stored at once (StoreJob.step). So
   * the engine sees each service's inputs in the order they were accepted, as a replay of the
   * recording does. Why: stored one at a time between two messages' socket work, a batch found
   * the store's code and the hub's shared state evicted by the socket path's, and the other way
   * round; stored ~50 at a time, each side runs warmer (bench:hub: 0.4–0.7 µs a sample less,
   * docs/benchmarks.md). False: stores are not deferred here (no deferStores option), or the job
   * cannot be; the caller stores it.
   */
  defer(job: StoreJob): boolean {
    // Only a job not begun: one held between slices is its service's half-stored batch.
    if (this.deferStores === undefined || job.done || job.deferred || job.work > 0 || this.jobs.get(job.rec.service) === job) return false;
    job.deferred = true;
    job.pack();
    this.deferred.push(job);
    if (this.deferred.length === 1) this.deferStores(false);
    else if (this.deferred.length === MAX_DEFERRED_JOBS) this.deferStores(true);
    return true;
  }

  /** Stores every deferred batch now, oldest first. A store that throws still lets the others run; the first error is rethrown. */
  flushDeferred(): void {
    if (this.deferred.length === 0) return;
    const jobs = this.deferred;
    this.deferred = [];
    let failure: { err: unknown } | undefined;
    for (const job of jobs) {
      try {
        job.step(Infinity);
      } catch (err) {
        failure ??= { err };
      }
    }
    // Emptied, not just dropped: should V8 pretenure this array's allocation site, a dead array in
    // the old generation would keep its jobs alive through young GCs (see Lane in agent-scheduler.ts).
    jobs.length = 0;
    // Every job packed into it is stored (unless one was deferred meanwhile): the next pack from the start.
    if (this.deferred.length === 0) this.arena.reset();
    if (failure !== undefined) throw failure.err;
  }

  events(rec: AgentRecord, batch: EventsBatch): { ok: true } | { ok: false; error: string } {
    this.settle(rec.service);
    const refusal = this.overSemaphoreLimit(rec, batch.items);
    if (refusal !== null) return { ok: false, error: refusal };
    const now = this.now();
    this.stats.accepted++;
    this.record({ r: now, k: "events", a: rec.agentId, p: batch });
    for (const ev of batch.items) rec.ids.add(ev.id);
    this.applied(this.engine.events(rec.agentId, batch, now), rec);
    return { ok: true };
  }

  /**
   * An agent's flight recorder ring, already checked (schema, and by the session: an answer to a
   * request of ours), attached to its alert. Replays call it for each recorded `flight` line.
   */
  flight(rec: AgentRecord, record: FlightRecord): { ok: true } | { ok: false; error: string } {
    this.settle(rec.service);
    const out = this.evidence.flight(rec.service, rec.instance, record);
    if (!out.ok) return out;
    this.stats.accepted++;
    this.record({ r: this.now(), k: "flight", a: rec.agentId, p: record });
    this.applied(out.changes, rec);
    return { ok: true };
  }

  /** `slots[from..to)`' engine states (engine.samples' `known`, see storeItems), in an array reused by every store. */
  engineStates(slots: readonly SemaphoreSlot[], from: number, to: number): readonly (WarmHandle | undefined)[] {
    const out = this.engineStatesScratch;
    out.length = to - from;
    for (let i = from; i < to; i++) out[i - from] = slots[i].engineState;
    return out;
  }

  /** Room for `n` items' active rules (engine.samples), reused by every store. */
  activeRules(n: number): Uint8Array {
    if (n > this.activeRulesScratch.length) this.activeRulesScratch = new Uint8Array(Math.max(n, 2 * this.activeRulesScratch.length));
    return this.activeRulesScratch;
  }

  /**
   * StoreJob's part while a diagnosed alert is active: its diagnosis follows the samples. Only
   * for items whose semaphore has one (`activeRules`, from engine.samples for items [from, to),
   * from index 0), which AlertEvidence watches exactly: in a wide incident a lookup in its map for
   * every sample was ~0.13 µs of each (bench:hub's workload 12 minutes in, in process). The slot
   * keeps the list that lookup finds, until it is emptied (WatchedList).
   */
  refreshEvidence(t: number, slots: readonly SemaphoreSlot[], from: number, to: number, activeRules: Uint8Array): void {
    for (let i = from; i < to; i++) {
      if ((activeRules[i - from] & DIAGNOSED_RULE_BITS) === 0) continue;
      const slot = slots[i];
      let watched = slot.watched;
      if (watched === undefined || watched.length === 0) watched = slot.watched = this.evidence.watchedOf(slot.key);
      if (watched === undefined) continue;
      const more = this.evidence.afterSampleOf(slot.key, watched, t);
      if (more.length > 0) this.changes.alert(more);
    }
  }

  /** A refused (or duplicate) message: it still proves the agent alive. */
  touch(rec: AgentRecord): void {
    this.settle(rec.service);
    const now = this.now();
    this.record({ r: now, k: "touch", a: rec.agentId });
    this.applied(this.engine.touch(rec.agentId, now), rec);
  }

  disconnect(connection: number, rec: AgentRecord): void {
    // A newer connection took the agent over: this one's close says nothing about the agent.
    if (rec.owner !== connection) return;
    this.settle(rec.service);
    const now = this.now();
    rec.owner = undefined;
    rec.disconnectedAt = now;
    this.record({ r: now, k: "disconnect", a: rec.agentId });
    this.applied(this.engine.disconnect(rec.agentId, now), rec);
  }

  // ---- the hub clock ----

  /** agent_down for silent agents; forgets agents disconnected past forgetAfterMs. */
  tick(): void {
    this.settle();
    const now = this.now();
    // tick changes nothing unless some agent is connected, so only those ticks are recorded:
    // a replay that ticks exactly where the hub did raises exactly the same agent_down alerts.
    if (this.engine.anyConnected()) {
      this.record({ r: now, k: "tick" });
      this.applied(this.engine.tick(now));
    }
    if (this.forgetAfterMs <= 0) return;
    // No copy of the map: forget() deletes only the entry being visited, which a Map's iterator allows.
    for (const rec of this.agents.values()) {
      if (rec.owner === undefined && rec.disconnectedAt !== null && now - rec.disconnectedAt >= this.forgetAfterMs) this.forget(rec, now);
    }
  }

  /** Public for replay-session.ts, which forgets where the recording says the hub did. */
  forget(rec: AgentRecord, now: number): void {
    this.record({ r: now, k: "forget", a: rec.agentId });
    this.quiet.forget(rec.agentId);
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
    this.settle();
    const now = this.now();
    this.record({ r: now, k: "ack", p: { id } });
    this.applied(this.engine.acknowledge(id, now));
    return this.engine.alert(id);
  }

  /** Throws TypeError/RangeError (from the engine) for a bad patch, and then changes nothing. */
  setThresholds(patch: ThresholdsPatch): AlertThresholds {
    this.settle();
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
    const agents = this.engine.agents();
    const semaphores = this.engine.semaphores();
    const live = new Set(agents.filter((a) => a.connected).map((a) => a.agentId));
    const withT = semaphores.map((s) => ({ ...s, t: this.history.get(s.key)?.latestT() ?? null }));
    const globals = globalViews(withT, (id) => live.has(id));
    const state: HubState = { hub: this.hubInfo(), agents, semaphores, alerts: this.engine.activeAlerts() };
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
    this.settle();
    this.recorder?.close();
  }

  // ---- internals ----

  private overSemaphoreLimit(rec: AgentRecord, items: readonly { id: string }[]): string | null {
    // Within the limit even if every item were new: the usual batch needs no lookup here.
    if (rec.ids.size + items.length <= LIMITS.maxSemaphoresPerAgent) return null;
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
    if (changes.length === 0) return;
    this.quiet.onAlerts(changes);
    this.changes.alert(changes);
    const more = this.evidence.onChanges(changes);
    if (more.length > 0) this.changes.alert(more);
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
