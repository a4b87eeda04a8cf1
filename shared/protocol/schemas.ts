// The protocol's payloads as zod schemas: the hub parses every payload with these, because a
// type only says what an honest agent sends (docs/protocol.md, "Limits", says what is enforced).
import { z } from "zod";
import { fastSamplesBatch } from "./fast-samples.js";
import { PAYLOAD_LIMITS } from "./payload-limits.js";
import {
  LIMITS,
  MANY_SEMAPHORES_PER_AGENT,
  type AgentEvent,
  type AgentToHubEvents,
  type EventsBatch,
  type FlightHolder,
  type FlightOp,
  type FlightRecord,
  type FlightRequest,
  type HandshakeAuth,
  type Hello,
  type Register,
  type Sample,
  type SampleGlobal,
  type SampleLimit,
  type SampleLimitChange,
  type SampleShare,
  type SamplesBatch,
  type SemaphoreInfo,
  type SparseHist,
  type Summary,
} from "./types.js";

// ---- leaves: each carries its own short message, so any caller gets the same reason ----

type IssueInput = { readonly input?: unknown };
const orRequired = (message: string) => (issue: IssueInput) => (issue.input === undefined ? "required" : message);

function wireString(max: number = LIMITS.maxString) {
  const message = `must be a string of at most ${max} UTF-16 units`;
  // Not .max(): zod measures strings in code points, the protocol in UTF-16 units.
  return z.string({ error: orRequired(message) }).refine((s) => s.length <= max, { error: message });
}

/** Any number on the wire: finite and >= 0. */
function amount(message = "must be finite and >= 0") {
  return z.number({ error: orRequired(message) }).min(0, { error: message });
}

/** Counts, `seq`, `pid`: integers >= 0 (safe integers, so arithmetic on them stays exact). */
function count(message = "must be an integer >= 0") {
  return z
    .number({ error: orRequired(message) })
    .int({ error: (issue) => (issue.code === "too_big" ? "must be a safe integer" : message) })
    .min(0, { error: message });
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: orRequired(`must be one of ${values.join(", ")}`) });
}

function boundedArray<T extends z.ZodType>(item: T, max: number) {
  return z.array(item, { error: orRequired("must be an array") }).max(max, { error: `must have at most ${max} items` });
}

// ---- event detail: free-form, so it is walked by hand and copied into fresh plain objects ----

// The keys through which a later merge or assignment reaches a prototype (`x.__proto__`,
// `x.constructor.prototype`); refused outright so no consumer of `detail` has to remember them.
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);
const NOT_JSON = "must be JSON data (null, boolean, finite number, string, array or plain object)";
const INVALID = Symbol("invalid");

interface DetailWalk {
  values: number;
  error: { path: (string | number)[]; message: string } | null;
}

function fail(walk: DetailWalk, path: (string | number)[], message: string): typeof INVALID {
  walk.error = { path: [...path], message };
  return INVALID;
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Validates and copies one value under `detail`; the copy holds only own, allowed, JSON data. */
function copyDetail(value: unknown, depth: number, path: (string | number)[], walk: DetailWalk): unknown {
  switch (typeof value) {
    case "string":
      return value.length <= LIMITS.maxString ? value : fail(walk, path, `must be a string of at most ${LIMITS.maxString} UTF-16 units`);
    case "number":
      // Unlike the payload's own fields, detail numbers may be negative: an invariant_violation
      // carries `available`, which can be.
      return Number.isFinite(value) ? value : fail(walk, path, "must be a finite number");
    case "boolean":
      return value;
    case "object":
      break;
    default:
      return fail(walk, path, NOT_JSON);
  }
  if (value === null) return null;
  if (depth > PAYLOAD_LIMITS.maxDetailDepth) {
    return fail(walk, path, `nests deeper than ${PAYLOAD_LIMITS.maxDetailDepth} levels`);
  }
  const tooMany = `detail holds more than ${PAYLOAD_LIMITS.maxDetailValues} values`;
  if (Array.isArray(value)) {
    // Checked before the loop so a huge array costs nothing to refuse.
    walk.values += value.length;
    if (walk.values > PAYLOAD_LIMITS.maxDetailValues) return fail(walk, [], tooMany);
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const item = copyDetail(value[i], depth + 1, path, walk);
      path.pop();
      if (item === INVALID) return INVALID;
      out.push(item);
    }
    return out;
  }
  if (!isPlainObject(value)) return fail(walk, path, NOT_JSON);
  const keys = Object.keys(value);
  walk.values += keys.length;
  if (walk.values > PAYLOAD_LIMITS.maxDetailValues) return fail(walk, [], tooMany);
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    // The key is not echoed: it may be long, and the reason must stay short.
    if (FORBIDDEN_KEYS.has(key)) return fail(walk, path, `key "${key}" is not allowed`);
    if (key.length > LIMITS.maxString) return fail(walk, path, `has a key longer than ${LIMITS.maxString} UTF-16 units`);
    path.push(key);
    const item = copyDetail(source[key], depth + 1, path, walk);
    path.pop();
    if (item === INVALID) return INVALID;
    // Safe as a plain assignment: the keys that could reach a prototype were refused above.
    out[key] = item;
  }
  return out;
}

