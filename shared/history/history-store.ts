// Every semaphore's history, keyed by "<service>/<instance>/<id>", with a bound on how many are
// held, in count and in memory: a hub that keeps seeing new instances (restarts, autoscaling) must
// not grow without end.
//
// At the bound, a new key takes the place of the least recently updated history only if that one
// has been idle for `minIdleMs` (evicted, and counted). Otherwise every history held is live, and
// evicting one would only have it rebuilt on its next sample, one eviction evicting the next: so
// the new key is refused (no history, counted) until some history goes idle. What is kept is
// then the histories that are updated, never a churn of fresh rings that hold nothing.
//
// Except for fairness between instances (a key's group: its `<service>/<instance>`, the key up to
// its last `/`): a new key of a group holding less than its share (capacity / groups) takes the
// place of the least recently updated history of the group holding most (groups holding most
// alike take turns), so one instance reporting thousands of live semaphores cannot leave a
// newcomer with no history at all.

import type { Sample, Summary } from "../protocol/types.js";
import type { HistKind, Tier } from "./columnar-window.js";
import { fleetSummary, fleetWindow, type FleetWindow } from "./fleet-window.js";
import { historyFullBytes, resolveHistoryOptions, type SemaphoreHistoryOptions } from "./history-options.js";
import { GroupSizes, HistoryGroup } from "./group-sizes.js";
import { RecencyQueue } from "./recency-queue.js";
import { RecencyTable } from "./recency-table.js";
import { historyPools, SemaphoreHistory, type HistoryPools } from "./semaphore-history.js";

export interface HistoryStoreOptions {
  /** Histories held at most (default 10,000). */
  maxSemaphores?: number;
  /**
   * Typed-array bytes the histories may hold once all are full (default 1 GiB): the store holds
   * at most maxBytes / historyFullBytes(history) of them (3,515 at the default shape), so a
   * memory budget holds whatever the histories do.
   */
  maxBytes?: number;
  /** A history not updated for this long may make room for a new one (default 60 s). */
  minIdleMs?: number;
  /** The clock idleness is measured on (epoch ms). Default Date.now. */
  now?: () => number;
  /** Options for every history the store creates. */
  history?: SemaphoreHistoryOptions;
  /**
   * The store is kept for long (a running hub's, until the hub closes): its rows' memory is
   * allocated so that V8 starts no garbage collection for it (RowPool's `sharedSlabs`). Not for a
   * store dropped and made again often. Default false.
   */
  longLived?: boolean;
}

export const DEFAULT_MAX_SEMAPHORES = 10_000;
export const DEFAULT_MAX_HISTORY_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MIN_IDLE_MS = 60_000;

/**
 * A history held: a handle the hub keeps per semaphore (pushTo), so a sample costs no key lookup.
 * Once the store drops it (evicted, deleted) `alive` is false and it lets go of the history, so a
 * handle kept somewhere does not keep the memory the bound freed. When it was last updated is
 * the store's to keep (recency-table.ts), at `index` while it is alive.
 */
export class HistoryEntry {
  alive = true;
  history: SemaphoreHistory | null;

  constructor(
    readonly key: string,
    history: SemaphoreHistory,
    readonly index: number,
  ) {
    this.history = history;
  }
}

/**
 * A fraction in [0, 1) from the key (FNV-1a): when its history's rings grow (ColumnRing `spread`).
 * From the key rather than a counter or a random draw, so a replay's histories grow as the live
 * hub's did.
 */
export function growthSpread(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) / 2 ** 32;
}

export class HistoryStore {
  /** Histories held at most: the count bound or the memory bound, whichever is lower. */
  readonly capacity: number;
  readonly maxSemaphores: number;
  readonly maxBytes: number;
  readonly minIdleMs: number;
  /** HistoryStoreOptions.longLived. */
  readonly longLived: boolean;
  /** Every history's storage (and shape) comes from these, and goes back to them when it is dropped. */
  private readonly pools: HistoryPools;
  private readonly now: () => number;
  private readonly byKey = new Map<string, HistoryEntry>();
  /** Each live entry's last update and push stamp (the push order: the recency order, ties of time included, without relinking a list per sample). */
  private readonly recency = new RecencyTable();
  private stamps = 0;
  /** Every entry held, least recently updated first: the victim when the least recent is idle. */
  private readonly queue = new RecencyQueue<HistoryEntry>();
  private evictedCount = 0;
  private refusedCount = 0;
  private fairCount = 0;
  /** Each group's histories (groupOf), by key. */
  private readonly groups = new Map<string, HistoryGroup>();
  /** The groups by how many histories each holds: the one holding most in O(1). */
  private readonly sizes = new GroupSizes();

