// The replay namespace `/replay` (docs/protocol.md, "Replay"): a hub serving a recording instead
// of live agents (main/hub/recording/replay-hub.ts) says so here, with the timeline, and takes the time
// cursor's controls. The data itself comes through `/ui` exactly as live: what the live
// dashboard showed at the cursor's moment.
import type { Ack, AlertRule, Severity } from "../protocol/types.js";

export const REPLAY_NAMESPACE = "/replay";
/**
 * A replay hub's version (snapshot `state.hub.version`) ends with this (semver build metadata):
 * how a dashboard knows to open `/replay` without probing a live hub for it.
 */
export const REPLAY_VERSION_SUFFIX = "+replay";

export function isReplayVersion(version: string | undefined | null): boolean {
  return typeof version === "string" && version.endsWith(REPLAY_VERSION_SUFFIX);
}
/** Playback speeds a dashboard offers (recorded time per wall-clock time). */
export const REPLAY_SPEEDS = [1, 2, 5, 10, 30, 60] as const;

/** An alert on the timeline. */
export interface ReplayMark {
  /** Hub time (like the cursor) of the recorded input that raised it: where "next alert" goes. */
  at: number;
  id: string;
  key: string;
  rule: AlertRule;
  severity: Severity;
  message: string;
  /** As the alert says (sample time for the rules that go by it). */
  raisedAt: number;
  resolvedAt: number | null;
}

export interface ReplayStatus {
  /** The file's name (no folder). */
  name: string;
  /** First and last recorded hub time (epoch ms). */
  from: number;
  to: number;
  /** A saved range: the part asked for (the cursor starts at its `from`). */
  range?: { name: string; from: number; to: number };
  cursor: number;
  playing: boolean;
  speed: number;
  marks: ReplayMark[];
  lines: number;
  fileBytes: number;
  compressed: boolean;
  /** Set when the file is damaged or cut short: where loading stopped, in words. */
  message?: string;
  /** Flight-recorder snapshots (record kind `flight`) in the file. */
  flights: number;
  /** The hub can save a range of this recording (`replay:save`): where to, for people. */
  saveTo?: string;
}


export interface ReplayToHubEvents {
  "replay:seek": (req: { t: number }, ack: (a: Ack<{ status: ReplayStatus }>) => void) => void;
  "replay:play": (req: { speed?: number }, ack: (a: Ack<{ status: ReplayStatus }>) => void) => void;
  "replay:pause": (req: Record<string, never>, ack: (a: Ack<{ status: ReplayStatus }>) => void) => void;
  /** Saves [from, to] (hub time) of the recording as a named file (only when status.saveTo is set). */
  "replay:save": (req: { name: string; from: number; to: number }, ack: (a: Ack<{ file: string }>) => void) => void;
}

export interface HubToReplayEvents {
  /** On connect, on every seek, play or pause, and a few times a second while playing. */
  "replay:status": (status: ReplayStatus) => void;
}
