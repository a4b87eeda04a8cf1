// One /metrics render as it is written (metrics.ts): scrapes that join it read what is there,
// then wait for the rest. Its text is encoded into blocks of a pool that later renders reuse,
// rather than a Buffer per slice: each new Buffer is memory outside the JS heap that V8 counts,
// and ~25 MB of it per render at 10,000 semaphores started a full garbage collection every few
// renders (each a pause of the whole hub). Free blocks are let go once no render took them for
// a while, so a hub no longer scraped does not keep them.
import { setTimeout as after } from "node:timers";
import { gzipInto } from "./metrics-gzip.js";

/** Bytes a block holds: a slice's text is some tens of KB. */
const BLOCK_BYTES = 1 << 20;
/** Free blocks are let go after this long untaken (Prometheus scrapes every 15 to 60 s). */
const KEEP_FREE_MS = 180_000;

export class BlockPool {
  private free: Buffer[] = [];
  private dropping: NodeJS.Timeout | undefined;

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(BLOCK_BYTES);
  }

  give(blocks: readonly Buffer[]): void {
    for (const b of blocks) this.free.push(b);
    this.dropping?.refresh();
    this.dropping ??= after(() => {
      this.free = [];
      this.dropping = undefined;
    }, KEEP_FREE_MS).unref();
  }

  /** Blocks waiting to be taken again. */
  get size(): number {
    return this.free.length;
  }
}

/** Chunks as they come: a reader reads what is there, then waits for the rest. */
export class Chunks {
  protected readonly chunks: Buffer[] = [];
  private done = false;
  private failure: unknown;
  private wake: (() => void)[] = [];
  endedAt = Infinity;

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.notify();
  }

  end(failure?: unknown): void {
    this.done = true;
    this.failure = failure;
    this.endedAt = performance.now();
    this.notify();
  }

  async *read(): AsyncGenerator<Buffer> {
    for (let i = 0; ; ) {
      while (i < this.chunks.length) yield this.chunks[i++];
      if (this.done) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      await new Promise<void>((r) => this.wake.push(r));
    }
  }

  private notify(): void {
    for (const w of this.wake.splice(0)) w();
  }
}

export class Render extends Chunks {
  private readonly blocks: Buffer[] = [];
  private used = BLOCK_BYTES;
  private readers = 0;
  private retired = false;
  private gz: Chunks | undefined;

  constructor(private readonly pool: BlockPool) {
    super();
  }

  push(text: string): void {
    const n = Buffer.byteLength(text, "utf8");
    if (n > BLOCK_BYTES) {
      this.add(Buffer.from(text, "utf8"));
    } else if (n > 0) {
      if (this.used + n > BLOCK_BYTES) {
        this.blocks.push(this.pool.take());
        this.used = 0;
      }
      const block = this.blocks[this.blocks.length - 1];
      block.write(text, this.used, "utf8");
      this.add(block.subarray(this.used, this.used + n));
      this.used += n;
    }
  }

  /** Its text gzip'd (metrics-gzip.ts), compressed once for every scraper of it that takes gzip. */
  gzipped(): Chunks {
    if (this.gz === undefined) {
      this.gz = new Chunks();
      void gzipInto(this, this.gz);
    }
    return this.gz;
  }

  /** A reader of its chunks starts: they stay its own until close(). */
  open(): void {
    this.readers++;
  }

  /** A reader is done with every chunk it read (a response: closed, its writes flushed or dropped). */
  close(): void {
    this.readers--;
    this.release();
  }

  /** No new reader will come: its blocks go back to the pool once the last one closes. */
  retire(): void {
    this.retired = true;
    this.release();
  }

  private release(): void {
    if (!this.retired || this.readers > 0 || this.blocks.length === 0) return;
    this.pool.give(this.blocks.splice(0));
    this.chunks.length = 0;
    this.gz = undefined;
  }
}
