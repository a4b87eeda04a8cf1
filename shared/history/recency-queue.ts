// Entries least recently updated first, for eviction, without relinking a list on every update.
//
// One sort of the entries gives the queue; an entry updated since has a later stamp than every
// one sorted (stamps only grow), so the first queued entry still in place (alive, its stamp
// unchanged) is the least recently updated of all those held now. Sorted again when used up: one
// sort per as many evictions as it held, fewer only where its entries were updated meanwhile.
import type { RecencyTable } from "./recency-table.js";

/** An entry held at `index` of a RecencyTable while alive. */
export interface RecencyHeld {
  readonly alive: boolean;
  readonly index: number;
}

export class RecencyQueue<E extends RecencyHeld> {
  private entries: (E | undefined)[] = [];
  private stamps: number[] = [];
  private next = 0;

  /** The least recently updated of `held` (what the queue is drawn from, all alive), or undefined if none. */
  first(recency: RecencyTable, held: Iterable<E>): E | undefined {
    for (;;) {
      const entries = this.entries;
      while (this.next < entries.length) {
        const e = entries[this.next];
        if (e !== undefined && e.alive && recency.stamp(e.index) === this.stamps[this.next]) return e;
        // Passed for good: let go of it.
        entries[this.next++] = undefined;
      }
      const sorted = [...held].sort((a, b) => recency.stamp(a.index) - recency.stamp(b.index));
      if (sorted.length === 0) return undefined;
      this.entries = sorted;
      this.stamps = sorted.map((e) => recency.stamp(e.index));
      this.next = 0;
    }
  }
}