/** `detail`: a plain object of JSON data within the string, depth and size limits, returned as a fresh copy. */
export const detailSchema = z.unknown().transform((value, ctx): Record<string, unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !isPlainObject(value)) {
    ctx.issues.push({ code: "custom", message: "must be a plain object", input: value });
    return z.NEVER;
  }
  const walk: DetailWalk = { values: 0, error: null };
  const copy = copyDetail(value, 1, [], walk);
  if (copy === INVALID || walk.error !== null) {
    const error = walk.error ?? { path: [], message: "is invalid" };
    ctx.issues.push({ code: "custom", message: error.message, path: error.path, input: value });
    return z.NEVER;
  }
  return copy as Record<string, unknown>;
});

// ---- payloads ----

/** Shape only; whether `protocol` is one the hub speaks is the hub's call (`unsupported_protocol`). */
export const handshakeAuthSchema = z.object({
  protocol: amount(),
  token: wireString().optional(),
}) satisfies z.ZodType<HandshakeAuth>;

export const helloSchema = z.object({
  agentId: wireString(),
  service: wireString(),
  instance: wireString(),
  pid: count(),
  host: wireString(),
  runtime: wireString(),
  agentVersion: wireString(),
  startedAt: amount(),
  features: boundedArray(wireString(), PAYLOAD_LIMITS.maxFeatures).optional(),
}) satisfies z.ZodType<Hello>;

const OR_NULL_COUNT = "must be null or an integer >= 0";
const OR_NULL_AMOUNT = "must be null or finite and >= 0";

export const semaphoreInfoSchema = z.object({
  id: wireString(),
  name: wireString(),
  kind: wireString(),
  cap: amount(),
  queue: oneOf(["fifo", "lifo", "priority", "adaptive", "unknown"]),
  maxWaiters: count(OR_NULL_COUNT).nullable(),
  acquireTimeoutMs: amount(OR_NULL_AMOUNT).nullable(),
  leaseTimeoutMs: amount(OR_NULL_AMOUNT).nullable(),
  leakThresholdMs: amount(OR_NULL_AMOUNT).nullable(),
  scope: oneOf(["process", "global"]),
  budget: amount().optional(),
  share: oneOf(["replicas"]).optional(),
}) satisfies z.ZodType<SemaphoreInfo>;

export const registerSchema = z.object({
  // One message holds at most a whole list's worth; the agent's own limit (1,000, or 10,000 with
  // "many_semaphores") is the hub's to check on the assembled list.
  semaphores: boundedArray(semaphoreInfoSchema, MANY_SEMAPHORES_PER_AGENT).superRefine((list, ctx) => {
    // Ids key everything the hub keeps for an agent; a duplicate would make two semaphores one.
    const seen = new Set<string>();
    list.forEach((info, i) => {
      if (seen.has(info.id)) ctx.addIssue({ code: "custom", message: "duplicate id", path: [i, "id"], input: info.id });
      seen.add(info.id);
    });
  }),
  partial: oneOf(["more", "end"]).optional(),
}) satisfies z.ZodType<Register>;

