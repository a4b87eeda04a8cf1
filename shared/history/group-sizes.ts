// The history store's groups (a key's `<service>/<instance>`) by how many histories each holds,
// for fair eviction: the group holding most in O(1), where a scan of every group would cost
// O(groups) per new key at the bound.
//
// Each size's groups are a list in the order they reached that size, so of several groups
// holding most the one there first gives up a history, then the next: groups of equal size take
// turns. A group's size moves by one at a time (a history added or dropped), so each move is O(1).
import { RecencyQueue } from "./recency-queue.js";
import type { HistoryEntry } from "./history-store.js";

export class HistoryGroup {
  readonly members = new Set<HistoryEntry>();
  /** Its members least recently updated first: the victim when it holds most. */
  readonly queue = new RecencyQueue<HistoryEntry>();
  /** Its neighbours in its size's list. */
  prev: HistoryGroup | undefined = undefined;
  next: HistoryGroup | undefined = undefined;

  get size(): number {
    return this.members.size;
  }
}

export class GroupSizes {
  /** Each size's list (index: size; 0 unused). */
  private readonly heads: (HistoryGroup | undefined)[] = [undefined];
  private readonly tails: (HistoryGroup | undefined)[] = [undefined];
  private max = 0;

  /** The first group to reach the largest size held, if any. */
  biggest(): HistoryGroup | undefined {
    return this.heads[this.max];
  }

  /** `g` gained a member: it now holds g.size (a new group holds 1). */
  grew(g: HistoryGroup): void {
    const size = g.size;
    if (size > 1) this.unlink(g, size - 1);
    this.append(g, size);
  }

  /** `g` lost a member: it now holds g.size (0: it is gone). */
  shrank(g: HistoryGroup): void {
    const size = g.size;
    this.unlink(g, size + 1);
    if (size > 0) this.append(g, size);
    // One step at most: the group that left max's list is now in the one below (or held 1).
    while (this.max > 0 && this.heads[this.max] === undefined) this.max--;
  }

  private append(g: HistoryGroup, size: number): void {
    while (this.heads.length <= size) {
      this.heads.push(undefined);
      this.tails.push(undefined);
    }
    const tail = this.tails[size];
    g.prev = tail;
    g.next = undefined;
    if (tail === undefined) this.heads[size] = g;
    else tail.next = g;
    this.tails[size] = g;
    if (size > this.max) this.max = size;
  }

  private unlink(g: HistoryGroup, size: number): void {
    if (g.prev === undefined) this.heads[size] = g.next;
    else g.prev.next = g.next;
    if (g.next === undefined) this.tails[size] = g.prev;
    else g.next.prev = g.prev;
    g.prev = g.next = undefined;
  }
}
