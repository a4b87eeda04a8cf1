// Reads a recording, plain NDJSON (`--record`) or gzip (the app's, recording-writer.ts; told
// apart by the gzip magic bytes, not the name), one checked line at a time, in one linear pass.
// Damage, a line past the line limit or text past the size limit stops the read there and says
// where: the line, the byte of the uncompressed text, and the last recorded time reached;
// everything before it is delivered.
import { createReadStream } from "node:fs";
import { basename } from "node:path";
import { open, stat } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import type { Readable } from "node:stream";
import { LIMITS } from "../../../shared/protocol/index.js";
import { parseRecordLine, type AnyRecordLine } from "./recording-line.js";

export interface RecordingStop {
  /** 1-based line number of the first line not loaded. */
  line: number;
  /** Offset of that line in the (uncompressed) text. */
  byte: number;
  reason: string;
  /** The last hub time (`r`) loaded, null when nothing was. */
  reachedT: number | null;
}

export interface ReadSummary {
  gzip: boolean;
  /** Lines delivered (blank lines not counted). */
  lines: number;
  /** Uncompressed bytes read. */
  bytes: number;
  /** Bytes on disk. */
  fileBytes: number;
  stoppedAt?: RecordingStop;
}

const NEWLINE = 0x0a;
const MiB = 1024 * 1024;

/**
 * A line holds one agent message (at most LIMITS.maxPacketBytes on the wire) and its envelope, or
 * a whole `register` list assembled from parts: 10,000 semaphores at ~1 KB each with room to spare.
 */
export const DEFAULT_MAX_LINE_BYTES = 12 * LIMITS.maxPacketBytes;
/** About three hours of 100 semaphores; a few MB of gzip can expand to far more. */
export const DEFAULT_MAX_TEXT_BYTES = 1024 * MiB;

export interface ReadLimits {
  /** A longer line stops the read (it is refused as it grows, never held whole). */
  maxLineBytes?: number;
  /** Uncompressed text past this stops the read. */
  maxTextBytes?: number;
  /** How the reader's user raises each limit (e.g. a command-line option), said in the refusal. */
  raiseWith?: { maxLineBytes?: string; maxTextBytes?: string };
}

const size = (bytes: number) => (bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`);

export async function isGzipFile(file: string): Promise<boolean> {
  const fh = await open(file, "r");
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await fh.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/** Says where a read stopped, in the words the dashboard and the CLI show. */
export function describeStop(stop: RecordingStop): string {
  const at = stop.reachedT === null ? "before any recorded time" : `recorded time reached ${new Date(stop.reachedT).toISOString()}`;
  return `stopped at line ${stop.line} (byte ${stop.byte} of the recording's text; ${at}): ${stop.reason}; everything before it was loaded`;
}

/**
 * Streams `file` to `onLine` in order, with the share of the file read so far (0–1, in steps of
 * the chunks read). Rejects only when the file cannot be opened or read at all; damage (bad JSON,
 * a bad payload, cut-short compressed data), the limits, and a line `onLine` refuses (it returns
 * why) end with `stoppedAt`.
 */
export async function readRecording(file: string, onLine: (line: AnyRecordLine, n: number, read: number) => string | void, limits: ReadLimits = {}): Promise<ReadSummary> {
  const maxLine = limits.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const maxText = limits.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  const raise = (which: keyof NonNullable<ReadLimits["raiseWith"]>) => {
    const how = limits.raiseWith?.[which];
    return how === undefined ? "" : ` (raise it with ${how})`;
  };
  const gzip = await isGzipFile(file);
  const onDisk = (await stat(file)).size;
  const raw = createReadStream(file);
  let fileBytes = 0;
  raw.on("data", (c) => (fileBytes += (c as Buffer).length));
  const source: Readable = gzip ? raw.pipe(createGunzip()) : raw;
  // pipe() does not forward errors: a read error must still end the loop below.
  if (gzip) raw.on("error", (err) => source.destroy(err));

  let n = 0;
  let delivered = 0;
  let bytes = 0;
  let lineStart = 0;
  let reachedT: number | null = null;
  // The line read so far, in the chunks it came in: joined once, when its newline arrives.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let stoppedAt: RecordingStop | undefined;

  const stop = (reason: string) => (stoppedAt = { line: n + 1, byte: lineStart, reason, reachedT });
  const tooLong = () => stop(`a line of ${basename(file)} is longer than the ${size(maxLine)} line limit${raise("maxLineBytes")}`);
  const take = (buf: Buffer): boolean => {
    n++;
    const text = buf.toString("utf8");
    if (text.trim() !== "") {
      const parsed = parseRecordLine(text);
      if (!parsed.ok) {
        stoppedAt = { line: n, byte: lineStart, reason: parsed.reason, reachedT };
        return false;
      }
      const refused = onLine(parsed.line, n, onDisk > 0 ? Math.min(1, fileBytes / onDisk) : 1);
      if (typeof refused === "string") {
        stoppedAt = { line: n, byte: lineStart, reason: refused, reachedT };
        return false;
      }
      if (parsed.line.k !== "range") reachedT = parsed.line.r;
      delivered++;
    }
    lineStart += buf.length + 1;
    return true;
  };
  /** Takes the whole lines of `c` (the rest waits for its newline); false once the read stops. */
  const lines = (c: Buffer): boolean => {
    let from = 0;
    let nl: number;
    while ((nl = c.indexOf(NEWLINE, from)) !== -1) {
      if (pendingBytes + nl - from > maxLine) {
        tooLong();
        return false;
      }
      const line = pendingBytes === 0 ? c.subarray(from, nl) : Buffer.concat([...pending, c.subarray(from, nl)]);
      pending = [];
      pendingBytes = 0;
      if (!take(line)) return false;
      from = nl + 1;
    }
    if (from < c.length) {
      pendingBytes += c.length - from;
      if (pendingBytes > maxLine) {
        tooLong();
        return false;
      }
      pending.push(c.subarray(from));
    }
    return true;
  };

  try {
    for await (const chunk of source) {
      const c = chunk as Buffer;
      const room = maxText - bytes;
      bytes += Math.min(c.length, room);
      if (c.length > room) {
        // The lines that end within the limit are delivered; the one it cuts is not.
        if (lines(c.subarray(0, room))) stop(`${basename(file)} is more than the ${size(maxText)} of text a replay reads${raise("maxTextBytes")}`);
        return done();
      }
      if (!lines(c)) return done();
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (!gzip || code === "ENOENT" || code === "EACCES" || code === "EISDIR") throw err;
    const reason =
      code === "Z_BUF_ERROR" || /unexpected end/i.test(String((err as Error).message))
        ? "the compressed data ends early (the recording was cut short, e.g. by a crash)"
        : `the compressed data is damaged (${(err as Error).message})`;
    // What decompressed before the damage, up to its last whole line, is still good.
    stoppedAt = { line: n + 1, byte: lineStart, reason, reachedT };
    return done();
  } finally {
    raw.destroy();
    source.destroy();
  }
  // The last line has no newline: whole if it parses, else a line the crash cut short.
  if (pendingBytes > 0) {
    const rest = Buffer.concat(pending);
    if (rest.toString("utf8").trim() !== "") take(rest);
  }
  return done();

  function done(): ReadSummary {
    return { gzip, lines: delivered, bytes, fileBytes, ...(stoppedAt !== undefined ? { stoppedAt } : {}) };
  }
}