const histPairSchema = z.tuple(
  [
    z.number({ error: orRequired("bucket must be an integer 0..255") })
      .int({ error: "bucket must be an integer 0..255" })
      .min(0, { error: "bucket must be an integer 0..255" })
      .max(LIMITS.histBuckets - 1, { error: "bucket must be an integer 0..255" }),
    count(),
  ],
  { error: orRequired("must be a [bucket, count] pair") },
);

export const sparseHistSchema = boundedArray(histPairSchema, PAYLOAD_LIMITS.maxHistPairs).superRefine((pairs, ctx) => {
  // Merging across intervals and replicas walks buckets in order; a repeat would double-count.
  for (let i = 1; i < pairs.length; i++) {
    if (pairs[i][0] <= pairs[i - 1][0]) {
      ctx.addIssue({ code: "custom", message: "buckets must be strictly ascending", path: [i, 0], input: pairs[i][0] });
      return;
    }
  }
}) satisfies z.ZodType<SparseHist>;

export const summarySchema = z.object({
  count: count(),
  p50: amount(),
  p90: amount(),
  p99: amount(),
  max: amount(),
  hist: sparseHistSchema,
}) satisfies z.ZodType<Summary>;

export const sampleGlobalSchema = z.object({
  inUse: amount(),
  holders: boundedArray(wireString(), PAYLOAD_LIMITS.maxGlobalHolders),
  own: boundedArray(wireString(), PAYLOAD_LIMITS.maxGlobalHolders),
}) satisfies z.ZodType<SampleGlobal>;

export const sampleShareSchema = z.object({
  budget: count(),
  replicas: count(),
  target: count(),
  reachable: z.boolean({ error: orRequired("must be a boolean") }),
}) satisfies z.ZodType<SampleShare>;

const sampleLimitChangeSchema = z.object({
  min: count(),
  max: count(),
  limit: count(),
  t: amount(),
  reason: wireString(),
  from: count().optional(),
  shortMs: amount().optional(),
  longMs: amount().optional(),
  inFlight: count().optional(),
}) satisfies z.ZodType<SampleLimitChange>;

export const sampleLimitSchema = sampleLimitChangeSchema.extend({
  earlier: z.array(sampleLimitChangeSchema).max(LIMITS.maxLimitChanges, `at most ${LIMITS.maxLimitChanges} earlier changes`).optional(),
}) satisfies z.ZodType<SampleLimit>;

export const sampleSchema = z.object({
  id: wireString(),
  cap: amount(),
  inUse: amount(),
  // The one number allowed below 0: a lowered cap can leave a semaphore over-subscribed.
  available: z.number({ error: orRequired("must be a finite number") }),
  waiters: count(),
  oldestWaitMs: amount(),
  acquired: count(),
  released: count(),
  timeouts: count(),
  rejections: count(),
  aborts: count(),
  doubleReleases: count(),
  leaseExpiries: count(),
  waitMs: summarySchema,
  holdMs: summarySchema,
  longestHoldMs: amount(),
  global: sampleGlobalSchema.optional(),
  share: sampleShareSchema.optional(),
  limit: sampleLimitSchema.optional(),
  opening: count().optional(),
}) satisfies z.ZodType<Sample>;

export const samplesBatchSchema = z.object({
  seq: count(),
  t: amount(),
  // Rates and the alert windows divide by it, so a zero interval is refused.
  intervalMs: z.number({ error: orRequired("must be finite and > 0") }).positive({ error: "must be finite and > 0" }),
  items: boundedArray(sampleSchema, PAYLOAD_LIMITS.maxSamplesPerBatch),
  dropped: count().optional(),
  partial: z.enum(["more", "end"], { error: 'must be "more" or "end"' }).optional(),
}) satisfies z.ZodType<SamplesBatch>;

