// What File → Open Recording… and Save Recording… do, without Electron: open a recording in a
// replay hub of its own (its own loopback origin, which a window without the preload shows as a
// plain dashboard in replay mode), and save a named range of the local hub's recordings.
import { basename, dirname } from "node:path";
import { createReplayHub, SEGMENT_SUFFIX, type ReplayHub } from "../hub/index.js";
import { recordingsDir, saveRange, savedDir, type SaveResult } from "./recordings.js";

/** The ranges Save Recording… offers, newest data last. */
export const SAVE_PRESETS = [
  { label: "Last 15 minutes", ms: 15 * 60_000 },
  { label: "Last hour", ms: 60 * 60_000 },
  { label: "Last 24 hours", ms: 24 * 60 * 60_000 },
  { label: "Everything kept", ms: Infinity },
] as const;

export interface RecordingsShellOptions {
  userData: string;
  staticDir?: string;
  log: (line: string) => void;
  now?: () => number;
}

export interface OpenedRecording {
  url: string;
  /** Where a damaged file stopped loading (shown in the window's banner too). */
  message?: string;
}

export class RecordingsShell {
  private replay: ReplayHub | null = null;

  constructor(private readonly opts: RecordingsShellOptions) {}

  get folder(): string {
    return recordingsDir(this.opts.userData);
  }

  /** Serves `file` in replay mode (closing the previous replay); rejects when it cannot be read. */
  async open(file: string): Promise<OpenedRecording> {
    await this.closeReplay();
    // The app takes no flags: a refusal says where a limit can be raised.
    const raiseWith = { maxLineBytes: "semscope web --replay <file> --max-line-mb <n>", maxTextBytes: "semscope web --replay <file> --max-text-mb <n>" };
    const hub = await createReplayHub({ file, port: 0, host: "127.0.0.1", staticDir: this.opts.staticDir, log: this.opts.log, saveDir: savedDir(this.opts.userData), raiseWith });
    this.replay = hub;
    const message = hub.session.message;
    return { url: `${hub.url}/`, ...(message !== undefined ? { message } : {}) };
  }

  async closeReplay(): Promise<void> {
    const r = this.replay;
    this.replay = null;
    await r?.close();
  }

  /** The range a preset names, ending now. */
  presetRange(index: number): { from: number; to: number } {
    const preset = SAVE_PRESETS[index];
    if (preset === undefined) throw new RangeError(`no preset ${index}`);
    const to = (this.opts.now ?? Date.now)();
    return { from: Number.isFinite(preset.ms) ? to - preset.ms : 0, to };
  }

  /** Saves [from, to] of the local hub's recordings as `target` (a path; the suffix is added when missing). */
  save(target: string, from: number, to: number): Promise<SaveResult> {
    const name = basename(target).replace(/\.ndjson\.gz$|\.gz$|\.ndjson$/, "") || "recording";
    return saveRange(this.folder, dirname(target), name, from, to);
  }
}

export { SEGMENT_SUFFIX };
