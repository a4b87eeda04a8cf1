// Every semaphore's history, keyed by "<service>/<instance>/<id>", with a bound on how many are
// held, in count and in memory: a hub that keeps seeing new instances (restarts, autoscaling) must
// not grow without end.
//
// At the bound, a new key takes the place of the least recently updated history only if that one
// has been idle for `minIdleMs` (evicted, and counted). Otherwise every history held is live, and
// evicting one would only have it rebuilt on its next sample, one eviction evicting the next: so
// the new key is refused (no history, counted) until some history goes idle. What is kept is
// then the histories that are updated, never a churn of fresh rings that hold nothing.

import type { Sample, Summary } from "../protocol/types.js";
import type { HistKind, Tier } from "./columnar-window.js";
import { fleetSummary, fleetWindow, type FleetWindow } from "./fleet-window.js";
import { historyFullBytes, type SemaphoreHistoryOptions } from "./history-options.js";
import { SemaphoreHistory } from "./semaphore-history.js";

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
}

export const DEFAULT_MAX_SEMAPHORES = 10_000;
export const DEFAULT_MAX_HISTORY_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MIN_IDLE_MS = 60_000;

/** A history in the recency list (least recently updated at the head). */
interface Node {
  readonly key: string;
  readonly history: SemaphoreHistory;
  updatedAt: number;
  prev: Node | null;
  next: Node | null;
}

export class HistoryStore {
  /** Histories held at most: the count bound or the memory bound, whichever is lower. */
  readonly capacity: number;
  readonly maxSemaphores: number;
  readonly maxBytes: number;
  readonly minIdleMs: number;
  private readonly historyOptions: SemaphoreHistoryOptions | undefined;
  private readonly now: () => number;
  private readonly byKey = new Map<string, Node>();
  private head: Node | null = null;
  private tail: Node | null = null;
  private evictedCount = 0;
  private refusedCount = 0;

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
    this.historyOptions = opts.history;
  }

  /**
   * Records a sample for `key`, creating its history if there is room (or an idle one to evict).
   * Returns SemaphoreHistory.push's answer: false for a late or duplicate sample, and for a key
   * refused for want of room. O(1).
   */
  push(key: string, sample: Sample, t: number, intervalMs: number): boolean {
    const now = this.now();
    let node = this.byKey.get(key);
    if (node === undefined) {
      if (this.byKey.size >= this.capacity) {
        const oldest = this.head;
        if (oldest === null || now - oldest.updatedAt < this.minIdleMs) {
          this.refusedCount++;
          return false;
        }
        this.remove(oldest);
        this.evictedCount++;
      }
      node = { key, history: new SemaphoreHistory(this.historyOptions), updatedAt: now, prev: null, next: null };
      this.byKey.set(key, node);
      this.append(node);
    } else {
      node.updatedAt = now;
      if (node !== this.tail) {
        this.unlink(node);
        this.append(node);
      }
    }
    return node.history.push(sample, t, intervalMs);
  }

  get(key: string): SemaphoreHistory | undefined {
    return this.byKey.get(key)?.history;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** Drops a history (e.g. its agent unregistered the semaphore). Not counted as an eviction. */
  delete(key: string): boolean {
    const node = this.byKey.get(key);
    if (node === undefined) return false;
    this.remove(node);
    return true;
  }

  /** Keys held, least recently updated first. */
  keys(): string[] {
    const out: string[] = [];
    for (let n = this.head; n !== null; n = n.next) out.push(n.key);
    return out;
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Histories evicted for the bound since the store was made. */
  get evicted(): number {
    return this.evictedCount;
  }

  /** Samples of new keys refused a history because every history held was live. */
  get refused(): number {
    return this.refusedCount;
  }

  bytes(): number {
    let n = 0;
    for (const node of this.byKey.values()) n += node.history.bytes();
    return n;
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
      const node = this.byKey.get(k);
      if (node !== undefined) out.push(node.history);
    }
    return out;
  }

  private remove(node: Node): void {
    this.byKey.delete(node.key);
    this.unlink(node);
  }

  private append(node: Node): void {
    node.prev = this.tail;
    node.next = null;
    if (this.tail === null) this.head = node;
    else this.tail.next = node;
    this.tail = node;
  }

  private unlink(node: Node): void {
    if (node.prev === null) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === null) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = node.next = null;
  }
}
