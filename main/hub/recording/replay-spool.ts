// What a replay holds of its recording: the checked lines again as NDJSON, in blocks compressed
// one by one, with each block's first and last recorded time and line count. A replay reads
// forward block by block (one block's parsed lines in memory at a time), so a long recording
// costs its compressed size, not its parsed objects, and a gzip bomb's repeated lines next to nothing.
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { AnyRecordLine } from "./recording-line.js";

/** Text per block: small enough to parse at once, large enough to compress well. */
export const DEFAULT_BLOCK_BYTES = 256 * 1024;

export interface SpoolBlock {
  /** Recorded time (`r`) of the block's first and last lines. */
  readonly firstR: number;
  readonly lastR: number;
  readonly lines: number;
  readonly data: Buffer;
}

export class ReplaySpool {
  private readonly blocks: SpoolBlock[] = [];
  private pending: string[] = [];
  private pendingBytes = 0;
  private firstR = 0;
  private lastR = 0;
  private count = 0;
  /** Compressed bytes held. */
  bytes = 0;

  constructor(private readonly blockBytes = DEFAULT_BLOCK_BYTES) {}

  get lines(): number {
    return this.count;
  }

  get blockCount(): number {
    return this.blocks.length;
  }

  /** True when the next line added starts a block (block `blockCount`). */
  get atBlockStart(): boolean {
    return this.pending.length === 0;
  }

  add(line: AnyRecordLine): void {
    const text = JSON.stringify(line);
    if (this.pending.length === 0) this.firstR = line.r;
    this.lastR = line.r;
    this.pending.push(text);
    this.pendingBytes += text.length + 1;
    this.count++;
    if (this.pendingBytes >= this.blockBytes) this.seal();
  }

  /** Compresses the last, partial block: call once every line is added. */
  finish(): void {
    if (this.pending.length > 0) this.seal();
  }

  /** Block `i`'s lines, parsed (each block is read whole: the cursor keeps its place). */
  read(i: number): AnyRecordLine[] {
    const block = this.blocks[i];
    if (block === undefined) return [];
    return inflateRawSync(block.data)
      .toString("utf8")
      .split("\n")
      .map((l) => JSON.parse(l) as AnyRecordLine);
  }

  /** Block `i`'s times and line count. */
  block(i: number): Omit<SpoolBlock, "data"> | undefined {
    return this.blocks[i];
  }

  private seal(): void {
    // Level 1: a replay opens sooner, for a few percent more memory than level 6.
    const data = deflateRawSync(this.pending.join("\n"), { level: 1 });
    this.blocks.push({ firstR: this.firstR, lastR: this.lastR, lines: this.pending.length, data });
    this.bytes += data.length;
    this.pending = [];
    this.pendingBytes = 0;
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

  take(): AnyRecordLine | undefined {
    const line = this.peek();
    if (line !== undefined) {
      this.i++;
      this.taken++;
    }
    return line;
  }
}
