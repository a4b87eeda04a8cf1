// The app's recordings: the local hub records by default into a rolling set of compact segments
// in the user data folder (main/hub/recording/recording-rolling.ts) within a size cap the user sets, and a
// named recording of any time range can be saved out of them. Plain Node: main/electron wires it.
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  describeStop,
  GzipRecorder,
  RECORDING_DIR_MODE,
  listSegments,
  readRecording,
  RollingRecorder,
  nameTaken,
  nameTakenError,
  safeName,
  saveWriteError,
  SEGMENT_SUFFIX,
  type AnyRecordLine,
  type SegmentFile,
  type SegmentStart,
} from "../hub/index.js";

export const DEFAULT_RECORDING_CAP_BYTES = 1024 * 1024 * 1024;
/** Below this a cap would keep only minutes of a busy fleet. */
export const MIN_RECORDING_CAP_BYTES = 16 * 1024 * 1024;

export interface RecordingSettings {
  enabled: boolean;
  capBytes: number;
}

export function recordingSettings(s: { recording?: Partial<RecordingSettings> } | undefined): RecordingSettings {
  const r = s?.recording;
  return {
    enabled: r?.enabled ?? true,
    capBytes: Math.max(MIN_RECORDING_CAP_BYTES, r?.capBytes ?? DEFAULT_RECORDING_CAP_BYTES),
  };
}

/** `<userData>/recordings` (rolling segments) and `<userData>/recordings/saved` (named ranges). */
export function recordingsDir(userData: string): string {
  return join(userData, "recordings");
}

export function savedDir(userData: string): string {
  return join(recordingsDir(userData), "saved");
}

/** The local hub's recorder, or undefined when recording is off. */
export function createAppRecorder(userData: string, settings: RecordingSettings, log: (line: string) => void): RollingRecorder | undefined {
  if (!settings.enabled) return undefined;
  return new RollingRecorder({ dir: recordingsDir(userData), capBytes: settings.capBytes, log });
}

export interface SavedRecording {
  file: string;
  name: string;
  bytes: number;
}

export function listSaved(userData: string): SavedRecording[] {
  const dir = savedDir(userData);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith(SEGMENT_SUFFIX))
    .sort()
    .map((name) => ({ file: join(dir, name), name, bytes: statSync(join(dir, name)).size }));
}

export { safeName };

export interface SaveResult {
  file: string;
  lines: number;
  /** Damage met in the segments read (the saved file holds everything before it). */
  warnings: string[];
}

async function firstTime(seg: SegmentFile): Promise<number | null> {
  let t: number | null = null;
  // Segments are small enough (capBytes / 8) that reading one through is cheap next to saving.
  await readRecording(seg.file, (line) => {
    if (t === null && line.k !== "range") t = line.r;
  });
  return t;
}

/**
 * Writes the recorded range [from, to] (hub time, epoch ms) of the segments in `dir` to
 * `<out>/<name>.ndjson.gz`. The copy starts at the beginning of the segment holding `from` (the
 * engine needs what came before to be where the live one was) and carries a `range` line saying
 * which part was asked for; following segments join without their restated preamble.
 */
export async function saveRange(dir: string, out: string, name: string, from: number, to: number): Promise<SaveResult> {
  if (!(Number.isFinite(from) && Number.isFinite(to) && from <= to)) throw new RangeError("from and to must be times with from <= to");
  const clean = safeName(name);
  const segs = listSegments(dir);
  const starts = await Promise.all(segs.map(firstTime));
  const chosen: SegmentFile[] = [];
  for (let i = 0; i < segs.length; i++) {
    const start = starts[i];
    if (start === null || start > to) continue;
    const nextStart = starts.slice(i + 1).find((s) => s !== null) ?? Infinity;
    if (nextStart <= from) continue;
    chosen.push(segs[i]);
  }
  if (chosen.length === 0) throw new RangeError("no recording covers that time range (older segments may have been dropped to stay within the size cap)");
  mkdirSync(out, { recursive: true, mode: RECORDING_DIR_MODE });
  const file = join(out, `${clean}${SEGMENT_SUFFIX}`);
  // Before reading any segment; the exclusive write below still refuses one that appears meanwhile.
  if (nameTaken(file)) throw nameTakenError(clean, out);
  const warnings: string[] = [];
  const writer = new GzipRecorder(file, (line) => warnings.push(line), { exclusive: true });
  writer.write({ r: from, k: "range", p: { name: clean, from, to } });
  let lines = 0;
  for (const [i, seg] of chosen.entries()) {
    let skip = 0;
    const summary = await readRecording(seg.file, (line: AnyRecordLine) => {
      if (line.k === "range" || line.r > to) return;
      if (skip > 0) {
        skip--;
        return;
      }
      if (i > 0 && line.k === "start" && (line.p as SegmentStart).continues !== undefined) {
        skip = (line.p as SegmentStart).preamble ?? 0;
        return;
      }
      writer.write(line as Parameters<GzipRecorder["write"]>[0]);
      lines++;
    });
    // The segment being written ends mid-stream: that is where it is, not damage.
    if (summary.stoppedAt !== undefined && i < chosen.length - 1) warnings.push(`${seg.name}: ${describeStop(summary.stoppedAt)}`);
  }
  writer.close();
  await writer.closed;
  if (writer.failed !== null) {
    throw saveWriteError(writer.failed, clean, out, file);
  }
  return { file, lines, warnings };
}
