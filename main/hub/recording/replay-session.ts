// A recording played back through a HubCore of its own: every line fed to it in recording order,
// with the hub clock set to the line's time, so the engine and the history (the charts, holders,
// stacks and alerts) are at each moment what the live hub had. The lines are held compressed in
// blocks (replay-spool.ts), read forward one block at a time. The cursor moves forward by feeding
// more lines; backward (or far forward) by restoring the core saved at the nearest earlier restore
// point (replay-checkpoints.ts, taken as the file is first read) and feeding on from there. The
// engine is pure on its inputs, so that is exact: what a replay fed from the first line would show.
import { existsSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import type { ThresholdsPatch } from "../../../shared/alerts/index.js";
import { DEFAULT_MAX_SEMAPHORES } from "../../../shared/history/index.js";
import { REPLAY_VERSION_SUFFIX, type ReplayMark, type ReplayStatus } from "../../../shared/ui-protocol/index.js";
import pkg from "../../../package.json" with { type: "json" };
import { HubCore, type AgentRecord } from "../core/hub-core.js";
import type { AnyRecordLine, RangeLine } from "./recording-line.js";
import { describeStop, readRecording, type ReadLimits, type ReadSummary } from "./recording-reader.js";
import { ReplayCheckpoints, type CheckpointLimits, type ReplayPlace } from "./replay-checkpoints.js";
import { ReplaySpool, SpoolCursor } from "./replay-spool.js";
import { SEGMENT_SUFFIX, type SegmentStart } from "./recording-rolling.js";
import { safeName } from "./recording-name.js";
import { GzipRecorder, RECORDING_DIR_MODE } from "./recording-writer.js";

export interface ReplaySessionOptions extends ReadLimits, CheckpointLimits {
  /** As the live hub's (HubOptions.maxHistories, maxHistoryBytes); the same defaults. */
  maxHistories?: number;
  maxHistoryBytes?: number;
  version?: string;
  /** Text per block of what the replay holds (replay-spool.ts). */
  blockBytes?: number;
}

const HUB_VERSION: string = pkg.version;

/** Wall-clock period of a playing cursor's steps. */
export const PLAY_STEP_MS = 250;

export class ReplaySession {
  private core!: HubCore;
  private clock = 0;
  /** Where the next line comes from; a backward seek starts a fresh one. */
  private reader: SpoolCursor;
  /** Lines taken from the recording so far, the one being fed included. */
  private position = 0;
  private connection = 0;
  /** Lines of a continued segment's preamble still to skip (recording-rolling.ts). */
  private skip = 0;
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

  private constructor(
    readonly file: string,
    private readonly opts: ReplaySessionOptions,
  ) {
    this.spool = new ReplaySpool(opts.blockBytes);
    this.checkpoints = new ReplayCheckpoints(opts);
    this.reader = new SpoolCursor(this.spool);
  }

  /**
   * Loads `file` (plain or gzip) in one pass: each checked line is kept compressed (replay-spool.ts)
   * and fed to a core on the way, for the timeline's alerts. Rejects only when it cannot be read at all.
   */
  static async open(file: string, opts: ReplaySessionOptions = {}): Promise<ReplaySession> {
    const s = new ReplaySession(file, opts);
    s.summaryRead = await readRecording(file, (line, _n, read) => s.load(line, read), opts);
    s.spool.finish();
    await s.checkpoints.settled();
    s.marksSorted = [...(s.markMap ?? new Map<string, ReplayMark>()).values()].sort((x, y) => x.at - y.at);
    s.markMap = null;
    // Opened where the story starts: a saved range's start, else the first alert (the end is
    // after shutdown, every agent gone), else the start.
    s.reset();
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
  get held(): { lines: number; blocks: number; bytes: number; checkpoints: number; checkpointBytes: number } {
    return { lines: this.spool.lines, blocks: this.spool.blockCount, bytes: this.spool.bytes, checkpoints: this.checkpoints.count, checkpointBytes: this.checkpoints.bytes };
  }

  /** The core the dashboards read (replaced by a backward seek: listen with onReset). */
  get current(): HubCore {
    return this.core;
  }

  get cursor(): number {
    return this.clock;
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
      cursor: this.clock,
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

  /** Moves the cursor to `t` (clamped to the recording). */
  seek(t: number): void {
    const target = Math.min(this.to, Math.max(this.from, t));
    const point = this.checkpoints.before(target);
    if (target < this.clock || (point !== undefined && point.position > this.position)) {
      if (point === undefined) this.reset();
      else this.restore(point);
    }
    this.advanceTo(target);
    // What a seek changed reaches dashboards as a snapshot, not as a delta.
    this.core.changes.take();
    for (const fn of this.resetListeners) fn();
    this.emitStatus();
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
    if (existsSync(file)) throw new Error(`${basename(file)} exists already: choose another name`);
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
    if (out.failed !== null) throw new Error(`cannot write ${file}: ${out.failed}`);
    return file;
  }

  /** Plays from the cursor at `speed`× (1–60); from the start when at the end. */
  play(speed = this.speed): void {
    if (!Number.isFinite(speed) || speed < 1 || speed > 60) throw new RangeError("speed must be between 1 and 60");
    this.speed = speed;
    if (this.clock >= this.to) this.seek(this.from);
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
    this.pause();
    this.resetListeners.clear();
    this.statusListeners.clear();
  }

  /** One playing step: the lines of the next PLAY_STEP_MS × speed of recorded time, as deltas. */
  private step(): void {
    this.advanceTo(Math.min(this.to, this.clock + PLAY_STEP_MS * this.speed));
    if (this.clock >= this.to) this.pause();
    else this.emitStatus();
  }

  private emitStatus(): void {
    for (const fn of this.statusListeners) fn();
  }

  private fresh(thresholds: ThresholdsPatch): HubCore {
    this.connection = 0;
    return new HubCore({
      now: () => this.clock,
      version: `${this.opts.version ?? HUB_VERSION}${REPLAY_VERSION_SUFFIX}`,
      thresholds,
      maxHistories: this.opts.maxHistories ?? DEFAULT_MAX_SEMAPHORES,
      ...(this.opts.maxHistoryBytes !== undefined ? { maxHistoryBytes: this.opts.maxHistoryBytes } : {}),
      // The recording says when the hub forgot an agent ("forget" lines).
      forgetAfterMs: 0,
      recorder: undefined,
    });
  }

  /** Back to the start: a fresh core, the recording read again from its first line. */
  private reset(): void {
    this.clock = this.from;
    this.core = this.fresh({});
    this.reader = new SpoolCursor(this.spool);
    this.position = 0;
    this.skip = 0;
  }

  /** To a restore point: a copy of the core saved there, the recording read on from its block. */
  private restore(point: Parameters<ReplayCheckpoints["restore"]>[0]): void {
    this.clock = point.clock;
    this.core = this.checkpoints.restore(point, this.fresh({}));
    this.reader = new SpoolCursor(this.spool, point.block);
    this.position = point.position;
    this.connection = point.connection;
    this.skip = point.skip;
  }

  private advanceTo(t: number): void {
    for (let line = this.reader.peek(); line !== undefined && line.r <= t; line = this.reader.peek()) {
      this.reader.take();
      this.position++;
      this.clock = Math.max(this.clock, line.r);
      this.feed(line);
    }
    this.clock = Math.max(this.clock, t);
  }

  /** One line as the file is read: kept, and fed on to the end for the timeline's alerts. */
  private load(line: AnyRecordLine, read: number): void {
    if (this.first !== null && this.spool.atBlockStart) {
      const place: ReplayPlace = { block: this.spool.blockCount, position: this.position, clock: this.clock, maxR: this.maxR, connection: this.connection, skip: this.skip };
      this.checkpoints.offer(place, this.core, read);
    }
    this.maxR = Math.max(this.maxR, line.r);
    this.spool.add(line);
    this.position++;
    if (line.k === "range") {
      this.rangeLine ??= line.p as RangeLine["p"];
    } else {
      if (line.k === "flight") this.flightCount++;
      this.last = line.r;
      if (this.first === null) {
        this.first = line.r;
        this.clock = line.r;
        this.core = this.fresh({});
      }
    }
    if (this.first === null) {
      this.headR = Math.max(this.headR, line.r);
      return;
    }
    this.clock = Math.max(this.clock, this.headR, line.r);
    this.feed(line);
    const marks = this.markMap as Map<string, ReplayMark>;
    for (const c of this.core.changes.take().alerts) {
      const a = c.alert;
      const at = marks.get(a.id)?.at ?? this.clock;
      marks.set(a.id, { at, id: a.id, key: a.key, rule: a.rule, severity: a.severity, message: a.message, raisedAt: a.raisedAt, resolvedAt: a.resolvedAt });
    }
  }

  /** One line into the core: the call the live hub made when it recorded it. */
  private feed(line: AnyRecordLine): void {
    if (this.skip > 0) {
      this.skip--;
      return;
    }
    const core = this.core;
    const a = (line as { a?: unknown }).a;
    const agent = (): AgentRecord | undefined => (typeof a === "string" ? core.agent(a) : undefined);
    switch (line.k) {
      case "start": {
        const p = line.p as SegmentStart;
        // A continued segment joined after its predecessor only restates what the core has.
        if (p.continues !== undefined && this.position > 1 && core.registry.agents().length > 0) {
          this.skip = p.preamble ?? 0;
          return;
        }
        // A new hub run: the live hub started from nothing too.
        this.core = this.fresh(p.thresholds as unknown as ThresholdsPatch);
        return;
      }
      case "hello":
        core.hello(++this.connection, line.p as Parameters<HubCore["hello"]>[1]);
        return;
      case "register": {
        const rec = agent();
        if (rec !== undefined) core.register(rec, line.p as Parameters<HubCore["register"]>[1]);
        return;
      }
      case "samples": {
        const rec = agent();
        if (rec !== undefined) core.samples(rec, line.p as Parameters<HubCore["samples"]>[1]);
        return;
      }
      case "events": {
        const rec = agent();
        if (rec !== undefined) core.events(rec, line.p as Parameters<HubCore["events"]>[1]);
        return;
      }
      case "flight": {
        // The ring the agent sent for an alert: attached to it as live (evidence.flight).
        const rec = agent();
        if (rec !== undefined) core.flight(rec, line.p as Parameters<HubCore["flight"]>[1]);
        return;
      }
      case "touch": {
        const rec = agent();
        if (rec !== undefined) core.touch(rec);
        return;
      }
      case "disconnect": {
        const rec = agent();
        if (rec?.owner !== undefined) core.disconnect(rec.owner, rec);
        return;
      }
      case "forget": {
        const rec = agent();
        if (rec !== undefined) core.forget(rec, line.r);
        return;
      }
      case "tick":
        core.tick();
        return;
      case "ack":
        core.acknowledge((line.p as { id: string }).id);
        return;
      case "thresholds":
        try {
          core.setThresholds(line.p as ThresholdsPatch);
        } catch {
          // The live hub refused it too (and recorded nothing); a hand-edited file is skipped here.
        }
        return;
      default:
        // "range" (the saved range's header) and kinds this hub does not know.
        return;
    }
  }
}
