// The headless hub's public face: what main/electron and tests import.
export { createHub, HUB_VERSION, type Hub } from "./hub.js";
export { HubConfigError, isLoopback, type HubOptions } from "./options.js";
export { replayLines, replayRecording, type ReplayResult } from "./replay.js";
export { RECORDING_FORMAT, type RecordLine, type RecordKind } from "./recorder.js";
