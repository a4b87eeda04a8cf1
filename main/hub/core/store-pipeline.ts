// How an accepted samples batch reaches the history, the totals and the alert engine: a StoreJob
// stores it a slice at a time, or later with others (defer). The pipeline keeps each service's
// inputs in the order they were accepted: the core reaches the engine only through settled(),
// which first finishes whatever of that service is half stored or put off.
import { performance } from "node:perf_hooks";
import type { AlertChange, AlertEngine } from "../../../shared/alerts/index.js";
import { addCounters, type HistoryStore } from "../../../shared/history/index.js";
import type { SamplesBatch } from "../../../shared/protocol/index.js";
import { DIAGNOSED_RULE_BITS, type AlertEvidence } from "./alert-evidence.js";
import type { ChangeTracker } from "./change-tracker.js";
import type { AgentRecord, AgentRegistry, SemaphoreSlot } from "./registry.js";
import { SampleArena } from "./sample-arena.js";

/** What the pipeline stores into: the core's parts. */
export interface StoreTarget {
  readonly engine: AlertEngine;
  readonly history: HistoryStore;
  readonly registry: AgentRegistry;
  readonly evidence: AlertEvidence;
  readonly changes: ChangeTracker;
  /** The core's bookkeeping of the alert changes an agent's input caused. */
  applied(changes: AlertChange[], rec: AgentRecord): void;
  /** Alert changes made while storing (a diagnosis following the samples): to dashboards and forwarding. */
  alertsChanged(changes: readonly AlertChange[]): void;
}

/**
 * Work units of an item whose semaphore has no history yet: creating one (its rings) costs ~20×
 * storing a sample into it.
 */
export const NEW_SEMAPHORE_UNITS = 16;
/** Items stored per engine call within a slice, between looks at the clock. */
const CHUNK_ITEMS = 8;
/** A slice stops once it has taken this long (see StoreJob.step). */
export const MAX_SLICE_MS = 2;
/** Stores put off at most (defer): past it the hub is asked to flush at once. */
export const MAX_DEFERRED_JOBS = 256;
/** Entries `jobs` keeps before it sweeps those of services with nothing being stored. */
const MAX_IDLE_JOB_ENTRIES = 256;

function unitsOf(slot: SemaphoreSlot): number {
  return slot.counted ? 1 : 1 + NEW_SEMAPHORE_UNITS;
}

/**
 * An accepted samples batch being stored a slice of items at a time. The engine evaluates per
 * item, so slices change it exactly as the whole batch would; the pipeline finishes the job
 * before anything that could tell the difference runs (settled()).
 */
export class StoreJob {
  private next = 0;
  private units = 0;
  private finished = false;
  /** Put off by defer(): stored by the next flush(), which every settle and every batch stored at once run first. */
  deferred = false;
  /** The units fitsIn() found it would take, when it fitted. */
  planned = 0;
  /** Each item's slot, found once for every structure that needs it. */
  private readonly slots: SemaphoreSlot[] = [];
  /** Where pack() put its items in the arena; -1 while `batch` holds them. */
  private packedAt = -1;
  private readonly count: number;