  constructor(opts: HistoryStoreOptions = {}) {
    const max = opts.maxSemaphores ?? DEFAULT_MAX_SEMAPHORES;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxSemaphores must be an integer ≥ 1, got ${String(max)}`);
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_HISTORY_BYTES;
    const full = historyFullBytes(opts.history);
    if (!(maxBytes >= full)) throw new RangeError(`maxBytes must be at least one full history (${full} B), got ${String(maxBytes)}`);
    const idle = opts.minIdleMs ?? DEFAULT_MIN_IDLE_MS;
    if (!(idle >= 0) || !Number.isFinite(idle)) throw new RangeError(`minIdleMs must be finite and ≥ 0, got ${String(idle)}`);
    this.maxSemaphores = max;
    this.maxBytes = maxBytes;
    this.capacity = Math.min(max, Math.floor(maxBytes / full));
    this.minIdleMs = idle;
    this.now = opts.now ?? Date.now;
    this.longLived = opts.longLived === true;
    this.pools = historyPools(resolveHistoryOptions(opts.history), undefined, this.longLived);
  }

  /**
   * Records a sample for `key`, creating its history if there is room (or an idle one to evict).
   * Returns SemaphoreHistory.push's answer: false for a late or duplicate sample, and for a key
   * refused for want of room. O(1) (amortized, when it evicts).
   */
  push(key: string, sample: Sample, t: number, intervalMs: number): boolean {
    const now = this.now();
    const entry = this.byKey.get(key);
    if (entry !== undefined) return this.update(entry, sample, t, intervalMs, now);
    const name = groupOf(key);
    if (this.byKey.size >= this.capacity) {
      const oldest = this.queue.first(this.recency, this.byKey.values());
      if (oldest !== undefined && now - this.recency.updatedAt(oldest.index) >= this.minIdleMs) {
        this.remove(oldest);
      } else {
        const victim = this.fairVictim(this.groups.get(name));
        if (victim === undefined) {
          this.refusedCount++;
          return false;
        }
        this.remove(victim);
        this.fairCount++;
      }
      this.evictedCount++;
    }
    const history = new SemaphoreHistory(undefined, growthSpread(key), this.pools);
    const made = new HistoryEntry(key, history, this.recency.take(now, ++this.stamps));
    this.byKey.set(key, made);
    let group = this.groups.get(name);
    if (group === undefined) this.groups.set(name, (group = new HistoryGroup()));
    group.members.add(made);
    this.sizes.grew(group);
    return history.push(sample, t, intervalMs);
  }

  /** push() through a handle from entry(): no key lookup. A handle no longer alive pushes by its key. */
  pushTo(entry: HistoryEntry, sample: Sample, t: number, intervalMs: number): boolean {
    if (!entry.alive) return this.push(entry.key, sample, t, intervalMs);
    return this.update(entry, sample, t, intervalMs, this.now());
  }

  /**
   * Reads what pushTo(entry) will touch, changing nothing, and returns a number made of it: a
   * caller storing several samples touches them all first, so their cache misses overlap (see
   * the hub's StorePipeline.store). 0 for a handle no longer alive.
   */
  warm(entry: HistoryEntry): number {
    const h = entry.history;
    return h === null ? 0 : this.recency.updatedAt(entry.index) + h.warm();
  }

  /** The handle of `key`'s history, if held. */
  entry(key: string): HistoryEntry | undefined {
    return this.byKey.get(key);
  }

  get(key: string): SemaphoreHistory | undefined {
    return this.byKey.get(key)?.history ?? undefined;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** Drops a history (e.g. its agent unregistered the semaphore). Not counted as an eviction. */
  delete(key: string): boolean {
    const history = this.detach(key);
    history?.release();
    return history !== undefined;
  }

  /**
   * delete(), but the history's rows are the caller's to give back (its release()): an agent's
   * thousands of histories leave the store at once and their rows go back a slice at a time.
   */
  detach(key: string): SemaphoreHistory | undefined {
    const entry = this.byKey.get(key);
    if (entry === undefined) return undefined;
    const history = entry.history ?? undefined;
    entry.history = null;
    this.remove(entry);
    return history;
  }

  /** Keys held, least recently updated first. */
  keys(): string[] {
    return this.byRecency().map((e) => e.key);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Histories evicted for the bound since the store was made. */
  get evicted(): number {
    return this.evictedCount;
  }

  /** Of `evicted`, live histories evicted to give a group under its share one (fairVictim). */
  get evictedForFairness(): number {
    return this.fairCount;
  }

  /** Samples of new keys refused a history because every history held was live. */
  get refused(): number {
    return this.refusedCount;
  }

  /** Typed-array bytes the histories hold (their chunks). */
  bytes(): number {
    let n = 0;
    for (const entry of this.byKey.values()) n += entry.history!.bytes();
    return n;
  }

  /**
   * Typed-array bytes allocated for histories: what they hold, chunks and open minutes given back,
   * and each pool's last slab's unused part.
   */
  allocatedBytes(): number {
    return this.pools.second.bytes() + this.pools.minute.bytes() + this.pools.open.bytes();
  }

  /** The replicas named by `keys` as one series (fleet-window.ts); unknown keys are skipped. */
  fleetWindow(keys: Iterable<string>, tier: Tier, fromT: number, toT: number): FleetWindow {
    return fleetWindow(this.pick(keys), tier, fromT, toT);
  }

  /** One Summary over [fromT, toT] across the replicas named by `keys` (a fleet 1 h p99). */
  fleetSummary(keys: Iterable<string>, fromT: number, toT: number, kind: HistKind): Summary {
    return fleetSummary(this.pick(keys), fromT, toT, kind);
  }

  private pick(keys: Iterable<string>): SemaphoreHistory[] {
    const out: SemaphoreHistory[] = [];
    for (const k of new Set(keys)) {
      const entry = this.byKey.get(k);
      if (entry?.history) out.push(entry.history);
    }
    return out;
  }

  private update(entry: HistoryEntry, sample: Sample, t: number, intervalMs: number, now: number): boolean {
    this.recency.set(entry.index, now, ++this.stamps);
    return entry.history!.push(sample, t, intervalMs);
  }

  /** A live entry's push stamp. */
  private stampOf(entry: HistoryEntry): number {
    return this.recency.stamp(entry.index);
  }

  /** Every entry held, least recently updated first. */
  private byRecency(): HistoryEntry[] {
    return [...this.byKey.values()].sort((a, b) => this.stampOf(a) - this.stampOf(b));
  }

  /**
   * For a new key of `group` while every history is live: the least recently updated history of
   * the group holding most, if `group` holds less than its share and that one holds more than
   * `group` would after (no two groups trading one history back and forth). Of groups holding
   * most alike, the first there (group-sizes.ts). O(1), amortized over the group's queue.
   */
  private fairVictim(group: HistoryGroup | undefined): HistoryEntry | undefined {
    const mine = group?.size ?? 0;
    const share = Math.floor(this.capacity / (this.groups.size + (mine === 0 ? 1 : 0)));
    if (mine >= share) return undefined;
    const most = this.sizes.biggest();
    if (most === undefined || most.size <= mine + 1) return undefined;
    return most.queue.first(this.recency, most.members);
  }

  private remove(entry: HistoryEntry): void {
    const name = groupOf(entry.key);
    const group = this.groups.get(name);
    if (group !== undefined && group.members.delete(entry)) {
      this.sizes.shrank(group);
      if (group.size === 0) this.groups.delete(name);
    }
    this.byKey.delete(entry.key);
    entry.alive = false;
    this.recency.give(entry.index);
    // Its rows go back to the pools for the next history; a reference to it kept elsewhere reads none.
    entry.history?.release();
    entry.history = null;
  }
}

/** A key's group: `<service>/<instance>` of `<service>/<instance>/<id>` (its parts escaped, so the last `/` is the id's). */
function groupOf(key: string): string {
  const i = key.lastIndexOf("/");
  return i < 0 ? "" : key.slice(0, i);
}
