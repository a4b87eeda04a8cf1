// Reads a recording, plain NDJSON (`--record`) or gzip (the app's, recording-writer.ts; told
// apart by the gzip magic bytes, not the name), one checked line at a time. Damage stops the
// read there and says where: the line, the byte of the uncompressed text, and the last recorded
// time reached; everything before it is delivered.
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import type { Readable } from "node:stream";
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
 * Streams `file` to `onLine` in order. Rejects only when the file cannot be opened or read at
 * all; damage (bad JSON, a bad payload, cut-short compressed data) ends with `stoppedAt`.
 */
export async function readRecording(file: string, onLine: (line: AnyRecordLine, n: number) => void): Promise<ReadSummary> {
  const gzip = await isGzipFile(file);
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
  let rest: Buffer = Buffer.alloc(0);
  let stoppedAt: RecordingStop | undefined;

  const take = (buf: Buffer): boolean => {
    n++;
    const text = buf.toString("utf8");
    if (text.trim() !== "") {
      const parsed = parseRecordLine(text);
      if (!parsed.ok) {
        stoppedAt = { line: n, byte: lineStart, reason: parsed.reason, reachedT };
        return false;
      }
      if (parsed.line.k !== "range") reachedT = parsed.line.r;
      delivered++;
      onLine(parsed.line, n);
    }
    lineStart += buf.length + 1;
    return true;
  };

  try {
    for await (const chunk of source) {
      const c = chunk as Buffer;
      bytes += c.length;
      let buf = rest.length > 0 ? Buffer.concat([rest, c]) : c;
      let nl: number;
      while ((nl = buf.indexOf(NEWLINE)) !== -1) {
        if (!take(buf.subarray(0, nl))) return done();
        buf = buf.subarray(nl + 1);
      }
      rest = Buffer.from(buf);
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
  if (rest.length > 0 && rest.toString("utf8").trim() !== "") take(rest);
  return done();

  function done(): ReadSummary {
    return { gzip, lines: delivered, bytes, fileBytes, ...(stoppedAt !== undefined ? { stoppedAt } : {}) };
  }
}
