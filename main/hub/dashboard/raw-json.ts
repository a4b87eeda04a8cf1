// JSON serialised once and sent as it is: a /ui snapshot of 10,000 semaphores is ~6 MB of JSON,
// built a slice at a time (snapshot-builder.ts); socket.io would walk it and serialise it again
// for each dashboard. An encoder that knows RawJson writes its text where the value goes, so the
// wire is the same JSON a plain object would make.
import { randomUUID } from "node:crypto";
import type { Namespace, Socket } from "socket.io";
import { Encoder, PacketType, type Packet } from "socket.io-parser";

/** JSON text made by JSON.stringify (so valid JSON), to be sent without serialising again. */
export class RawJson {
  /** The text and what follows it in a packet, as UTF-8, by what follows (for every socket it goes to). */
  private readonly bytes = new Map<string, Buffer>();

  constructor(readonly text: string) {}

  /**
   * Encodes `text + after` as UTF-8 a piece per step (a generator run by slices.ts): a snapshot's
   * few MB in one Buffer.from would hold the event loop. Sending works without it, encoding at once.
   */
  *prepare(after: string): Generator<void, void, void> {
    if (this.bytes.has(after)) return;
    const text = this.text;
    const out = Buffer.allocUnsafe(Buffer.byteLength(text) + Buffer.byteLength(after));
    let written = 0;
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + UTF8_PIECE);
      // Never between the two halves of a surrogate pair.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last < 0xdc00) end++;
      written += out.write(text.slice(at, end), written);
      at = end;
      yield;
    }
    out.write(after, written);
    this.bytes.set(after, out);
  }

  /** `text + after` as UTF-8, made on first use unless prepared. */
  encoded(after: string): Buffer {
    let b = this.bytes.get(after);
    if (b === undefined) {
      b = Buffer.from(this.text + after);
      this.bytes.set(after, b);
    }
    return b;
  }
}

/** Characters encoded per step of RawJson.prepare(). */
const UTF8_PIECE = 256 * 1024;

/**
 * A JSON array's items as text, joined into pieces of JOIN_CHARS as they come: thousands of small
 * strings kept until the end would be copied by every young-generation GC meanwhile, and a piece
 * that big is allocated in the large-object space, which the young GC does not copy.
 */
export class JsonItems {
  private readonly joined: string[] = [];
  private pending: string[] = [];
  private pendingChars = 0;

  /** Items pushed. */
  count = 0;

  push(json: string): void {
    this.pending.push(json);
    this.pendingChars += json.length + 1;
    this.count++;
    if (this.pendingChars >= JOIN_CHARS) this.joinPending();
  }

  /** The items separated by commas (no brackets). */
  text(): string {
    this.joinPending();
    return this.joined.join(",");
  }

  private joinPending(): void {
    if (this.pending.length === 0) return;
    this.joined.push(this.pending.join(","));
    this.pending = [];
    this.pendingChars = 0;
  }
}

/** Characters per joined piece: over V8's largest regular object (128 KB), so never copied by the young GC. */
const JOIN_CHARS = 192 * 1024;

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

/** A packet carrying RawJson as text: what comes before the RawJson's text, the RawJson, what comes after. */
interface RawPacket {
  readonly before: string;
  readonly raw: RawJson;
  readonly after: string;
}

/** `packet` as text around its RawJson, or undefined when it carries none. */
function split(packet: Packet): RawPacket | undefined {
  const args: unknown = packet.data;
  const isMessage = packet.type === PacketType.EVENT || packet.type === PacketType.ACK;
  const raw = isMessage && Array.isArray(args) ? rawIn(args) : undefined;
  if (raw === undefined) return undefined;
  const json = JSON.stringify(args, (_key, v: unknown) => (v === raw ? MARK : v));
  const at = json.indexOf(QUOTED_MARK);
  // As socket.io-parser writes a packet as text: type, namespace and comma, ack id, data.
  const head = `${packet.type}${packet.nsp && packet.nsp !== "/" ? `${packet.nsp},` : ""}${packet.id ?? ""}`;
  return { before: head + json.slice(0, at), raw, after: json.slice(at + QUOTED_MARK.length) };
}

/** What follows a RawJson sent as an event's one argument (`["event",RAW]`) and as an ack's `snapshot` (`[{"ok":true,"snapshot":RAW}]`). */
export const AFTER_EVENT = "]";
export const AFTER_ACK = "}]";

/** socket.io-parser's Encoder, writing one RawJson per packet as its text. */
export class RawJsonEncoder extends Encoder {
  override encode(packet: Packet): unknown[] {
    const p = split(packet);
    return p === undefined ? (super.encode(packet) as unknown[]) : [p.before + p.raw.text + p.after];
  }
}

/**
 * A WebSocket text frame (unmasked, as a server sends) of `head` then `body`, as two buffers: the
 * header with `head`, and `body` as it is. engine.io writes such a frame as given
 * (`wsPreEncodedFrame`, as socket.io's adapter makes for a broadcast), so a RawJson's bytes,
 * made once, go to each dashboard without being copied or encoded again.
 */
function textFrame(head: Buffer, body: Buffer): Buffer[] {
  const n = head.length + body.length;
  const size = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const header = Buffer.allocUnsafe(size + head.length);
  header[0] = 0x81;
  if (size === 2) header[1] = n;
  else if (size === 4) {
    header[1] = 126;
    header.writeUInt16BE(n, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(n), 2);
  }
  head.copy(header, size);
  return [header, body];
}

const encoder = new RawJsonEncoder();

/** Broadcasts on `nsp` may carry RawJson (its adapter encodes each broadcast once for every socket). */
export function rawJsonBroadcasts(nsp: Namespace): void {
  (nsp.adapter as unknown as { encoder: Encoder }).encoder = encoder;
}

/**
 * What `socket` sends (events, acks) may carry RawJson. The encoder belongs to its connection
 * (socket.io's Client), and writes any packet without RawJson exactly as the default one does.
 * Over WebSocket, a packet with RawJson goes as a frame whose big part is the RawJson's bytes,
 * shared by every socket it goes to; over long-polling, as the encoder's text.
 */
export function rawJsonReplies(socket: Socket): void {
  (socket.client as unknown as { encoder: Encoder }).encoder = encoder;
  const s = socket as unknown as { packet(packet: Packet, opts?: Record<string, unknown>): void };
  const packet = s.packet.bind(socket);
  s.packet = (p: Packet, opts: Record<string, unknown> = {}) => {
    const parts = split({ ...p, nsp: socket.nsp.name });
    // "4": engine.io's message type, which its transport writes before socket.io's text.
    if (parts !== undefined) opts.wsPreEncodedFrame = textFrame(Buffer.from(`4${parts.before}`), parts.raw.encoded(parts.after));
    packet(p, opts);
  };
}
