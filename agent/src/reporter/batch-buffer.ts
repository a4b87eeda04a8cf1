// The outbox: messages waiting for the hub's ack, bounded in count AND bytes so the agent's
// memory stays bounded whatever the hub does (away, slow, never acking). A Map keeps insertion
// order, so "oldest first" is iteration order and eviction, acks and removal are O(1).

export interface Outgoing<P> {
  /** Unique within its buffer; for samples, the batch's seq. */
  readonly key: number;
  readonly payload: P;
  /** UTF-8 bytes of the payload's JSON: what it costs on the wire and, roughly, in memory. */
  readonly bytes: number;
  /** Token of the emit whose ack is awaited; 0 when nothing is in flight. */
  inFlight: number;
  /** Connection it was last sent on: after an ack timeout it waits for the next connection. */
  sentEpoch: number;
  /** Sent at least once, on any connection. */
  everSent: boolean;
  /** Times a connection died while it was in flight (see connection.ts: closed for size). */
  strikes: number;
}

export class BatchBuffer<P> {
  private readonly entries = new Map<number, Outgoing<P>>();
  private totalBytes = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /**
   * Adds a message, then evicts the oldest until both bounds hold again, and returns what it
   * evicted, oldest first. The newest message always stays, even if it alone is over maxBytes.
   */
  push(key: number, payload: P, bytes: number): Outgoing<P>[] {
    const entry: Outgoing<P> = { key, payload, bytes, inFlight: 0, sentEpoch: -1, everSent: false, strikes: 0 };
    this.entries.set(key, entry);
    this.totalBytes += bytes;
    const evicted: Outgoing<P>[] = [];
    while (this.entries.size > 1 && (this.entries.size > this.maxEntries || this.totalBytes > this.maxBytes)) {
      const oldest = this.entries.values().next().value as Outgoing<P>;
      this.remove(oldest.key);
      evicted.push(oldest);
    }
    return evicted;
  }

  get(key: number): Outgoing<P> | undefined {
    return this.entries.get(key);
  }

  /** Removes and returns the message (undefined if it was already evicted or acked). */
  remove(key: number): Outgoing<P> | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.totalBytes -= entry.bytes;
    return entry;
  }

  /** Oldest first. Safe to remove the current entry while iterating (Map semantics). */
  values(): IterableIterator<Outgoing<P>> {
    return this.entries.values();
  }

  clear(): void {
    this.entries.clear();
    this.totalBytes = 0;
  }
}

/**
 * A fixed-capacity FIFO that overwrites its oldest item when full, in O(1): the hand-off between
 * the host's call stack (an event raised inside release()) and the agent's timers.
 */
export class Ring<T> {
  private readonly items: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Adds an item; returns true when that overwrote (dropped) the oldest one. */
  push(item: T): boolean {
    const tail = (this.head + this.count) % this.capacity;
    this.items[tail] = item;
    if (this.count < this.capacity) {
      this.count++;
      return false;
    }
    this.head = (this.head + 1) % this.capacity;
    return true;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) % this.capacity;
      out.push(this.items[at] as T);
      this.items[at] = undefined;
    }
    this.head = 0;
    this.count = 0;
    return out;
  }
}
