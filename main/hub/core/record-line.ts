// What the hub core records: one line per input the alert engine got, in the order it got them,
// with the hub time it used (docs/protocol.md, "Recording"), and the sink it writes them to. The
// core defines them; recording/ writes them to files (recorder.ts, recording-rolling.ts) and reads
// them back for a replay.
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
 * Where HubCore writes its recording: the plain-NDJSON Recorder (`--record`, recording/recorder.ts),
 * or the app's compact rolling one (recording/recording-rolling.ts). `closed` settles once every line is on disk.
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