/**
 * A samples batch with its items left unchecked (each is checked on its own, see
 * samples-check.ts): the same fields, messages and order as samplesBatchSchema otherwise.
 */
export const samplesEnvelopeSchema = samplesBatchSchema.extend({
  items: boundedArray(z.unknown(), PAYLOAD_LIMITS.maxSamplesPerBatch),
});

export const agentEventSchema = z.object({
  t: amount(),
  id: wireString(),
  type: oneOf(["leak_suspected", "leak_resolved", "double_release", "invariant_violation", "lease_expired", "order_inversion"]),
  holderId: wireString().optional(),
  heldMs: amount().optional(),
  stack: wireString(LIMITS.maxStack).optional(),
  detail: detailSchema.optional(),
}) satisfies z.ZodType<AgentEvent>;

export const eventsBatchSchema = z.object({
  items: boundedArray(agentEventSchema, PAYLOAD_LIMITS.maxEventsPerBatch),
}) satisfies z.ZodType<EventsBatch>;

// ---- the flight recorder (optional addition) ----

export const flightRequestSchema = z.object({
  id: wireString(),
  alertId: wireString(),
}) satisfies z.ZodType<FlightRequest>;

const stackIndex = () => count().max(PAYLOAD_LIMITS.maxFlightStacks - 1, { error: `must be an integer 0..${PAYLOAD_LIMITS.maxFlightStacks - 1}` });

export const flightOpSchema = z.object({
  t: amount(),
  op: oneOf(["request", "grant", "release", "timeout", "reject", "abort", "double_release", "expire"]),
  holder: count().optional(),
  weight: amount(),
  waitMs: amount().optional(),
  holdMs: amount().optional(),
  stack: stackIndex().optional(),
}) satisfies z.ZodType<FlightOp>;

export const flightHolderSchema = z.object({
  holder: count(),
  weight: amount(),
  heldMs: amount(),
  stack: stackIndex().optional(),
}) satisfies z.ZodType<FlightHolder>;

export const flightRecordSchema = z
  .object({
    id: wireString(),
    alertId: wireString(),
    t: amount(),
    capacity: count(),
    total: count(),
    ops: boundedArray(flightOpSchema, PAYLOAD_LIMITS.maxFlightOps),
    holders: boundedArray(flightHolderSchema, PAYLOAD_LIMITS.maxFlightHolders),
    stacks: boundedArray(wireString(LIMITS.maxStack), PAYLOAD_LIMITS.maxFlightStacks),
    status: oneOf(["rate_limited", "unavailable"]).optional(),
    sameAs: wireString().optional(),
  })
  .superRefine((rec, ctx) => {
    // An index past the table would make a reader show another op's stack, or none.
    const n = rec.stacks.length;
    rec.ops.forEach((op, i) => {
      if (op.stack !== undefined && op.stack >= n) ctx.addIssue({ code: "custom", message: "no such stack", path: ["ops", i, "stack"], input: op.stack });
    });
    rec.holders.forEach((h, i) => {
      if (h.stack !== undefined && h.stack >= n) ctx.addIssue({ code: "custom", message: "no such stack", path: ["holders", i, "stack"], input: h.stack });
    });
  }) satisfies z.ZodType<FlightRecord>;

/** The schema for each agent → hub event's payload, keyed like AgentToHubEvents. */
export const agentPayloadSchemas = {
  hello: helloSchema,
  register: registerSchema,
  samples: samplesBatchSchema,
  events: eventsBatchSchema,
  flight: flightRecordSchema,
} as const satisfies { [E in keyof AgentToHubEvents]: z.ZodType<Parameters<AgentToHubEvents[E]>[0]> };

