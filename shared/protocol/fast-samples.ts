// A hand-written fast path for `samples`: the payload every agent sends every interval, and the
// biggest (up to 1,000 items with two histograms each), which zod checks hundreds of times more
// slowly (bench:hub reports both). It accepts exactly what samplesBatchSchema accepts and builds what it
// returns (unknown fields dropped, keys in schema order: the input object itself when it is already
// exactly that, see exactKeys(), else a fresh copy; the histogram arrays are checked in place and
// kept, see hist()); for anything else, and anything unusual (a non-plain
// object, an own key set to undefined, a throwing getter), it answers undefined and zod gives the
// verdict and the reason (parsePayload for a whole batch, samples-check.ts item by item). A
// differential test (test/shared/protocol-fast-path.test.ts) holds them to the same answers.
import { PAYLOAD_LIMITS } from "./payload-limits.js";
import { SAMPLE_PARTS, type SamplePart } from "./sample-layout.js";
import { sampleSchema, summarySchema } from "./schemas.js";
import { LIMITS, type Sample, type SampleGlobal, type SampleLimit, type SampleLimitChange, type SampleShare, type SamplesBatch, type SparseHist, type Summary } from "./types.js";

type Obj = Record<string, unknown>;

/** What JSON.parse makes: zod refuses some other objects (a Date), so anything else goes to zod. */
function plain(v: unknown): v is Obj {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** An array of at most `max` items. (A hole reads as undefined, which no item check passes.) */
function array(v: unknown, max: number): v is unknown[] {
  return Array.isArray(v) && v.length <= max;
}

// The leaves, as schemas.ts words them: amount() finite and >= 0, count() a safe integer >= 0.
const amount = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;
const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const wireString = (v: unknown): v is string => typeof v === "string" && v.length <= LIMITS.maxString;

const FAIL = undefined;
const TOP_BUCKET = LIMITS.histBuckets - 1;

/**
 * Checked in place and returned as is: copying up to 512 pairs per sample is most of what a
 * full batch would cost (each small array allocated while the parsed packet is still live makes
 * the young-generation GC copy that packet again). A JSON array holds nothing but its elements,
 * so for wire input the result is what zod's fresh copy would be.
 */
function hist(v: unknown): SparseHist | undefined {
  if (!array(v, PAYLOAD_LIMITS.maxHistPairs)) return FAIL;
  let prev = -1;
  for (let i = 0; i < v.length; i++) {
    const pair: unknown = v[i];
    if (!Array.isArray(pair) || pair.length !== 2) return FAIL;
    const b: unknown = pair[0];
    // Buckets are integers 0..255, strictly ascending; counts are counts.
    if (!Number.isSafeInteger(b) || (b as number) <= prev || (b as number) > TOP_BUCKET || !count(pair[1])) return FAIL;
    prev = b as number;
  }
  return v as SparseHist;
}

/**
 * Whether `v`'s enumerable keys are exactly `keys`, in that order: then the schema's output (its
 * keys, in schema order, nothing dropped) is `v` itself, once each value is checked. Returning it
 * rather than a copy is not only an allocation saved: a copy made while the parsed packet is still
 * live points at its histogram arrays, and should V8 pretenure the copy's allocation site (it may,
 * when batches wait in the hub's queues) every packet it points into would survive to the old
 * generation, making each young GC several times as costly.
 */
function exactKeys(v: Obj, keys: readonly string[]): boolean {
  let i = 0;
  for (const k in v) {
    if (k !== keys[i]) return false;
    i++;
  }
  return i === keys.length;
}

// The schema's own key lists, read on first use: schemas.ts imports this module, so at load time
// its schemas may not exist yet.
let summaryKeys: readonly string[] | undefined;
let sampleKeys: readonly string[] | undefined;
const SUMMARY_KEYS = (): readonly string[] => (summaryKeys ??= Object.keys(summarySchema.shape));
// The optional parts come last: a sample that has one is copied (sampleGlobal(), sampleShare(), sampleLimit()).
const SAMPLE_KEYS = (): readonly string[] => (sampleKeys ??= Object.keys(sampleSchema.shape).filter((k) => !(SAMPLE_PARTS as readonly string[]).includes(k)));

function summary(v: unknown): Summary | undefined {
  if (!plain(v)) return FAIL;
  const { count: n, p50, p90, p99, max } = v;
  if (!count(n) || !amount(p50) || !amount(p90) || !amount(p99) || !amount(max)) return FAIL;
  const h = hist(v.hist);
  if (h === undefined) return FAIL;
  return exactKeys(v, SUMMARY_KEYS()) ? (v as unknown as Summary) : { count: n, p50, p90, p99, max, hist: h };
}

/** A list of wire strings, copied (zod returns a fresh array too). */
function strings(v: unknown): string[] | undefined {
  if (!array(v, PAYLOAD_LIMITS.maxGlobalHolders)) return FAIL;
  for (let i = 0; i < v.length; i++) if (!wireString(v[i])) return FAIL;
  return v.slice() as string[];
}

function sampleGlobal(v: unknown): SampleGlobal | undefined {
  if (!plain(v) || !amount(v.inUse)) return FAIL;
  const holders = strings(v.holders);
  if (holders === undefined) return FAIL;
  const own = strings(v.own);
  if (own === undefined) return FAIL;
  return { inUse: v.inUse, holders, own };
}

function sampleShare(v: unknown): SampleShare | undefined {
  if (!plain(v)) return FAIL;
  const { budget, replicas, target, reachable } = v;
  if (!count(budget) || !count(replicas) || !count(target) || typeof reachable !== "boolean") return FAIL;
  return { budget, replicas, target, reachable };
}

// The figures behind an adaptive cap's change: each optional, in schema order.
const LIMIT_FIGURES: readonly [keyof SampleLimitChange, (v: unknown) => v is number][] = [
  ["from", count],
  ["shortMs", amount],
  ["longMs", amount],
  ["inFlight", count],
];

function sampleLimitChange(v: unknown): SampleLimitChange | undefined {
  if (!plain(v)) return FAIL;
  const { min, max, limit, t, reason } = v;
  if (!count(min) || !count(max) || !count(limit) || !amount(t) || !wireString(reason)) return FAIL;
  const out: SampleLimitChange = { min, max, limit, t, reason };
  for (const [key, valid] of LIMIT_FIGURES) {
    const x = v[key];
    // An own key set to undefined is left to zod, as for `dropped`.
    if (x === undefined) {
      if (key in v) return FAIL;
    } else if (valid(x)) (out as unknown as Record<string, number>)[key] = x;
    else return FAIL;
  }
  return out;
}

function sampleLimit(v: unknown): SampleLimit | undefined {
  const out: SampleLimit | undefined = sampleLimitChange(v);
  if (out === undefined) return FAIL;
  const earlier = (v as Record<string, unknown>).earlier;
  if (earlier === undefined) return "earlier" in (v as object) ? FAIL : out;
  if (!Array.isArray(earlier) || earlier.length > LIMITS.maxLimitChanges) return FAIL;
  const list: SampleLimitChange[] = [];
  for (const e of earlier) {
    const c = sampleLimitChange(e);
    if (c === undefined) return FAIL;
    list.push(c);
  }
  out.earlier = list;
  return out;
}

/** One sample, as sampleSchema would return it, or undefined. */
export function fastSample(v: unknown): Sample | undefined {
  if (!plain(v)) return FAIL;
  const { id, cap, inUse, available, waiters, oldestWaitMs, acquired, released, timeouts, rejections, aborts, doubleReleases, leaseExpiries, longestHoldMs } = v;
  if (!wireString(id) || !amount(cap) || !amount(inUse)) return FAIL;
  // The one number that may be negative.
  if (typeof available !== "number" || !Number.isFinite(available)) return FAIL;
  if (!count(waiters) || !amount(oldestWaitMs) || !count(acquired) || !count(released) || !count(timeouts)) return FAIL;
  if (!count(rejections) || !count(aborts) || !count(doubleReleases) || !count(leaseExpiries)) return FAIL;
  const waitMs = summary(v.waitMs);
  if (waitMs === undefined) return FAIL;
  const holdMs = summary(v.holdMs);
  if (holdMs === undefined || !amount(longestHoldMs)) return FAIL;
  // As the schema returns it already (the usual case: agents send keys in schema order).
  if (waitMs === v.waitMs && holdMs === v.holdMs && exactKeys(v, SAMPLE_KEYS())) return v as unknown as Sample;
  const out: Sample = { id, cap, inUse, available, waiters, oldestWaitMs, acquired, released, timeouts, rejections, aborts, doubleReleases, leaseExpiries, waitMs, holdMs, longestHoldMs };
  // The optional parts (sample-layout.ts); an own key set to undefined is left to zod, as for `dropped`.
  for (const k of SAMPLE_PARTS) if (!copyPart(v, k, out)) return FAIL;
  return out;
}

/** Each optional part's check: its value as the schema returns it, or undefined. */
const PART_CHECKS: { [K in SamplePart]: (v: unknown) => Sample[K] | undefined } = {
  global: sampleGlobal,
  share: sampleShare,
  limit: sampleLimit,
  opening: (v) => (count(v) ? v : undefined),
};

/** Copies part `k` of `v` into `out` if present; false if it is there and fails its check. */
function copyPart<K extends SamplePart>(v: Obj, k: K, out: Sample): boolean {
  const raw = v[k];
  if (raw === undefined) return !(k in v);
  const part = PART_CHECKS[k](raw);
  if (part === undefined) return false;
  out[k] = part;
  return true;
}

/** A batch's own fields, valid, with its items still to check. */
export type SamplesEnvelope = Omit<SamplesBatch, "items"> & { items: readonly unknown[] };

/** The batch's own fields as samplesEnvelopeSchema would return them (items unchecked), or undefined. */
export function fastEnvelope(v: unknown): SamplesEnvelope | undefined {
  if (!plain(v)) return FAIL;
  const { seq, t, intervalMs, items, dropped, partial } = v;
  if (!count(seq) || !amount(t)) return FAIL;
  if (typeof intervalMs !== "number" || !Number.isFinite(intervalMs) || !(intervalMs > 0)) return FAIL;
  if (dropped === undefined ? "dropped" in v : !count(dropped)) return FAIL;
  // Optional (feature changed_only); an own key set to undefined is left to zod, as for `dropped`.
  if (partial === undefined ? "partial" in v : partial !== "more" && partial !== "end") return FAIL;
  if (!array(items, PAYLOAD_LIMITS.maxSamplesPerBatch)) return FAIL;
  const env: SamplesEnvelope = dropped === undefined ? { seq, t, intervalMs, items } : { seq, t, intervalMs, items, dropped: dropped as number };
  if (partial !== undefined) env.partial = partial as "more" | "end";
  return env;
}

/**
 * The batch with `items`, fields in schema order. An envelope zod checked keeps an own `dropped`
 * and `partial` set to undefined (as zod returns them); one the fast path checked never has one.
 */
export function withItems(env: SamplesEnvelope, items: Sample[]): SamplesBatch {
  const { seq, t, intervalMs, dropped, partial } = env;
  const batch: SamplesBatch = dropped === undefined && !("dropped" in env) ? { seq, t, intervalMs, items } : { seq, t, intervalMs, items, dropped };
  if (partial !== undefined || "partial" in env) batch.partial = partial;
  return batch;
}

/**
 * The parsed batch when `data` is a valid `samples` payload (exactly as samplesBatchSchema would
 * return it), else undefined: then only zod can say whether and why it is not.
 */
export function fastSamplesBatch(data: unknown): SamplesBatch | undefined {
  try {
    const env = fastEnvelope(data);
    if (env === undefined) return FAIL;
    const out: Sample[] = [];
    for (let i = 0; i < env.items.length; i++) {
      const s = fastSample(env.items[i]);
      if (s === undefined) return FAIL;
      out.push(s);
    }
    return withItems(env, out);
  } catch {
    // A throwing getter or proxy (only in-process input): zod's answer is the one that counts.
    return FAIL;
  }
}
