// Splitting what one interval (or one event flush) produced into messages that each fit one
// socket.io packet, so no packet ever reaches the hub's limit and gets the connection closed.
import { LIMITS } from "../../../shared/protocol/types.js";

/**
 * Bytes of JSON payload per message. Under the protocol's 1 MiB with room for socket.io's framing
 * (`42/agent,<ackId>["samples",…]`) and a `dropped` field added at send time, and under 10^6 as
 * well, socket.io's own default maxHttpBufferSize, in case a hub leaves it unchanged.
 */
export const PACKET_BUDGET_BYTES = Math.min(LIMITS.maxPacketBytes, 1_000_000) - 8 * 1024;

/** UTF-8 size of a value's JSON, which is what socket.io puts on the wire for it. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "null", "utf8");
}

export interface Group<T> {
  items: T[];
  /** JSON bytes of the whole message: envelope plus items plus separators. */
  bytes: number;
}

export interface Split<T> {
  groups: Group<T>[];
  /** Items that alone do not fit any message: the caller drops and counts them. */
  oversize: T[];
}

/**
 * Consecutive runs of `items` (order kept) with at most `maxItems` each and
 * `envelopeBytes + Σ sizes + commas <= budget`. An empty input gives one empty group, so an
 * interval with nothing tracked still sends a batch (the hub reads silence as the agent down).
 */
export function splitIntoGroups<T>(
  items: readonly T[],
  sizes: readonly number[],
  envelopeBytes: number,
  maxItems: number,
  budget: number = PACKET_BUDGET_BYTES,
): Split<T> {
  const groups: Group<T>[] = [];
  const oversize: T[] = [];
  let current: Group<T> = { items: [], bytes: envelopeBytes };
  for (let i = 0; i < items.length; i++) {
    const size = sizes[i];
    if (envelopeBytes + size > budget) {
      oversize.push(items[i]);
      continue;
    }
    const added = current.items.length === 0 ? size : size + 1;
    if (current.items.length >= maxItems || current.bytes + added > budget) {
      groups.push(current);
      current = { items: [], bytes: envelopeBytes };
    }
    current.bytes += current.items.length === 0 ? size : size + 1;
    current.items.push(items[i]);
  }
  if (current.items.length > 0 || groups.length === 0) groups.push(current);
  return { groups, oversize };
}
