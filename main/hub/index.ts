// The hub's public face: the only module main/app and main/electron import (lint enforces it).
export { createHub, HUB_VERSION, type Hub } from "./hub.js";
export { HubConfigError, isLoopback, type HubOptions } from "./options.js";
export { applyHubRuntimeFlags } from "./node-flags.js";
export { replayLines, replayRecording, type ReplayResult } from "./recording/replay.js";
export { RECORDING_FORMAT, type RecordLine, type RecordKind } from "./core/record-line.js";
export { GzipRecorder, RECORDING_DIR_MODE, RECORDING_FILE_MODE } from "./recording/recording-writer.js";
export { listSegments, RollingRecorder, SEGMENT_SUFFIX, type SegmentFile, type SegmentStart } from "./recording/recording-rolling.js";
export { readRecording, describeStop } from "./recording/recording-reader.js";
export type { AnyRecordLine } from "./recording/recording-line.js";
export { nameTaken, nameTakenError, safeName, saveWriteError } from "./recording/recording-name.js";
export { createReplayHub, type ReplayHub } from "./recording/replay-hub.js";
