// The compact recording: the same NDJSON lines as recorder.ts, gzip-compressed as one stream
// (the JSON of consecutive samples repeats itself, which is what gzip is good at) with a sync
// flush every second, so a crash loses at most the last second: everything up to the last flush
// decompresses. Appending to an existing file starts a new gzip member, which gunzip reads on.
import { createWriteStream, type WriteStream } from "node:fs";
import { constants, createGzip, type Gzip } from "node:zlib";
import type { RecordLine, RecordSink } from "../core/record-line.js";

/** A crash loses at most this much of the recording. */
export const FLUSH_MS = 1000;

export interface GzipRecorderOptions {
  flushMs?: number;
  /** gzip level; 6 is zlib's default (9 saves ~3 % more for ~2× the CPU). */
  level?: number;
  /** Create the file, failing if anything is at its path already (a saved range): no append, no link followed. */
  exclusive?: boolean;
}

/** Recordings hold stacks, names and timings of someone's services: readable by their owner only. */
export const RECORDING_FILE_MODE = 0o600;
export const RECORDING_DIR_MODE = 0o700;

export class GzipRecorder implements RecordSink {
  lines = 0;
  /** Bytes of text written (before compression). */
  textBytes = 0;
  /** Compressed bytes handed to the file so far. */
  bytes = 0;
  failed: string | null = null;
  readonly closed: Promise<void>;
  private readonly gzip: Gzip;
  private readonly out: WriteStream;
  private readonly timer: ReturnType<typeof setInterval>;
  private dirty = false;
  private ended = false;

  /** Creates (or appends to) `file`; a file that cannot be opened is reported through `closed` and `failed`. */
  constructor(
    readonly file: string,
    private readonly log: (line: string) => void,
    opts: GzipRecorderOptions = {},
  ) {
    this.gzip = createGzip({ level: opts.level ?? 6 });
    this.out = createWriteStream(file, { flags: opts.exclusive === true ? "wx" : "a", mode: RECORDING_FILE_MODE });
    this.gzip.on("data", (c: Buffer) => (this.bytes += c.length));
    this.gzip.pipe(this.out);
    this.closed = new Promise<void>((resolve) => {
      this.out.once("close", resolve);
    });
    const fail = (err: Error) => {
      // A full disk must not take the hub down: stop recording, say so once.
      if (this.failed !== null) return;
      this.failed = err.message;
      this.log(`semscope hub: recording to ${file} stopped: ${err.message}`);
      this.close();
      this.out.destroy();
    };
    this.out.on("error", fail);
    this.gzip.on("error", fail);
    this.timer = setInterval(() => this.flush(), opts.flushMs ?? FLUSH_MS);
    this.timer.unref();
  }

  get open(): boolean {
    return !this.ended;
  }

  write(line: RecordLine | { r: number; k: string; a?: string; p?: unknown }): void {
    if (this.ended) return;
    const text = `${JSON.stringify(line)}\n`;
    this.gzip.write(text);
    this.lines++;
    this.textBytes += Buffer.byteLength(text);
    this.dirty = true;
  }

  /** Resolves once the compressor has room again (a long copy waits on it rather than queueing the text in memory). */
  drained(): Promise<void> {
    if (this.ended || !this.gzip.writableNeedDrain) return Promise.resolve();
    return Promise.race([new Promise<void>((resolve) => this.gzip.once("drain", resolve)), this.closed]);
  }

  /** Makes everything written so far decompressible from the file (a sync flush), if anything was. */
  flush(): void {
    if (!this.dirty || this.ended) return;
    this.dirty = false;
    this.gzip.flush(constants.Z_SYNC_FLUSH);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.timer);
    this.gzip.end();
  }
}
