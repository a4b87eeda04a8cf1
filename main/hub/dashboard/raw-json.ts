// JSON serialised once and sent as it is: a /ui snapshot of 10,000 semaphores is ~8.5 MB of JSON,
// built a slice at a time as UTF-8 bytes (snapshot-builder.ts, json-bytes.ts); socket.io would walk
// it and serialise it again for each dashboard. An encoder that knows RawJson writes its text where
// the value goes, so the wire is the same JSON a plain object would make.
import { randomUUID } from "node:crypto";
import type { Namespace, Socket } from "socket.io";
import { Encoder, PacketType, type Packet } from "socket.io-parser";
import type { JsonBytes } from "./json-bytes.js";
import { runToEnd } from "./slices.js";

/** JSON made by JSON.stringify (so valid JSON), as UTF-8, to be sent without serialising again. */
export class RawJson {
  /** The JSON's bytes until they are first copied out; then `json` holds them. */
  private source: JsonBytes | undefined;
  /** The first buffer copied out: the JSON's `length` bytes, then what followed them there. */
  private json: Buffer | undefined;
  private readonly length: number;
  /** prepare() is copying `source` out, a chunk per step. */
  private copying = false;
  /** The text and what follows it in a packet, as UTF-8, by what follows (for every socket it goes to). */
  private readonly bytes = new Map<string, Buffer>();

  constructor(source: JsonBytes) {
    this.source = source;
    this.length = source.length;
  }

  /** The JSON as a string, decoded anew (a broadcast, long-polling: WebSocket sends the bytes). */
  get text(): string {
    return this.jsonBytes().toString("utf8", 0, this.length);
  }

  /**
   * Makes `text + after` as UTF-8 a piece per step (a generator run by slices.ts): a snapshot's
   * few MB in one copy would hold the event loop. Sending works without it, copying at once.
   */
  *prepare(after: string): Generator<void, void, void> {
    if (this.bytes.has(after)) return;
    let out: Buffer;
    if (this.source !== undefined) {
      const source = this.source;
      this.source = undefined;
      this.copying = true;
      out = yield* source.copyOut(after);
      this.copying = false;
      this.json = out;
    } else {
      const json = this.jsonBytes();
      out = Buffer.allocUnsafe(this.length + Buffer.byteLength(after));
      for (let at = 0; at < this.length; at += COPY_PIECE) {
        json.copy(out, at, at, Math.min(this.length, at + COPY_PIECE));
        yield;
      }
      out.write(after, this.length);
    }
    this.bytes.set(after, out);
  }

  /** `text + after` as UTF-8, made on first use unless prepared. */
  encoded(after: string): Buffer {
    let b = this.bytes.get(after);
    if (b === undefined) {
      this.notCopying();
      runToEnd(this.prepare(after));
      b = this.bytes.get(after)!;
    }
    return b;
  }

  private jsonBytes(): Buffer {
    this.notCopying();
    if (this.json === undefined) this.encoded("");
    return this.json!;
  }

  /** Its first copy is a few steps long: what reads it waits for prepare() to end (ui-namespace.ts). */
  private notCopying(): void {
    if (this.copying) throw new Error("RawJson read while its bytes are being copied");
  }
}

/** Bytes copied per step of RawJson.prepare() from a buffer already made. */
const COPY_PIECE = 1024 * 1024;

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

/** Whether `socket`'s transport writes a packet's wsPreEncodedFrame as it is, never reading its data (engine.io's WebSocket transport, without per-message deflate). */
function sendsPreEncoded(socket: Socket): boolean {
  const t = (socket.conn as unknown as { transport?: { name?: string; opts?: { perMessageDeflate?: unknown }; socket?: { _sender?: { sendFrame?: unknown } } } }).transport;
  return t?.name === "websocket" && !t.opts?.perMessageDeflate && typeof t.socket?._sender?.sendFrame === "function";
}

/**
 * What `socket` sends (events, acks) may carry RawJson. The encoder belongs to its connection
 * (socket.io's Client), and writes any packet without RawJson exactly as the default one does.
 * Over WebSocket, a packet with RawJson goes as a frame whose big part is the RawJson's bytes,
 * shared by every socket it goes to, and no text of it is made; over long-polling, as the
 * encoder's text.
 */
export function rawJsonReplies(socket: Socket): void {
  (socket.client as unknown as { encoder: Encoder }).encoder = encoder;
  const client = socket.client as unknown as { _packet(packet: unknown, opts: Record<string, unknown>): void };
  const s = socket as unknown as { packet(packet: Packet, opts?: Record<string, unknown>): void };
  const packet = s.packet.bind(socket);
  s.packet = (p: Packet, opts: Record<string, unknown> = {}) => {
    const parts = split({ ...p, nsp: socket.nsp.name });
    if (parts === undefined) return packet(p, opts);
    const body = parts.raw.encoded(parts.after);
    // "4": engine.io's message type, which its transport writes before socket.io's text.
    opts.wsPreEncodedFrame = textFrame(Buffer.from(`4${parts.before}`), body);
    if (!sendsPreEncoded(socket)) return packet(p, opts);
    // Handed to engine.io as it is: its data is never sent, and counts as the bytes buffered (buffered() in ui-namespace.ts).
    client._packet(body, { ...opts, preEncoded: true });
  };
}