// `satisfies` above only proves each schema's output fits its interface; this proves they are the
// same type, so a field added, dropped or made optional on one side alone fails to compile.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type _SchemasMatchTypes = [
  Assert<Same<z.output<typeof handshakeAuthSchema>, HandshakeAuth>>,
  Assert<Same<z.output<typeof helloSchema>, Hello>>,
  Assert<Same<z.output<typeof semaphoreInfoSchema>, SemaphoreInfo>>,
  Assert<Same<z.output<typeof registerSchema>, Register>>,
  Assert<Same<z.output<typeof sparseHistSchema>, SparseHist>>,
  Assert<Same<z.output<typeof summarySchema>, Summary>>,
  Assert<Same<z.output<typeof sampleGlobalSchema>, SampleGlobal>>,
  Assert<Same<z.output<typeof sampleShareSchema>, SampleShare>>,
  Assert<Same<z.output<typeof sampleSchema>, Sample>>,
  Assert<Same<z.output<typeof samplesBatchSchema>, SamplesBatch>>,
  Assert<Same<z.output<typeof agentEventSchema>, AgentEvent>>,
  Assert<Same<z.output<typeof eventsBatchSchema>, EventsBatch>>,
  Assert<Same<z.output<typeof flightRequestSchema>, FlightRequest>>,
  Assert<Same<z.output<typeof flightOpSchema>, FlightOp>>,
  Assert<Same<z.output<typeof flightHolderSchema>, FlightHolder>>,
  Assert<Same<z.output<typeof flightRecordSchema>, FlightRecord>>,
];

// ---- parsing with a short reason ----

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

const MAX_REASON = 200;
const MAX_SEGMENT = 40;

// Messages for the structural issues the leaves above do not word themselves.
const structuralMessages: z.core.$ZodErrorMap = (issue) => {
  if (issue.input === undefined) return "required";
  if (issue.code === "invalid_type") {
    const expected = issue.expected === "tuple" ? "array" : issue.expected;
    return `must be ${/^[aeiou]/.test(expected) ? "an" : "a"} ${expected}`;
  }
  return undefined;
};

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "payload";
  return path
    .map((segment) => {
      const s = typeof segment === "symbol" ? "?" : String(segment);
      return s.length > MAX_SEGMENT ? `${s.slice(0, MAX_SEGMENT)}…` : s;
    })
    .join(".");
}

/** The reason parsePayload gives for these issues (zod's, in zod's order); never quotes the input. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const [first] = issues;
  if (first === undefined) return "payload: invalid";
  const more = issues.length - 1;
  const reason = `${formatPath(first.path)}: ${first.message}${more > 0 ? ` (and ${more} more)` : ""}`;
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
}

/** What parsePayload says when reading the input threw. */
export const UNREADABLE = "payload: could not be read";

/** safeParse with the error map every reason here is worded by. Throws what zod throws. */
export function safeParseWire<S extends z.ZodType>(schema: S, data: unknown): z.ZodSafeParseResult<z.output<S>> {
  return schema.safeParse(data, { error: structuralMessages });
}

/** parsePayload without the samples fast path: zod alone (the reference the fast path is tested against). */
export function parseWithZod<S extends z.ZodType>(schema: S, data: unknown): ParseResult<z.output<S>> {
  try {
    const result = safeParseWire(schema, data);
    return result.success ? { ok: true, value: result.data } : { ok: false, error: describeIssues(result.error.issues) };
  } catch {
    // Only exotic in-process input gets here (a throwing getter or proxy, a stack overflow);
    // nothing that arrives through socket.io's JSON does.
    return { ok: false, error: UNREADABLE };
  }
}

/**
 * Parses `data` with `schema`. Never throws; on failure gives one short reason such as
 * `items.3.cap: must be finite and >= 0`, naming the first problem and never quoting the input.
 */
export function parsePayload<S extends z.ZodType>(schema: S, data: unknown): ParseResult<z.output<S>> {
  // `samples` first tries a hand-written check that accepts exactly what the schema does, ~100×
  // faster (fast-samples.ts); only a batch it cannot pass goes to zod, for the verdict and reason.
  if ((schema as z.ZodType) === samplesBatchSchema) {
    const fast = fastSamplesBatch(data);
    if (fast !== undefined) return { ok: true, value: fast as z.output<S> };
  }
  return parseWithZod(schema, data);
}
