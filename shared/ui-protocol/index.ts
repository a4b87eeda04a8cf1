// The dashboard namespace `/ui` in one import: message types and the hub's request schemas.
export * from "./types.js";
export * from "./schemas.js";
export * from "./replay.js";
export * from "./fleet-changes.js";
export * from "./semaphore-patch.js";
