// semscope-agent: the public API (../shared/AGENT-API.md).
export { Semaphore } from "./semaphore.js";
export type { SemaphoreSnapshot, HolderSnapshot, SemaphoreCounters } from "./semaphore.js";
export { Permit } from "./permit.js";
export { SemaphoreTimeoutError, SemaphoreRejectedError, SemaphoreClosedError } from "./errors.js";
export type { SemaphoreOptions, AcquireOptions } from "./options.js";
export { onEvent, trackedAll, type Tracked } from "./registry.js";
export { connect, type Agent, type AgentStatus, type ConnectOptions } from "./reporter/connect.js";
export type { AgentEvent, Sample, SemaphoreInfo, QueueMode } from "../../shared/protocol/types.js";
