// JSON serialised once and sent as it is: a /ui snapshot of 10,000 semaphores is ~6 MB of JSON,
// built a slice at a time (snapshot-builder.ts); socket.io would walk it and serialise it again
// for each dashboard. An encoder that knows RawJson writes its text where the value goes, so the
// wire is the same JSON a plain object would make.
import { randomUUID } from "node:crypto";
import type { Namespace, Socket } from "socket.io";
import { Encoder, PacketType, type Packet } from "socket.io-parser";

/** JSON text made by JSON.stringify (so valid JSON), to be sent without serialising again. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Unforgeable in practice: no agent or dashboard string can carry it. */
const MARK = `\u0000raw-json:${randomUUID()}`;
const QUOTED_MARK = JSON.stringify(MARK);

/** The RawJson among an event's arguments or one level into them (an ack's `{ ok, snapshot }`). */
function rawIn(args: readonly unknown[]): RawJson | undefined {
  for (const a of args) {
    if (a instanceof RawJson) return a;
    if (a !== null && typeof a === "object" && !Array.isArray(a)) for (const v of Object.values(a)) if (v instanceof RawJson) return v;
  }
  return undefined;
}

/** socket.io-parser's Encoder, writing one RawJson per packet as its text. */
export class RawJsonEncoder extends Encoder {
  override encode(packet: Packet): unknown[] {
    const args: unknown = packet.data;
    const isMessage = packet.type === PacketType.EVENT || packet.type === PacketType.ACK;
    const raw = isMessage && Array.isArray(args) ? rawIn(args) : undefined;
    if (raw === undefined) return super.encode(packet) as unknown[];
    const json = JSON.stringify(args, (_key, v: unknown) => (v === raw ? MARK : v));
    const at = json.indexOf(QUOTED_MARK);
    // As socket.io-parser writes a packet as text: type, namespace and comma, ack id, data.
    const head = `${packet.type}${packet.nsp && packet.nsp !== "/" ? `${packet.nsp},` : ""}${packet.id ?? ""}`;
    return [head + json.slice(0, at) + raw.text + json.slice(at + QUOTED_MARK.length)];
  }
}

const encoder = new RawJsonEncoder();

/** Broadcasts on `nsp` may carry RawJson (its adapter encodes each broadcast once for every socket). */
export function rawJsonBroadcasts(nsp: Namespace): void {
  (nsp.adapter as unknown as { encoder: Encoder }).encoder = encoder;
}

/**
 * What `socket` sends (events, acks) may carry RawJson. The encoder belongs to its connection
 * (socket.io's Client), and writes any packet without RawJson exactly as the default one does.
 */
export function rawJsonReplies(socket: Socket): void {
  (socket.client as unknown as { encoder: Encoder }).encoder = encoder;
}
