// Which fleet entries a `/ui` delta carries: only those new or changed since dashboards last got
// them, and the keys of those gone (docs/protocol.md, "Dashboard namespace `/ui`"). Every delta
// used to resend the whole list; in a real fleet most semaphores are idle most seconds, so most
// groups do not change between two deltas.
import type { UiFleetEntry } from "./types.js";

/** Equal field by field, one level into objects (the summaries). */
export function sameFleetEntry(a: UiFleetEntry, b: UiFleetEntry): boolean {
  if (a === b) return true;
  const ra = a as unknown as Record<string, unknown>;
  const rb = b as unknown as Record<string, unknown>;
  const keys = Object.keys(ra);
  if (keys.length !== Object.keys(rb).length) return false;
  for (const k of keys) {
    const x = ra[k];
    const y = rb[k];
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
    const ox = x as Record<string, unknown>;
    const oy = y as Record<string, unknown>;
    const inner = Object.keys(ox);
    if (inner.length !== Object.keys(oy).length) return false;
    for (const j of inner) if (ox[j] !== oy[j]) return false;
  }
  return true;
}

export interface FleetChanges {
  changed: UiFleetEntry[];
  removed: string[];
}

/**
 * What every connected dashboard holds of the fleet, as the hub last sent it (one state for all
 * of them: deltas are broadcast). A dashboard that connects gets the current list in its
 * snapshot, which may be newer than the last delta: `snapshotTaken` marks each entry that
 * differs as unknown, so the next delta resends it and everyone agrees again.
 */
export class FleetChangeTracker {
  /** key → entry as last sent; null: dashboards may hold different values, resend. */
  private readonly sent = new Map<string, UiFleetEntry | null>();

  /** The next delta's fleet part, from the current list (sorted by key, as the hub makes it). */
  take(current: readonly UiFleetEntry[]): FleetChanges {
    const changed = current.filter((f) => this.offer(f));
    const seen = new Set(current.map((f) => f.key));
    return { changed, removed: this.dropMissing((k) => seen.has(k)) };
  }

  /**
   * take() for a fleet known to have moved only in `moved` (key → entry now, undefined: gone):
   * the work is in proportion to the groups that moved, not to the fleet.
   */
  takeSome(moved: ReadonlyMap<string, UiFleetEntry | undefined>): FleetChanges {
    const changed: UiFleetEntry[] = [];
    const removed: string[] = [];
    for (const key of [...moved.keys()].sort()) {
      const f = moved.get(key);
      if (f !== undefined) {
        if (this.offer(f)) changed.push(f);
      } else if (this.drop(key)) removed.push(key);
    }
    return { changed, removed };
  }

  /** Whether a delta must carry `f` (dashboards do not hold it already); it is then counted as sent. */
  offer(f: UiFleetEntry): boolean {
    const before = this.sent.get(f.key);
    if (before !== undefined && before !== null && sameFleetEntry(before, f)) return false;
    this.sent.set(f.key, f);
    return true;
  }

  /** Whether a delta must say group `key` went away (dashboards may hold it); it is then forgotten. */
  drop(key: string): boolean {
    return this.sent.delete(key);
  }

  /** The keys dashboards may hold for which `has` is false, forgotten: a delta says they went away. */
  dropMissing(has: (key: string) => boolean): string[] {
    const removed: string[] = [];
    for (const k of this.sent.keys()) if (!has(k)) removed.push(k);
    for (const k of removed) this.sent.delete(k);
    return removed;
  }

  /** Some dashboards just got `fleet` in a snapshot (the others hold what deltas said). */
  snapshotTaken(fleet: readonly UiFleetEntry[]): void {
    for (const f of fleet) this.entryTaken(f, false);
    const has = new Set(fleet.map((f) => f.key));
    this.missingTaken((k) => has.has(k));
  }

  /** Every dashboard just got `fleet` in a snapshot: they all hold exactly it. */
  resetTo(fleet: readonly UiFleetEntry[]): void {
    this.sent.clear();
    for (const f of fleet) this.entryTaken(f, true);
  }

  /**
   * One entry of a snapshot some dashboards (`byAll`: every one) just got. Taking a big fleet a
   * few entries at a time: for every dashboard, clear() first.
   */
  entryTaken(f: UiFleetEntry, byAll: boolean): void {
    if (byAll) {
      this.sent.set(f.key, f);
      return;
    }
    const before = this.sent.get(f.key);
    if (before === undefined || before === null || !sameFleetEntry(before, f)) this.sent.set(f.key, null);
  }

  /**
   * After some (not all) dashboards took a snapshot: the entries for which `has` is false may be
   * held by the others but not by them, so the next delta resends each (or says it went away).
   */
  missingTaken(has: (key: string) => boolean): void {
    for (const [k, f] of this.sent) if (f !== null && !has(k)) this.sent.set(k, null);
  }

  /** No dashboard is left. */
  clear(): void {
    this.sent.clear();
  }
}
