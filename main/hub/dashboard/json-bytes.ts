// JSON text written as UTF-8 into buffers outside the JS heap as it is made. A /ui snapshot of
// 10,000 semaphores is ~8.5 MB of JSON made over many slices (snapshot-builder.ts): kept as
// strings, its pieces, their join and the flat copy encoding needs were large objects promoted
// to the old generation by every young GC they lived through, and a full GC every second or so
// under 100 dashboards. Written here, each small string dies young, and the bytes cost the
// collector nothing.

/** Bytes per chunk: a chunk's last string may leave up to 3 bytes a character of it unused. */
const CHUNK = 64 * 1024;

/** Characters written in one piece (one more to keep a surrogate pair whole): their UTF-8 always fits a chunk. */
const PIECE = Math.floor(CHUNK / 3) - 1;

/** Chunks kept for later texts once their bytes are copied out (RawJson): at most this many (16 MB). */
const SPARE_CHUNKS = 256;
const spare: Buffer[] = [];

function takeChunk(): Buffer {
  return spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
}

export class JsonBytes {
  /** Filled chunks and, last, the one being written; `used[i]` bytes of chunk i hold text. */
  private chunks: Buffer[] = [];
  private used: number[] = [];
  /** Bytes written. */
  length = 0;
  /** Items written with item(). */
  count = 0;

  /** `opening` is written before the first item (item()), if any comes. */
  constructor(private readonly opening = "") {}

  /** A text's bytes, written at once (short texts: a delta's head, a test's JSON). */
  static of(text: string): JsonBytes {
    const b = new JsonBytes();
    b.write(text);
    return b;
  }

  write(text: string): void {
    if (text.length === 0) return;
    if (text.length > PIECE) this.writeLong(text);
    else this.writePiece(text);
  }

  private writePiece(text: string): void {
    let last = this.chunks.length - 1;
    // A character takes at most 3 bytes (a surrogate pair, two characters, takes 4).
    if (last < 0 || CHUNK - this.used[last] < text.length * 3) {
      this.chunks.push(takeChunk());
      this.used.push(0);
      last++;
    }
    const n = this.chunks[last].write(text, this.used[last]);
    this.used[last] += n;
    this.length += n;
  }

  /** An item of a JSON array or object: the opening before the first, a comma before the others. */
  item(json: string): void {
    this.write(this.count > 0 ? "," : this.opening);
    this.write(json);
    this.count++;
  }

  /** `other`'s bytes after these; `other` is left empty. */
  append(other: JsonBytes): void {
    this.chunks.push(...other.chunks);
    this.used.push(...other.used);
    this.length += other.length;
    other.chunks = [];
    other.used = [];
    other.length = 0;
  }

  /**
   * The bytes, then `after`, copied into one new buffer a chunk per step (a generator: run it
   * with slices.ts). This is left empty at once, and its chunks are given back for later texts
   * once copied (never twice, however the copy is run).
   */
  *copyOut(after: string): Generator<void, Buffer, void> {
    const { chunks, used } = this;
    const out = Buffer.allocUnsafe(this.length + Buffer.byteLength(after));
    this.chunks = [];
    this.used = [];
    this.length = 0;
    let at = 0;
    for (let i = 0; i < chunks.length; i++) {
      at += chunks[i].copy(out, at, 0, used[i]);
      if (i < chunks.length - 1) yield;
    }
    out.write(after, at);
    for (const c of chunks) if (spare.length < SPARE_CHUNKS) spare.push(c);
    return out;
  }

  private writeLong(text: string): void {
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + PIECE);
      // Never between the two halves of a surrogate pair.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last < 0xdc00) end++;
      this.writePiece(text.slice(at, end));
      at = end;
    }
  }
}
