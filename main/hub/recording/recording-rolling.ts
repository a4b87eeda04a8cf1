// The app's always-on recording: compact segments (recording-writer.ts) in one folder, a new one
// when the current one reaches its share of the size cap, the oldest deleted while the folder is
// over the cap. Each segment replays on its own: it starts with the hub's start line, marked as
// continuing the previous segment, followed by a preamble (the thresholds changed since, merged into one line, and
// every known agent's hello and register) so the engine knows the agents whose samples follow.
import { mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { ThresholdsPatch } from "../../../shared/alerts/index.js";
import type { Hello, Register } from "../../../shared/protocol/index.js";
import type { RecordLine, RecordSink, StartPayload } from "../core/record-line.js";
import { GzipRecorder, RECORDING_DIR_MODE } from "./recording-writer.js";

export const SEGMENT_SUFFIX = ".ndjson.gz";
/** A segment never grows past this, whatever the cap: a replay reads its file through to open, and again to seek back (8 MiB is ~55 MB of lines). */
export const MAX_SEGMENT_BYTES = 8 * 1024 * 1024;
export const MIN_SEGMENT_BYTES = 64 * 1024;
/** The cap is shared by this many segments, so dropping the oldest frees about 1/8 of it. */
const SEGMENTS_PER_CAP = 8;

/** The start line of a segment that continues the previous one (core/record-line.ts's StartPayload, plus). */
export interface SegmentStart extends StartPayload {
  /** The segment this one continues (same hub run); absent on a hub run's first segment. */
  continues?: string;
  /** How many lines after the start line only restate state (skipped when segments are joined). */
  preamble?: number;
}

export interface RollingOptions {
  dir: string;
  /** Bytes the folder may hold (all segments, the current one included). */
  capBytes: number;
  log: (line: string) => void;
  /** Override the segment size (tests); default capBytes / 8 within [64 KiB, 64 MiB]. */
  segmentBytes?: number;
  flushMs?: number;
}

export interface SegmentFile {
  file: string;
  name: string;
  bytes: number;
}

export function segmentBytesFor(capBytes: number): number {
  return Math.min(MAX_SEGMENT_BYTES, Math.max(MIN_SEGMENT_BYTES, Math.floor(capBytes / SEGMENTS_PER_CAP)));
}

/** Segment names sort in time order: the hub time of their first line, then a counter. */
export function segmentName(t: number, counter: number): string {
  const stamp = new Date(t).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  return `semscope-${stamp}-${String(counter).padStart(4, "0")}${SEGMENT_SUFFIX}`;
}

/** The folder's segments, oldest first. */
export function listSegments(dir: string): SegmentFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: SegmentFile[] = [];
  for (const name of names.filter((n) => n.startsWith("semscope-") && n.endsWith(SEGMENT_SUFFIX)).sort()) {
    try {
      out.push({ file: join(dir, name), name, bytes: statSync(join(dir, name)).size });
    } catch {
      // Deleted meanwhile.
    }
  }
  return out;
}

/**
 * Deletes the oldest segments (never `keep`) until the folder is within `capBytes`; returns the
 * names deleted.
 */
export function pruneSegments(dir: string, capBytes: number, keep?: string, currentBytes = 0): string[] {
  const segs = listSegments(dir);
  let total = segs.reduce((s, f) => s + (f.file === keep ? Math.max(f.bytes, currentBytes) : f.bytes), 0);
  const dropped: string[] = [];
  for (const seg of segs) {
    if (total <= capBytes) break;
    if (seg.file === keep) continue;
    try {
      unlinkSync(seg.file);
    } catch {
      continue;
    }
    total -= seg.bytes;
    dropped.push(seg.name);
  }
  return dropped;
}

interface AgentPreamble {
  hello: Hello;
  register?: Register;
  connected: boolean;
}

export class RollingRecorder implements RecordSink {
  private current: GzipRecorder | null = null;
  private start: (RecordLine & { k: "start" }) | null = null;
  /** Every thresholds change since the start, merged into one patch (later fields win, as applied). */
  private thresholds: ThresholdsPatch | null = null;
  private readonly agents = new Map<string, AgentPreamble>();
  private counter = 0;
  /** Lines and compressed bytes of the segments closed so far in this run. */
  private doneLines = 0;
  private doneBytes = 0;
  /** Compressed bytes per byte of text of the last segment closed; 1 (the text's own size, a bound) before one has. */
  private ratio = 1;
  private readonly segmentBytes: number;
  private readonly closing: Promise<void>[] = [];
  private ended = false;
  /** Segments deleted to stay within the cap, oldest first (for the log and tests). */
  readonly dropped: string[] = [];

  constructor(private readonly opts: RollingOptions) {
    mkdirSync(opts.dir, { recursive: true, mode: RECORDING_DIR_MODE });
    this.segmentBytes = opts.segmentBytes ?? segmentBytesFor(opts.capBytes);
  }

  get file(): string {
    return this.current?.file ?? this.opts.dir;
  }

