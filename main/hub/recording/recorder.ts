// The recording (`--record <file>`): one NDJSON line per input the alert engine got, in the order
// it got them, each with the hub time it used (docs/protocol.md, "Recording"). Every line is
// written synchronously, so a crash loses at most the line being written, and replay.ts can feed
// the same calls to a fresh engine and raise the same alerts.
import { closeSync, openSync, writeSync } from "node:fs";
import { RECORDING_FILE_MODE } from "./recording-writer.js";
import type { AlertThresholds, ThresholdsPatch } from "../../../shared/alerts/index.js";
import type { EventsBatch, FlightRecord, Hello, Register, SamplesBatch } from "../../../shared/protocol/index.js";

/** Bumped only if a line's meaning changes; new kinds are additions. */
export const RECORDING_FORMAT = 1;

export interface StartPayload {
  format: number;
  hubVersion: string;
  protocol: number;
  /** The thresholds in force at start (a replay starts its engine with them). */
  thresholds: AlertThresholds;
}

/** One line: `r` the hub time (epoch ms) given to the engine, `k` what it was, `a` the agent, `p` the payload. */
export type RecordLine =
  | { r: number; k: "start"; p: StartPayload }
  | { r: number; k: "hello"; a: string; p: Hello }
  | { r: number; k: "register"; a: string; p: Register }
  | { r: number; k: "samples"; a: string; p: SamplesBatch }
  | { r: number; k: "events"; a: string; p: EventsBatch }
  | { r: number; k: "touch"; a: string }
  | { r: number; k: "disconnect"; a: string }
  | { r: number; k: "forget"; a: string }
  | { r: number; k: "tick" }
  | { r: number; k: "ack"; p: { id: string } }
  | { r: number; k: "thresholds"; p: ThresholdsPatch }
  | { r: number; k: "flight"; a: string; p: FlightRecord };

export type RecordKind = RecordLine["k"];

/**
 * Where HubCore writes its recording: this plain-NDJSON Recorder (`--record`), or the app's
 * compact rolling one (recording-rolling.ts). `closed` settles once every line is on disk.
 */
export interface RecordSink {
  readonly file: string;
  readonly lines: number;
  readonly bytes: number;
  readonly open: boolean;
  write(line: RecordLine): void;
  close(): void;
  readonly closed?: Promise<void>;
}

export class Recorder implements RecordSink {
  private fd: number | undefined;
  lines = 0;
  bytes = 0;
  failed: string | null = null;

  /** Opens (creating or appending to) `file`; throws when it cannot. */
  constructor(
    readonly file: string,
    private readonly log: (line: string) => void,
  ) {
    this.fd = openSync(file, "a", RECORDING_FILE_MODE);
  }

  write(line: RecordLine): void {
    if (this.fd === undefined) return;
    const buf = Buffer.from(`${JSON.stringify(line)}\n`, "utf8");
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
      this.lines++;
      this.bytes += buf.length;
    } catch (err) {
      // A full disk must not take the hub down: stop recording, say so once.
      this.failed = err instanceof Error ? err.message : String(err);
      this.log(`semscope hub: recording to ${this.file} stopped: ${this.failed}`);
      this.close();
    }
  }

  get open(): boolean {
    return this.fd !== undefined;
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Nothing left to lose: every line was written synchronously.
    }
  }
}
