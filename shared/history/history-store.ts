// Every semaphore's history, keyed by "<service>/<instance>/<id>", with a bound on how many are
// held: a hub that keeps seeing new instances (restarts, autoscaling) must not grow without end.
// Beyond the bound the least recently updated history is evicted, and counted.

import type { Sample, Summary } from "../protocol/types.js";
import type { HistKind, Tier } from "./columnar-window.js";
import { fleetSummary, fleetWindow, type FleetWindow } from "./fleet-window.js";
import type { SemaphoreHistoryOptions } from "./history-options.js";
import { SemaphoreHistory } from "./semaphore-history.js";

export interface HistoryStoreOptions {
  /** Histories held at most (default 1000, the protocol's semaphores-per-agent limit). */
  maxSemaphores?: number;
  /** Options for every history the store creates. */
  history?: SemaphoreHistoryOptions;
}

export const DEFAULT_MAX_SEMAPHORES = 1000;

export class HistoryStore {
  readonly maxSemaphores: number;
  private readonly historyOptions: SemaphoreHistoryOptions | undefined;
  // A Map iterates in insertion order; re-inserting on every push keeps it least recently updated first.
  private readonly byKey = new Map<string, SemaphoreHistory>();
  private evictedCount = 0;

  constructor(opts: HistoryStoreOptions = {}) {
    const max = opts.maxSemaphores ?? DEFAULT_MAX_SEMAPHORES;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxSemaphores must be an integer ≥ 1, got ${String(max)}`);
    this.maxSemaphores = max;
    this.historyOptions = opts.history;
  }

  /**
   * Records a sample for `key`, creating its history (and evicting the least recently updated one
   * beyond the bound) if needed. Returns SemaphoreHistory.push's answer: false for a late or duplicate sample.
   */
  push(key: string, sample: Sample, t: number, intervalMs: number): boolean {
    let h = this.byKey.get(key);
    if (h === undefined) {
      h = new SemaphoreHistory(this.historyOptions);
    } else {
      this.byKey.delete(key);
    }
    this.byKey.set(key, h);
    while (this.byKey.size > this.maxSemaphores) {
      const oldest = this.byKey.keys().next().value as string;
      this.byKey.delete(oldest);
      this.evictedCount++;
    }
    return h.push(sample, t, intervalMs);
  }

  get(key: string): SemaphoreHistory | undefined {
    return this.byKey.get(key);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** Drops a history (e.g. its agent unregistered the semaphore). Not counted as an eviction. */
  delete(key: string): boolean {
    return this.byKey.delete(key);
  }

  /** Keys held, least recently updated first. */
  keys(): string[] {
    return [...this.byKey.keys()];
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Histories evicted for the bound since the store was made. */
  get evicted(): number {
    return this.evictedCount;
  }

  bytes(): number {
    let n = 0;
    for (const h of this.byKey.values()) n += h.bytes();
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
      const h = this.byKey.get(k);
      if (h !== undefined) out.push(h);
    }
    return out;
  }
}