  get lines(): number {
    return this.doneLines + (this.current?.lines ?? 0);
  }

  get bytes(): number {
    return this.doneBytes + (this.current?.bytes ?? 0);
  }

  get open(): boolean {
    return !this.ended && this.current?.failed == null;
  }

  get closed(): Promise<void> {
    return Promise.all(this.closing).then(() => this.current?.closed);
  }

  write(line: RecordLine): void {
    // A segment that could not be written (full disk: logged once by GzipRecorder) ends the recording.
    if (this.ended || (this.current !== null && this.current.failed !== null)) return;
    this.remember(line);
    if (this.current === null) {
      this.current = this.openSegment(line.r);
    } else if (this.currentBytes() >= this.segmentBytes && line.k !== "start") {
      this.rotate(line.r);
    }
    this.current.write(line);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    const last = this.current;
    if (last === null) return;
    last.close();
    // The last segment grew after the last prune; once its final bytes are on disk the folder is
    // brought within the cap (the segment itself is kept).
    this.closing.push(last.closed.then(() => this.prune(last.file)));
  }

  private openSegment(t: number): GzipRecorder {
    const name = segmentName(t, this.counter++);
    const seg = new GzipRecorder(join(this.opts.dir, name), this.opts.log, { flushMs: this.opts.flushMs });
    this.prune(seg.file);
    return seg;
  }

  /** Closes the current segment and opens the next with the start line and the preamble. */
  private rotate(t: number): void {
    const prev = this.current;
    if (prev === null || this.start === null) return;
    prev.close();
    this.closing.push(
      prev.closed.then(() => {
        if (prev.textBytes > 0) this.ratio = prev.bytes / prev.textBytes;
        this.prune(this.current?.file);
      }),
    );
    this.doneLines += prev.lines;
    this.doneBytes += prev.bytes;
    const next = this.openSegment(t);
    this.current = next;
    const preamble: RecordLine[] = [];
    if (this.thresholds !== null) preamble.push({ r: t, k: "thresholds", p: this.thresholds });
    for (const [agentId, a] of this.agents) {
      preamble.push({ r: t, k: "hello", a: agentId, p: a.hello });
      if (a.register !== undefined) preamble.push({ r: t, k: "register", a: agentId, p: a.register });
      if (!a.connected) preamble.push({ r: t, k: "disconnect", a: agentId });
    }
    const start: SegmentStart = { ...this.start.p, continues: prev.file.split(/[\\/]/).pop() as string, preamble: preamble.length };
    next.write({ r: t, k: "start", p: start });
    for (const l of preamble) next.write(l);
  }

  /**
   * The current segment counts at its share of the cap at least: it grows to that before the next
   * rotation prunes again, and the compressed bytes it reports trail what it was given.
   */
  private prune(keep: string | undefined): void {
    const current = this.ended ? (this.current?.bytes ?? 0) : Math.max(this.currentBytes(), this.segmentBytes);
    const dropped = pruneSegments(this.opts.dir, this.opts.capBytes, keep, current);
    for (const name of dropped) {
      this.dropped.push(name);
      this.opts.log(`semscope: recording ${name} deleted (the recordings folder is over its ${this.opts.capBytes}-byte cap)`);
    }
  }

  /**
   * The current segment's compressed size: what the compressor has handed back, or more when that
   * trails the text given (it compresses off the thread; a burst of lines is ahead of it), the text
   * at the last closed segment's ratio.
   */
  private currentBytes(): number {
    const c = this.current;
    return c === null ? 0 : Math.max(c.bytes, Math.ceil(c.textBytes * this.ratio));
  }

  /** Keeps what a new segment must restate. */
  private remember(line: RecordLine): void {
    switch (line.k) {
      case "start":
        this.start = line;
        this.thresholds = null;
        this.agents.clear();
        break;
      case "thresholds":
        this.thresholds = mergePatches(this.thresholds ?? {}, line.p);
        break;
      case "hello": {
        const prev = this.agents.get(line.a);
        // A resumed agent under the same identity keeps its semaphores until it registers again.
        const same = prev !== undefined && prev.hello.service === line.p.service && prev.hello.instance === line.p.instance;
        this.agents.set(line.a, { hello: line.p, register: same ? prev.register : undefined, connected: true });
        break;
      }
      case "register": {
        const a = this.agents.get(line.a);
        if (a !== undefined) a.register = line.p;
        break;
      }
      case "disconnect": {
        const a = this.agents.get(line.a);
        if (a !== undefined) a.connected = false;
        break;
      }
      case "forget":
        this.agents.delete(line.a);
        break;
      default:
    }
  }
}

/** `later` over `earlier`, group by group and field by field: what applying both in turn sets. */
function mergePatches(earlier: ThresholdsPatch, later: ThresholdsPatch): ThresholdsPatch {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [group, fields] of [...Object.entries(earlier), ...Object.entries(later)]) {
    if (fields === undefined) continue;
    const kept = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    out[group] = { ...out[group], ...kept };
  }
  return out as ThresholdsPatch;
}