  constructor(
    private readonly pipeline: StorePipeline,
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
   * stops early once a finite slice has taken MAX_SLICE_MS. True once all are in.
   */
  step(maxUnits: number): boolean {
    if (this.finished) return true;
    const p = this.pipeline;
    try {
      // Batches accepted before this one and deferred go first.
      if (!this.deferred) p.flush();
      const batch = this.packedAt < 0 ? this.batch : p.arena.unpack(this.batch, this.packedAt, this.slots);
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
        this.next = end;
        p.store(this.rec, batch, this.slots, start, end, this.now);
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

  /** Whether storing it all would take at most `units` work units; finds (or makes) the slots it counts. */
  fitsIn(units: number): boolean {
    let total = 0;
    for (let i = 0; i < this.count; i++) {
      total += unitsOf(this.slotAt(i));
      if (total > units) return false;
    }
    this.planned = total;
    return true;
  }

  private slotAt(i: number): SemaphoreSlot {
    return (this.slots[i] ??= this.pipeline.target.registry.slot(this.rec, this.batch.items[i].id));
  }

  /** Puts its items into the arena and lets go of the parsed batch, for a job not begun. False when it keeps them (an item with a `global` part). */
  pack(): boolean {
    const { items } = this.batch;
    if (this.packedAt >= 0 || this.next > 0 || !SampleArena.packable(items)) return false;
    for (let i = 0; i < items.length; i++) this.slotAt(i);
    this.packedAt = this.pipeline.arena.pack(items);
    const { seq, t, intervalMs } = this.batch;
    this.batch = { seq, t, intervalMs, items: [] };
    return true;
  }

  /** Marks its service busy until it is finished: call it before returning to the event loop with the job not done. */
  hold(): void {
    if (!this.finished) this.pipeline.sliced(this);
  }

  private finish(): void {
    this.finished = true;
    this.pipeline.finished(this);
  }
}

export class StorePipeline {
  /**
   * Jobs stopped between two slices, by service; null once stored. Entries are reset rather than
   * deleted: a Map emptied shrinks its table, which the next set() allocates again.
   */
  private readonly jobs = new Map<string, StoreJob | null>();
  /** Entries of `jobs` that are not null. */
  private jobsBusy = 0;
  /** Deferred stores not yet done, in the order they were accepted; never in `jobs`. */
  private deferred: StoreJob[] = [];
  /** The deferred stores' items (StoreJob.pack), until they are stored. */
  readonly arena = new SampleArena();
  /** engine.feed()'s buffers, reused by every store. */
  private readonly feed = { entries: [] as SemaphoreSlot[], activeRules: new Uint8Array(64) };
  /** What store()'s warming loads read: kept, so that no compiler drops them as unused. */
  private warmth = 0;

  /**
   * `deferStores`: lets acknowledged small batches be stored a little later, together; called when
   * the first is put off (`urgent`: when MAX_DEFERRED_JOBS wait), and the caller then runs flush()
   * soon. Absent: every batch is stored at once.
   */
  constructor(
    readonly target: StoreTarget,
    private readonly deferStores?: (urgent: boolean) => void,
  ) {}

  /** The one way samples get in: the job that stores an accepted batch (the core accepts it). */
  job(rec: AgentRecord, batch: SamplesBatch, now: number): StoreJob {
    // Registered in `jobs` only if its first step leaves it half done (sliced).
    return new StoreJob(this, rec, batch, now);
  }

  /** The engine, once every input of `service` (of every service, without one) accepted so far is stored. */
  settled(service?: string): AlertEngine {
    this.flush();
    this.settleSliced(service);
    return this.target.engine;
  }

  /** Finishes the jobs stopped between two slices (of `service`, or all), not the deferred ones. */
  settleSliced(service?: string): void {
    if (this.jobsBusy === 0) return;
    if (service !== undefined) {
      this.jobs.get(service)?.step(Infinity);
      return;
    }
    for (const job of [...this.jobs.values()]) job?.step(Infinity);
  }

  /**
   * One slice (up to `maxUnits`) of the job of `service` stopped between two slices, if there is
   * one: what an input waiting for it does instead of finishing it whole in one turn. The units
   * it stored: 0 when none was half done.
   */
  advance(service: string, maxUnits: number): number {
    const job = this.jobs.get(service);
    if (job === undefined || job === null) return 0;
    const before = job.work;
    job.step(maxUnits);
    return Math.max(1, job.work - before);
  }

  /** A batch of `service` (of any service, without one) is half stored, between two slices. Deferred stores do not count. */
  busy(service?: string): boolean {
    return service === undefined ? this.jobsBusy > 0 : (this.jobs.get(service) ?? null) !== null;
  }

  /**
   * Puts off storing a small accepted batch, answered as it is put off, until flush(). Everything
   * that could tell the difference flushes first (settled(), a batch stored at once, the hub's
   * readers), so the engine sees each service's inputs in the order they were accepted. Stored
   * ~50 at a time, the store's code and state stay warm between batches. False: not deferred here
   * (no deferStores) or this job cannot be; the caller stores it.
   */
  defer(job: StoreJob): boolean {
    if (this.deferStores === undefined || job.done || job.deferred || job.work > 0 || this.jobs.get(job.rec.service) === job) return false;
    job.deferred = true;
    job.pack();
    this.deferred.push(job);
    if (this.deferred.length === 1) this.deferStores(false);
    else if (this.deferred.length === MAX_DEFERRED_JOBS) this.deferStores(true);
    return true;
  }

  /** Stores every deferred batch now, oldest first. A store that throws still lets the others run; the first error is rethrown. */
  flush(): void {
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
    // Emptied, not just dropped: a pretenured dead array would keep its jobs alive through young GCs.
    jobs.length = 0;
    if (this.deferred.length === 0) this.arena.reset();
    if (failure !== undefined) throw failure.err;
  }

  /** A job stopped between two slices: until it finishes, its service is busy. */
  sliced(job: StoreJob): void {
    const service = job.rec.service;
    if ((this.jobs.get(service) ?? null) === null) this.jobsBusy++;
    this.jobs.set(service, job);
  }

  finished(job: StoreJob): void {
    const service = job.rec.service;
    if (this.jobs.get(service) !== job) return;
    this.jobs.set(service, null);
    this.jobsBusy--;
    if (this.jobs.size > MAX_IDLE_JOB_ENTRIES) for (const [k, v] of this.jobs) if (v === null) this.jobs.delete(k);
  }

  /** Items [from, to) of `batch` (their slots at the same indices of `slots`) into history, totals, engine and evidence. */
  store(rec: AgentRecord, batch: SamplesBatch, slots: readonly SemaphoreSlot[], from: number, to: number, now: number): void {
    const { engine, history, changes, evidence } = this.target;
    const { t, intervalMs, items } = batch;
    // What a store reads is cold (10,000 other semaphores since this one's last sample), and each
    // read waits for the one before it: touching every item's state first, in a loop of loads
    // alone, has the misses outstanding together.
    let warm = 0;
    for (let i = from; i < to; i++) {
      const slot = slots[i];
      warm += slot.totals[0];
      if (slot.history !== undefined) warm += history.warm(slot.history);
      if (slot.tracker !== undefined) warm += slot.tracker.warm();
      const watched = slot.watched;
      if (watched !== undefined && watched.length !== 0) warm += watched[0].nextT;
    }
    this.warmth = warm;
    for (let i = from; i < to; i++) {
      const item = items[i];
      const slot = slots[i];
      const h = slot.history;
      if (h !== undefined && h.alive) history.pushTo(h, item, t, intervalMs);
      else {
        history.push(slot.key, item, t, intervalMs);
        slot.history = history.entry(slot.key);
      }
      addCounters(slot.totals, item);
      changes.changed(slot);
    }
    const n = to - from;
    const feed = this.feed;
    if (n > feed.activeRules.length) feed.activeRules = new Uint8Array(Math.max(n, 2 * feed.activeRules.length));
    feed.entries.length = n;
    for (let i = from; i < to; i++) feed.entries[i - from] = slots[i];
    const part = from === 0 && to === items.length ? batch : { ...batch, items: items.slice(from, to) };
    this.target.applied(engine.feed(rec.agentId, part, now, feed), rec);
    if (evidence.watching) this.refreshEvidence(t, slots, from, to, feed.activeRules);
  }

  /**
   * While a diagnosed alert is active its diagnosis follows the samples, for the items whose
   * semaphore has one (`activeRules`, index 0 for item `from`). The slot keeps the list
   * AlertEvidence watches it with, until it is emptied.
   */
  private refreshEvidence(t: number, slots: readonly SemaphoreSlot[], from: number, to: number, activeRules: Uint8Array): void {
    const { evidence } = this.target;
    for (let i = from; i < to; i++) {
      if ((activeRules[i - from] & DIAGNOSED_RULE_BITS) === 0) continue;
      const slot = slots[i];
      let watched = slot.watched;
      if (watched === undefined || watched.length === 0) watched = slot.watched = evidence.watchedOf(slot.key);
      if (watched === undefined) continue;
      const more = evidence.afterSampleOf(slot.key, watched, t);
      if (more.length > 0) this.target.alertsChanged(more);
    }
  }
}
