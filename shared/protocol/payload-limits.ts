// Bounds the hub applies where PROTOCOL.md names none (LIMITS in types.ts holds the ones it does).
// Kept apart from schemas.ts and free of zod so the agent can split its batches to fit them
// without bundling a validator.
import { LIMITS } from "./types.js";

export const PAYLOAD_LIMITS = {
  /** One sample per semaphore, and an agent has at most LIMITS.maxSemaphoresPerAgent of them. */
  maxSamplesPerBatch: LIMITS.maxSemaphoresPerAgent,
  /** An agent with more events in one flush sends several batches. */
  maxEventsPerBatch: 1000,
  /** A sparse histogram has at most one pair per bucket. */
  maxHistPairs: LIMITS.histBuckets,
  /** Nesting levels in an event's `detail`; the `detail` object itself is level 1. */
  maxDetailDepth: 8,
  /** Values (object members and array elements, at any depth) in one event's `detail`. */
  maxDetailValues: 1000,
} as const;
