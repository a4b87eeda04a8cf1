// What a replay holds of its recording: the checked lines again, laid out as spool-codec.ts says
// (samples as numbers, the rest as JSON), in blocks compressed one by one (in zlib's thread pool, so reading the file does not wait for it), with each block's
// first and last recorded time and line count. A replay reads forward block by block, so a long
// recording costs its compressed size, not its parsed objects, and a gzip bomb's repeated lines
// next to nothing. The blocks read last stay parsed (a small cache bounded by their bytes), so
// seeking a little back, or feeding again from a restore point just behind, reads nothing again.
import { deflateRaw, deflateRawSync, inflateRawSync } from "node:zlib";
import { performance } from "node:perf_hooks";
import type { AnyRecordLine } from "./recording-line.js";
import { BlockEncoder, decodeBlock, SpoolStrings } from "./spool-codec.js";

/** Bytes per block (spool-codec.ts): small enough to read at once, large enough to compress well. */
export const DEFAULT_BLOCK_BYTES = 256 * 1024;
/** Bytes of the read blocks kept at most: about 2 % of an hour of 100 semaphores. */
export const DEFAULT_PARSED_CACHE_BYTES = 4 * 1024 * 1024;
/** About the first 16 MiB of the recording's text: samples laid out as numbers take about 0.65 of their JSON. */
export const DEFAULT_PINNED_START_BYTES = 10 * 1024 * 1024;
/** Blocks compressing in the thread pool at once; the next is compressed at once. */
const MAX_COMPRESSING = 4;

export interface SpoolBlock {
  /** Recorded time (`r`) of the block's first and last lines. */
  readonly firstR: number;
  readonly lastR: number;
  readonly lines: number;
  /** Lines in the blocks before it. */
  readonly start: number;
  /** Bytes (as spool-codec.ts lays them out) of the blocks before it, and of its own. */
  readonly textStart: number;
  readonly textBytes: number;
}

interface HeldBlock extends SpoolBlock {
  /** Compressed bytes, once compressed. */
  data: Buffer | null;
  /** The bytes until they are compressed. */
  raw: Uint8Array | null;
}

export interface SpoolOptions {
  blockBytes?: number;
  /** Bytes of the read blocks kept parsed (0: none). */
  parsedCacheBytes?: number;
  /**
   * Bytes at the start of the recording whose lines stay parsed once read: a seek back near the
   * start then only feeds, as a replay holding every parsed line does (0: none).
   */
  pinnedStartBytes?: number;
}

export class ReplaySpool {
  private readonly blocks: HeldBlock[] = [];
  private readonly strings = new SpoolStrings();
  private readonly pending = new BlockEncoder(this.strings);
  private pendingCount = 0;
  private firstR = 0;
  private lastR = 0;
  private count = 0;
  private compressing = 0;
  private readonly compressed = new Set<Promise<void>>();
  /** The blocks read last, parsed, oldest first (a Map keeps insertion order). */
  private readonly parsed = new Map<number, AnyRecordLine[]>();
  private parsedBytes = 0;
  private readonly blockBytes: number;
  private readonly cacheBytes: number;
  private readonly pinnedBytes: number;
  /** Blocks of the recording's start, parsed once read, kept for good. */
  private readonly pinned = new Map<number, AnyRecordLine[]>();
  /** Blocks before this one are within the pinned start. */
  private pinnedBlocks = 0;
  /** Bytes of the blocks before the one being added. */
  private textBytes = 0;
  /** Measured ms to inflate and parse a line, for a seek's estimate (replay-session.ts); until a block is read, a guess at twice a feed's. */
  readMsPerLine = -1;
  /** Blocks inflated and parsed so far (not those the cache served). */
  reads = 0;
  /** Compressed bytes held (bytes not yet compressed counted as they are). */
  bytes = 0;

  constructor(opts: SpoolOptions | number = {}) {
    const o = typeof opts === "number" ? { blockBytes: opts } : opts;
    this.blockBytes = o.blockBytes ?? DEFAULT_BLOCK_BYTES;
    this.cacheBytes = o.parsedCacheBytes ?? DEFAULT_PARSED_CACHE_BYTES;
    this.pinnedBytes = o.pinnedStartBytes ?? DEFAULT_PINNED_START_BYTES;
  }

  get lines(): number {
    return this.count;
  }

  get blockCount(): number {
    return this.blocks.length;
  }

  /** True when the next line added starts a block (block `blockCount`). */
  get atBlockStart(): boolean {
    return this.pendingCount === 0;
  }

  add(line: AnyRecordLine): void {
    if (this.pendingCount === 0) this.firstR = line.r;
    this.lastR = line.r;
    this.pending.add(line);
    this.pendingCount++;
    this.count++;
    if (this.pending.bytes >= this.blockBytes) this.seal();
  }

