// Bounds the hub applies where docs/protocol.md names none (LIMITS in types.ts holds the ones it does).
// Kept apart from schemas.ts and free of zod so the agent can split its batches to fit them
// without bundling a validator.
import { LIMITS } from "./types.js";

export const PAYLOAD_LIMITS = {
  /** One sample per semaphore; an agent with more semaphores sends several batches an interval. */
  maxSamplesPerBatch: LIMITS.maxSemaphoresPerAgent,
  /** An agent with more events in one flush sends several batches. */
  maxEventsPerBatch: 1000,
  /** A sparse histogram has at most one pair per bucket. */
  maxHistPairs: LIMITS.histBuckets,
  /** Nesting levels in an event's `detail`; the `detail` object itself is level 1. */
  maxDetailDepth: 8,
  /** Values (object members and array elements, at any depth) in one event's `detail`. */
  maxDetailValues: 1000,
  /** Operations in one `flight` answer (an agent's ring may be larger: it sends the newest). */
  maxFlightOps: 4096,
  /** Holders listed in one `flight` answer (oldest first). */
  maxFlightHolders: 256,
  /** Distinct stacks in one `flight` answer: 32 × 16 KiB keeps it well inside a packet. */
  maxFlightStacks: 32,
  /** Names in hello's optional `features`. */
  maxFeatures: 32,
  /** Identifiers in a Sample's optional `global.holders` and `global.own` (a count says the rest). */
  maxGlobalHolders: 64,
} as const;
