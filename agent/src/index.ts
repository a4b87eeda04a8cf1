// semscope-agent: the public API (docs/agent-api.md).
export { Semaphore } from "./semaphore.js";
export type { SemaphoreSnapshot, HolderSnapshot, SemaphoreCounters } from "./semaphore.js";
export { Permit } from "./permit.js";
export { FlightRecorder, DEFAULT_FLIGHT_CAPACITY, type FlightOpInit, type RingOp } from "./flight-recorder.js";
export { SemaphoreTimeoutError, SemaphoreRejectedError, SemaphoreClosedError } from "./errors.js";
export type { SemaphoreOptions, SharedSemaphoreOptions, AdaptiveSemaphoreOptions, AdaptiveSharedSemaphoreOptions, AcquireOptions } from "./options.js";
export type { AdaptivePermits, AdaptivePermitsOption } from "./adaptive/adaptive-options.js";
export type { ShareCoordinator } from "./share/share-options.js";
export { onEvent, trackedAll, type Tracked } from "./registry.js";
export { instrument, SUPPORTED_TARGETS } from "./instrument.js";
export { SemscopeAdapterError } from "./adapters/adapter-error.js";
export { SemscopeRedisUnavailableError } from "./adapters/redis-semaphore/errors.js";
export type { RedisSemaphoreOptions, RedisSemaphoreHandle, OnRedisDown } from "./adapters/redis-semaphore/adapter.js";
export type { InstrumentHandle, InstrumentOptions, AdapterInfo, AdapterSnapshot, AdapterCounters, BlindField } from "./adapters/adapter-core.js";
export type { PLimitHandle, LimitLike } from "./adapters/p-limit.js";
export { connect, type Agent, type AgentStatus, type ConnectOptions } from "./reporter/connect.js";
export type { OtelMeter, OtelOptions, OtelAttributes } from "./otel-metrics.js";
export type { AgentEvent, Sample, SampleLimit, SemaphoreInfo, QueueMode, FlightRecord, FlightOp, FlightOpKind } from "../../shared/protocol/types.js";