  /** Seals the last, partial block (call once every line is added); resolves once every block is compressed. */
  async finish(): Promise<void> {
    if (this.pendingCount > 0) this.seal();
    while (this.compressed.size > 0) await Promise.all(this.compressed);
  }

  /**
   * Reads the pinned start's blocks now (call after finish): a seek back near the start then
   * only feeds, and their lines are made while opening, not amid seeks, where they would be
   * young objects a collection copies.
   */
  pinStart(): void {
    for (let i = 0; i < this.pinnedBlocks; i++) this.read(i);
  }

  /** Block `i`'s lines, parsed (each block is read whole: the cursor keeps its place). */
  read(i: number): AnyRecordLine[] {
    const pinned = this.pinned.get(i);
    if (pinned !== undefined) return pinned;
    const cached = this.parsed.get(i);
    if (cached !== undefined) {
      // Most recently used last.
      this.parsed.delete(i);
      this.parsed.set(i, cached);
      return cached;
    }
    const block = this.blocks[i];
    if (block === undefined) return [];
    const t0 = performance.now();
    const lines = decodeBlock(block.raw ?? inflateRawSync(block.data as Buffer), this.strings);
    const ms = (performance.now() - t0) / Math.max(1, lines.length);
    this.readMsPerLine = this.readMsPerLine < 0 ? ms : this.readMsPerLine + (ms - this.readMsPerLine) * 0.3;
    this.reads++;
    if (i < this.pinnedBlocks) {
      this.pinned.set(i, lines);
    } else if (block.textBytes <= this.cacheBytes) {
      this.parsed.set(i, lines);
      this.parsedBytes += block.textBytes;
      for (const j of this.parsed.keys()) {
        if (this.parsedBytes <= this.cacheBytes) break;
        this.parsed.delete(j);
        this.parsedBytes -= this.blocks[j].textBytes;
      }
    }
    return lines;
  }

  /** True when block `i` would be read without inflating and parsing it. */
  isParsed(i: number): boolean {
    return this.parsed.has(i) || this.pinned.has(i);
  }

  /** Block `i`'s times and line counts. */
  block(i: number): SpoolBlock | undefined {
    return this.blocks[i];
  }

  /** The first block whose last line is at or after `t` (blockCount when none is). */
  blockAt(t: number): number {
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.blocks[mid].lastR < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private seal(): void {
    const bytes = this.pending.bytes;
    const raw = this.pending.seal();
    const lines = this.pendingCount;
    this.pendingCount = 0;
    const block: HeldBlock = { firstR: this.firstR, lastR: this.lastR, lines, start: this.count - lines, textStart: this.textBytes, textBytes: bytes, data: null, raw };
    // A block wholly within the pinned start is read once, then kept. (Lines built as every block's
    // are: the reader's, parsed from JSON, are objects of other shapes, and a core fed both after
    // one another has its code made again for them.)
    if (block.textStart + block.textBytes <= this.pinnedBytes) this.pinnedBlocks = this.blocks.length + 1;
    this.blocks.push(block);
    this.textBytes += bytes;
    this.bytes += raw.length;
    // Level 1: a replay opens sooner, for a few percent more memory than level 6.
    const done = (data: Buffer) => {
      block.data = data;
      block.raw = null;
      this.bytes += data.length - raw.length;
    };
    if (this.compressing >= MAX_COMPRESSING) {
      done(deflateRawSync(raw, { level: 1 }));
      return;
    }
    this.compressing++;
    const p = new Promise<void>((resolve) =>
      deflateRaw(raw, { level: 1 }, (err, data) => {
        this.compressing--;
        // A failure keeps the bytes: the replay still works, holding more.
        if (err === null) done(data);
        resolve();
      }),
    );
    this.compressed.add(p);
    void p.finally(() => this.compressed.delete(p));
  }
}

/** Reads a spool forward, one line at a time, from the first line of block `block` (default the first). */
export class SpoolCursor {
  private lines: AnyRecordLine[] = [];
  private i = 0;
  /** Lines taken so far. */
  taken = 0;

  constructor(
    private readonly spool: ReplaySpool,
    private block = 0,
  ) {}

  /** The next line without taking it, or undefined at the end. */
  peek(): AnyRecordLine | undefined {
    while (this.i >= this.lines.length) {
      if (this.block >= this.spool.blockCount) return undefined;
      this.lines = this.spool.read(this.block++);
      this.i = 0;
    }
    return this.lines[this.i];
  }

  /** A cursor at the same place, reading on by itself. */
  clone(): SpoolCursor {
    const c = new SpoolCursor(this.spool, this.block);
    c.lines = this.lines;
    c.i = this.i;
    c.taken = this.taken;
    return c;
  }

  /** The next block it reads (the lines of the one before are in hand). */
  get nextBlock(): number {
    return this.block;
  }

  take(): AnyRecordLine | undefined {
    const line = this.peek();
    if (line !== undefined) {
      this.i++;
      this.taken++;
    }
    return line;
  }
}
