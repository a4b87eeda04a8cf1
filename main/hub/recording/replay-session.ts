// A recording played back through a HubCore of its own: every line fed to it in recording order,
// with the hub clock set to the line's time, so the engine and the history (the charts, holders,
// stacks and alerts) are at each moment what the live hub had. The lines are held compressed in
// blocks (replay-spool.ts), read forward one block at a time. The cursor moves forward by feeding
// more lines; or from the start, or from the core saved at a restore point (replay-checkpoints.ts,
// taken as the file is first read), whichever its measured costs say reaches the target soonest.
// The engine is pure on its inputs, so each is exact: what a replay fed from the first line shows.
// A seek longer than a slice (seekInSlices) feeds a core of its own a few ms at a time, letting the
// hub answer between slices, and only then replaces the one the dashboards read: they see the
// cursor where it was, then the target, never a time between.
import { mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import type { ReplayMark, ReplayStatus } from "../../../shared/ui-protocol/index.js";
import type { HubCore } from "../core/hub-core.js";
import type { AnyRecordLine, RangeLine } from "./recording-line.js";
import { describeStop, readRecording, type ReadLimits, type ReadSummary } from "./recording-reader.js";
import { BufferRecycler } from "./buffer-recycler.js";
import { ReplayCheckpoints, type Checkpoint, type CheckpointLimits, type ReplayPlace } from "./replay-checkpoints.js";
import { ReplayFeed, type ReplayCoreOptions } from "./replay-feed.js";
import { ReplaySpool, SpoolCursor, type SpoolBlock, type SpoolOptions } from "./replay-spool.js";
import { SEGMENT_SUFFIX } from "./recording-rolling.js";
import { nameTaken, nameTakenError, safeName, saveWriteError } from "./recording-name.js";
import { GzipRecorder, RECORDING_DIR_MODE } from "./recording-writer.js";

export interface ReplaySessionOptions extends ReadLimits, CheckpointLimits, ReplayCoreOptions, SpoolOptions {
  /** Wall-clock ms a seek feeds before it lets the event loop run (default SEEK_SLICE_MS). */
  seekSliceMs?: number;
}

/** Wall-clock period of a playing cursor's steps. */
export const PLAY_STEP_MS = 250;
/** A hub's dashboards and API wait at most about this long for a seek under way. */
export const SEEK_SLICE_MS = 8;
/** Lines fed between two looks at the clock (a line is tens of µs). */
const LINES_PER_CLOCK_CHECK = 16;

type SeekStart = "here" | "start" | Checkpoint;

export class ReplaySession {
  /** The core the dashboards read and where it is in the recording (replaced when a seek lands). */
  private at: ReplayFeed;
  /** Where the next line comes from; a backward seek starts a fresh one. */
  private reader: SpoolCursor;
  /** Measured ms to feed a line to the core, for a seek's estimate. */
  private feedMsPerLine = 0;
  /** Ms spent feeding lines as the file was read. */
  private fedMs = 0;
  private playing = false;
  private speed = 1;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly resetListeners = new Set<() => void>();
  private readonly statusListeners = new Set<() => void>();
  private readonly spool: ReplaySpool;
  private readonly checkpoints: ReplayCheckpoints;
  /** The highest `r` of the lines loaded so far. */
  private maxR = -Infinity;
  private first: number | null = null;
  private last = 0;
  /** The highest `r` of lines before the first timed one (a saved range's header). */
  private headR = -Infinity;
  private markMap: Map<string, ReplayMark> | null = new Map();
  private summaryRead: ReadSummary | null = null;
  private rangeLine: RangeLine["p"] | undefined;
  private flightCount = 0;
  private marksSorted: ReplayMark[] = [];
  /** Bumped by every seek: a seek in slices that sees it changed was superseded. */
  private seekJob = 0;
  /** Where a seek in slices is going, while it is under way. */
  private seekingTo: number | null = null;
  /** Callers of seekInSlices waiting for the cursor to land. */
  private landing: (() => void)[] = [];
  /** The buffers of cores done with, for the next restore or copy to write over. */
  private readonly recycler = new BufferRecycler();

  private constructor(
    readonly file: string,
    private readonly opts: ReplaySessionOptions,
  ) {
    this.spool = new ReplaySpool(opts);
    this.checkpoints = new ReplayCheckpoints(opts);
    this.reader = new SpoolCursor(this.spool);
    this.at = new ReplayFeed(opts);
  }

  /**
   * Loads `file` (plain or gzip) in one pass: each checked line is kept compressed (replay-spool.ts)
   * and fed to a core on the way, for the timeline's alerts. Rejects only when it cannot be read at all.
   */
  static async open(file: string, opts: ReplaySessionOptions = {}): Promise<ReplaySession> {
    const s = new ReplaySession(file, opts);
    s.summaryRead = await readRecording(file, (line, _n, read) => s.load(line, read), opts);
    s.feedMsPerLine = s.fedMs / Math.max(1, s.spool.lines);
    await s.spool.finish();
    s.spool.pinStart();
    s.marksSorted = [...(s.markMap ?? new Map<string, ReplayMark>()).values()].sort((x, y) => x.at - y.at);
    s.markMap = null;
    s.recycler.give(s.at.core);
    // Opened where the story starts: a saved range's start, else the first alert (the end is
    // after shutdown, every agent gone), else the start.
    s.at.reset(s.from);
    s.reader = new SpoolCursor(s.spool);
    if (s.rangeLine !== undefined) s.seek(s.rangeLine.from);
    else s.seek(s.marksSorted[0]?.at ?? s.from);
    return s;
  }

  get from(): number {
    return this.first ?? 0;
  }

  get to(): number {
    return this.first === null ? 0 : this.last;
  }

  get marks(): ReplayMark[] {
    return this.marksSorted;
  }

  get range(): RangeLine["p"] | undefined {
    return this.rangeLine;
  }

  get flights(): number {
    return this.flightCount;
  }

  get summary(): ReadSummary {
    return this.summaryRead ?? { gzip: false, lines: 0, bytes: 0, fileBytes: 0 };
  }

  /** What the replay holds of the recording: its lines, compressed, in blocks. */
  get held(): { lines: number; blocks: number; bytes: number; checkpoints: number; checkpointBytes: number; blockReads: number } {
    return { lines: this.spool.lines, blocks: this.spool.blockCount, bytes: this.spool.bytes, checkpoints: this.checkpoints.count, checkpointBytes: this.checkpoints.bytes, blockReads: this.spool.reads };
  }

  /** The core the dashboards read (replaced by a backward seek: listen with onReset). */
  get current(): HubCore {
    return this.at.core;
  }

  get cursor(): number {
    return this.at.clock;
  }

  get message(): string | undefined {
    return this.summary.stoppedAt === undefined ? undefined : describeStop(this.summary.stoppedAt);
  }

  /** Called after the cursor jumped (the core may be a new one): dashboards need a fresh snapshot. */
  onReset(fn: () => void): () => void {
    this.resetListeners.add(fn);
    return () => this.resetListeners.delete(fn);
  }

  onStatus(fn: () => void): () => void {
    this.statusListeners.add(fn);
    return () => this.statusListeners.delete(fn);
  }

  status(): ReplayStatus {
    const s: ReplayStatus = {
      name: basename(this.file),
      from: this.from,
      to: this.to,
      cursor: this.at.clock,
      playing: this.playing,
      speed: this.speed,
      marks: this.marks,
      lines: this.summary.lines,
      fileBytes: this.summary.fileBytes,
      compressed: this.summary.gzip,
      flights: this.flights,
    };
    if (this.range !== undefined) s.range = this.range;
    const message = this.message;
    if (message !== undefined) s.message = message;
    return s;
  }

  /** Where a seek in slices is going, while one is under way. */
  get seeking(): number | null {
    return this.seekingTo;
  }

  /** Moves the cursor to `t` (clamped to the recording) at once; supersedes a seek under way. */
  seek(t: number): void {
    const target = this.clamp(t);
    this.seekJob++;
    const { feed, reader } = this.place(this.startFor(target).from, false);
    this.advance(feed, reader, target, Infinity);
    this.land(feed, reader);
  }

  /**
   * Moves the cursor to `t` as seek does, a slice of at most seekSliceMs at a time when it would
   * take longer; resolves once the cursor has landed: here, or where a later seek (which supersedes
   * this one) took it. Play and pause meanwhile take effect from where it lands.
   */
  async seekInSlices(t: number): Promise<void> {
    const target = this.clamp(t);
    const sliceMs = this.opts.seekSliceMs ?? SEEK_SLICE_MS;
    const landed = new Promise<void>((resolve) => this.landing.push(resolve));
    const { from, ms } = this.startFor(target);
    // A short step forward is fed at once; anything else (a restore, or a fresh core) is made aside
    // anyway, so it costs no more in slices, and an estimate that fell short blocks nobody.
    if (from === "here" && ms <= sliceMs) {
      this.seek(target);
      return landed;
    }
    const job = ++this.seekJob;
    this.seekingTo = target;
    try {
      // Off to the side: the dashboards keep reading the core they have until this one lands.
      // Its restore or copy counts in its first slice.
      let deadline = performance.now() + sliceMs;
      const { feed, reader } = this.place(from, true);
      for (; !this.advance(feed, reader, target, deadline); deadline = performance.now() + sliceMs) {
        await new Promise((resolve) => setImmediate(resolve));
        if (job !== this.seekJob) {
          this.recycler.give(feed.core);
          return landed;
        }
      }
      this.land(feed, reader);
    } catch (err) {
      // The cursor stays where it was, and playing is no longer held for this seek.
      if (job === this.seekJob) this.seekingTo = null;
      throw err;
    }
    return landed;
  }

  /**
   * Writes [from, to] of this recording as `<dir>/<name>.ndjson.gz`: a `range` line, then every
   * line from the start through `to` (the engine needs what came before `from`). Resolves to the file.
   */
  async saveRange(dir: string, name: string, from: number, to: number): Promise<string> {
    if (!(Number.isFinite(from) && Number.isFinite(to) && from <= to)) throw new RangeError("from and to must be times with from <= to");
    const clean = safeName(name);
    mkdirSync(dir, { recursive: true, mode: RECORDING_DIR_MODE });
    const file = join(dir, `${clean}${SEGMENT_SUFFIX}`);
    if (nameTaken(file)) throw nameTakenError(clean, dir);
    // Exclusive: a dangling link planted at the name is refused, not followed.
    const out = new GzipRecorder(file, () => undefined, { exclusive: true });
    out.write({ r: from, k: "range", p: { name: clean, from, to } });
    const lines = new SpoolCursor(this.spool);
    for (let line = lines.take(); line !== undefined; line = lines.take()) {
      if (line.k === "range") continue;
      if (line.r > to) break;
      out.write(line as Parameters<GzipRecorder["write"]>[0]);
      await out.drained();
    }
    out.close();
    await out.closed;
    if (out.failed !== null) throw saveWriteError(out.failed, clean, dir, file);
    return file;
  }

  /** Plays from the cursor at `speed`× (1–60); from the start when at the end. */
  play(speed = this.speed): void {
    if (!Number.isFinite(speed) || speed < 1 || speed > 60) throw new RangeError("speed must be between 1 and 60");
    this.speed = speed;
    if ((this.seekingTo ?? this.at.clock) >= this.to) this.seek(this.from);
    this.playing = true;
    if (this.timer === null) {
      this.timer = setInterval(() => this.step(), PLAY_STEP_MS);
      this.timer.unref();
    }
    this.emitStatus();
  }

  pause(): void {
    this.playing = false;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.emitStatus();
  }

  close(): void {
    this.seekJob++;
    this.seekingTo = null;
    for (const fn of this.landing.splice(0)) fn();
    this.pause();
    this.resetListeners.clear();
    this.statusListeners.clear();
  }

  /** One playing step: the lines of the next PLAY_STEP_MS × speed of recorded time, as deltas. */
  private step(): void {
    // Playing goes on from where a seek under way lands.
    if (this.seekingTo !== null) return;
    this.advance(this.at, this.reader, Math.min(this.to, this.at.clock + PLAY_STEP_MS * this.speed), Infinity);
    if (this.at.clock >= this.to) this.pause();
    else this.emitStatus();
  }

  private emitStatus(): void {
    for (const fn of this.statusListeners) fn();
  }

  /**
   * Where a seek to `target` starts feeding: here (forward only), the start, or a restore point,
   * whichever is estimated to take least: lines to feed at the measured feed cost, blocks to read
   * that are not parsed already at the measured read cost, and a point's measured restore cost.
   */
  private startFor(target: number): { from: SeekStart; ms: number } {
    const spool = this.spool;
    const last = Math.min(spool.blockAt(target), spool.blockCount - 1);
    const end = last < 0 ? 0 : (spool.block(last) as SpoolBlock).start + (spool.block(last) as SpoolBlock).lines;
    const cost = (position: number, block: number) => {
      let read = 0;
      for (let i = block; i <= last; i++) if (!spool.isParsed(i)) read += (spool.block(i) as SpoolBlock).lines;
      return Math.max(0, end - position) * this.feedMsPerLine + read * (spool.readMsPerLine < 0 ? 2 * this.feedMsPerLine : spool.readMsPerLine);
    };
    let best: SeekStart = "start";
    let least = cost(0, 0);
    if (target >= this.at.clock) {
      const here = cost(this.at.position, this.reader.nextBlock);
      if (here <= least) [best, least] = ["here", here];
    }
    const point = this.checkpoints.before(target);
    if (point !== undefined && (best === "start" || point.position > this.at.position)) {
      const there = this.checkpoints.restoreMs(point) + cost(point.position, point.block);
      if (there < least) [best, least] = [point, there];
    }
    return { from: best, ms: least };
  }

  private clamp(t: number): number {
    return Math.min(this.to, Math.max(this.from, t));
  }

  /**
   * A feed at `from` and the cursor reading on from there: at the start (a fresh core), a restore
   * point (a copy of the core saved there), or here. The dashboards' own feed unless `aside`:
   * then a new one (here: a copy of theirs).
   */
  private place(from: SeekStart, aside: boolean): { feed: ReplayFeed; reader: SpoolCursor } {
    const feed = aside ? new ReplayFeed(this.opts) : this.at;
    if (from === "here") {
      if (aside) feed.copyOf(this.at, this.recycler);
      return { feed, reader: aside ? this.reader.clone() : this.reader };
    }
    // The dashboards' core is about to be replaced: its buffers serve the restore.
    if (!aside) this.recycler.give(feed.core);
    if (from === "start") {
      feed.reset(this.from);
      return { feed, reader: new SpoolCursor(this.spool) };
    }
    feed.moveTo(from, this.checkpoints.restore(from, feed.fresh({}), this.recycler));
    return { feed, reader: new SpoolCursor(this.spool, from.block) };
  }

  /** Feeds `feed` the lines up to `t` from `reader`; false when `deadline` (performance.now()) came first. */
  private advance(feed: ReplayFeed, reader: SpoolCursor, t: number, deadline: number): boolean {
    let n = 0;
    for (let line = reader.peek(); line !== undefined && line.r <= t; line = reader.peek()) {
      reader.take();
      feed.take(line);
      if (++n % LINES_PER_CLOCK_CHECK === 0 && performance.now() >= deadline) return false;
    }
    feed.clock = Math.max(feed.clock, t);
    return true;
  }

  /** The cursor is where `feed` is: the dashboards get its core, as a snapshot, not as deltas. */
  private land(feed: ReplayFeed, reader: SpoolCursor): void {
    this.seekingTo = null;
    const was = this.at;
    this.at = feed;
    this.reader = reader;
    this.at.core.changes.take();
    for (const fn of this.resetListeners) fn();
    // The dashboards have a snapshot of the new core (resync drops anything built from the old).
    if (was !== feed) this.recycler.give(was.core);
    this.emitStatus();
    for (const fn of this.landing.splice(0)) fn();
  }

  /** One line as the file is read: kept, and fed on to the end for the timeline's alerts. */
  private load(line: AnyRecordLine, read: number): void {
    const at = this.at;
    if (this.first !== null && this.spool.atBlockStart) {
      const place: ReplayPlace = { block: this.spool.blockCount, position: at.position, clock: at.clock, maxR: this.maxR, connection: at.connection, skip: at.skip };
      this.checkpoints.offer(place, at.core, read);
    }
    this.maxR = Math.max(this.maxR, line.r);
    this.spool.add(line);
    if (line.k === "range") {
      this.rangeLine ??= line.p as RangeLine["p"];
    } else {
      if (line.k === "flight") this.flightCount++;
      this.last = line.r;
      if (this.first === null) {
        this.first = line.r;
        const lines = at.position;
        at.reset(line.r);
        at.position = lines;
      }
    }
    if (this.first === null) {
      this.headR = Math.max(this.headR, line.r);
      at.position++;
      return;
    }
    at.clock = Math.max(at.clock, this.headR);
    const t0 = performance.now();
    at.take(line);
    this.fedMs += performance.now() - t0;
    const marks = this.markMap as Map<string, ReplayMark>;
    for (const c of at.core.changes.take().alerts) {
      const a = c.alert;
      const when = marks.get(a.id)?.at ?? at.clock;
      marks.set(a.id, { at: when, id: a.id, key: a.key, rule: a.rule, severity: a.severity, message: a.message, raisedAt: a.raisedAt, resolvedAt: a.resolvedAt });
    }
  }

}
