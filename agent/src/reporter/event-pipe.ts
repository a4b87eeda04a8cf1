// Events from the host's call stack (raised inside release(), a leak timer, ...) to `events`
// messages. The listener only stores the event in a ring and arms a timer, so the host's
// release() pays O(1); sanitising, sizing and splitting happen on the timer, off its path.
import { PAYLOAD_LIMITS } from "../../../shared/protocol/payload-limits.js";
import type { AgentEvent, EventsBatch } from "../../../shared/protocol/types.js";
import { Ring } from "./batch-buffer.js";
import { guard } from "./guard.js";
import type { Outbox } from "./outbox.js";
import { jsonBytes, splitIntoGroups } from "./packet-split.js";
import { sanitizeEvent } from "./sanitize.js";

/** Protocol: events are batched at most every 100 ms. */
export const EVENT_FLUSH_MS = 100;
/**
 * Raw events held between flushes: one full `events` message per 100 ms (10,000 events/s). A
 * storm beyond that (a double release in a hot loop) loses its oldest, counted, rather than
 * making the agent's flush (sanitise, size, send) grow with it on the host's event loop.
 */
export const EVENT_RING_CAPACITY = PAYLOAD_LIMITS.maxEventsPerBatch;

const EMPTY_ENVELOPE_BYTES = jsonBytes({ items: [] } satisfies EventsBatch);

export class EventPipe {
  private readonly ring = new Ring<AgentEvent>(EVENT_RING_CAPACITY);
  private timer: ReturnType<typeof setTimeout> | undefined;
  private nextKey = 0;
  /** Events lost before reaching the outbox: ring overflow, unusable, or alone over a packet. */
  lost = 0;

  constructor(private readonly outbox: Outbox<EventsBatch>) {}

  /** The registry listener: runs inside the host's call, so it only stores and arms. */
  readonly listener = (event: AgentEvent): void => {
    if (this.ring.push(event)) this.lost++;
    if (this.timer === undefined) {
      this.timer = setTimeout(() => guard(() => this.flush()), EVENT_FLUSH_MS);
      this.timer.unref();
    }
  };

  /** Moves everything waiting into `events` messages now (also used by close()). */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.ring.size === 0) return;
    const items: AgentEvent[] = [];
    const sizes: number[] = [];
    for (const raw of this.ring.drain()) {
      try {
        const e = sanitizeEvent(raw);
        if (e === undefined) {
          this.lost++;
          continue;
        }
        sizes.push(jsonBytes(e));
        items.push(e);
      } catch {
        // A detail with a throwing getter, say: that one event is lost, not the batch.
        this.lost++;
      }
    }
    const { groups, oversize } = splitIntoGroups(items, sizes, EMPTY_ENVELOPE_BYTES, PAYLOAD_LIMITS.maxEventsPerBatch);
    this.lost += oversize.length;
    for (const g of groups) {
      if (g.items.length === 0) continue;
      this.outbox.add(this.nextKey++, { items: g.items }, g.bytes);
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
