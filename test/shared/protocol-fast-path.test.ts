// The `samples` fast path (shared/protocol/fast-samples.ts) and the sliced check built on it
// (samples-check.ts) against zod, the reference: on valid, mutated and junk payloads they give
// exactly parseWithZod's answer (the same value, keys in the same order, or the same reason),
// whatever slices the check is run in. The boundaries are in protocol-schemas.test.ts, which
// goes through parsePayload and so through the fast path too.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastSamplesBatch } from "../../shared/protocol/fast-samples.js";
import { checkSamples, SamplesCheck } from "../../shared/protocol/samples-check.js";
import { parsePayload, parseWithZod, samplesBatchSchema, type ParseResult, type SamplesBatch } from "../../shared/protocol/index.js";

const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const reference = (data: unknown) => parseWithZod(samplesBatchSchema, data);

/** Same answer, and for a value the same JSON (so the same keys in the same order). */
function expectSame(actual: ParseResult<SamplesBatch>, expected: ParseResult<SamplesBatch>): void {
  expect(actual).toStrictEqual(expected);
  if (actual.ok && expected.ok) expect(JSON.stringify(actual.value)).toBe(JSON.stringify(expected.value));
}

// ---- generators: valid batches, then one to three mutations of them ----

const units = (maxLength: number) => fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength }).map((c) => String.fromCharCode(...c));
const str = fc.oneof(fc.string({ maxLength: 8 }), units(8), fc.constantFrom("x".repeat(256), "😀".repeat(128)));
const amount = fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }));
const count = fc.oneof(fc.nat(), fc.maxSafeNat());
const hist = fc
  .uniqueArray(fc.tuple(fc.integer({ min: 0, max: 255 }), count), { selector: (p) => p[0], maxLength: 12 })
  .map((pairs) => pairs.sort((a, b) => a[0] - b[0]));
const summary = fc.record({ count, p50: amount, p90: amount, p99: amount, max: amount, hist });
// The optional `global` block of a global semaphore's sample; its lists sit on either side of 64.
const holderList = fc.oneof(fc.array(str, { maxLength: 4 }), fc.constantFrom(Array.from({ length: 64 }, (_, i) => `h${i}`), Array.from({ length: 65 }, (_, i) => `h${i}`)));
const global = fc.record({ inUse: amount, holders: holderList, own: holderList });
// The optional `share` block of a semaphore sharing a budget across replicas.
const share = fc.record({ budget: count, replicas: count, target: count, reachable: fc.boolean() });
// The optional `limit` block of an adaptive cap; its figures are there after a first change, and
// the interval's earlier changes (at most 16; 17 must be refused alike).
const limitChange = fc.record(
  { min: count, max: count, limit: count, t: amount, reason: str, from: count, shortMs: amount, longMs: amount, inFlight: count },
  { requiredKeys: ["min", "max", "limit", "t", "reason"] },
);
const limit = fc.record(
  { min: count, max: count, limit: count, t: amount, reason: str, from: count, shortMs: amount, longMs: amount, inFlight: count, earlier: fc.array(limitChange, { maxLength: 17 }) },
  { requiredKeys: ["min", "max", "limit", "t", "reason"] },
);
const sample = fc.record(
  {
    id: str, cap: amount, inUse: amount, available: fc.double({ noNaN: true, noDefaultInfinity: true }), waiters: count, oldestWaitMs: amount,
    acquired: count, released: count, timeouts: count, rejections: count, aborts: count, doubleReleases: count, leaseExpiries: count,
    waitMs: summary, holdMs: summary, longestHoldMs: amount, global, share, limit, opening: count,
  },
  { requiredKeys: ["id", "cap", "inUse", "available", "waiters", "oldestWaitMs", "acquired", "released", "timeouts", "rejections", "aborts", "doubleReleases", "leaseExpiries", "waitMs", "holdMs", "longestHoldMs"] },
);
const batch = fc.record(
  { seq: count, t: amount, intervalMs: amount.filter((n) => n > 0), dropped: count, partial: fc.constantFrom<unknown>("more", "end", "all", null), items: fc.array(sample, { maxLength: 6 }) },
  { requiredKeys: ["seq", "t", "intervalMs", "items"] },
);

/** Values chosen to sit on or next to every limit the schema has, and plain junk. */
const nasty = fc.oneof(
  fc.constantFrom<unknown>(
    -1, -0, 0, 0.5, 1.5, 255, 256, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity,
    null, true, false, "", "1", "x".repeat(256), "x".repeat(257), "😀".repeat(128) + "x", [], [1], [0, 1], [1, 2, 3], [[0, 1]], [[1, 1], [0, 1]],
    [[0, 1], [0, 1]], [[-1, 1]], [[256, 1]], [[1.5, 1]], [[1, -1]], [[1, 0.5]], {}, { count: 1 }, "fifo",
  ),
  fc.integer(), fc.double(), fc.string({ maxLength: 4 }),
  fc.jsonValue({ maxDepth: 2 }),
);

type Path = (string | number)[];
function paths(node: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (node !== null && typeof node === "object") for (const [k, v] of Object.entries(node)) paths(v, [...at, Array.isArray(node) ? Number(k) : k], out);
  return out;
}

type Mutation = { kind: "set" | "delete" | "extra"; pick: number; value: unknown };
const mutation = fc.record({ kind: fc.constantFrom<Mutation["kind"]>("set", "set", "set", "delete", "extra"), pick: fc.nat(), value: nasty });

function mutate(base: unknown, m: Mutation): unknown {
  const all = paths(base);
  const path = all[m.pick % all.length];
  if (path.length === 0) return m.kind === "set" ? m.value : base;
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  // Only into what a payload is made of (an earlier mutation may have put a boxed value here).
  if (!Array.isArray(node) && Object.getPrototypeOf(node) !== Object.prototype) return copy;
  const last = path[path.length - 1];
  if (m.kind === "delete") {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else if (m.kind === "extra") {
    const target = node[last];
    if (target !== null && typeof target === "object" && !Array.isArray(target)) (target as Record<string, unknown>).addedInV2 = m.value;
  } else {
    node[last] = m.value;
  }
  return copy;
}

const mutated = fc.tuple(batch, fc.array(mutation, { minLength: 0, maxLength: 3 })).map(([b, ms]) => ms.reduce<unknown>(mutate, b));

describe("the samples fast path against zod", () => {
  it("gives zod's answer on valid and mutated batches after a JSON round trip, whatever the slices", () => {
    let refused = 0;
    fc.assert(
      fc.property(mutated, fc.integer({ min: 1, max: 7 }), (raw, slice) => {
        const data = wire(raw);
        const expected = reference(data);
        if (!expected.ok) refused++;
        expectSame(checkSamples(data), expected);
        expectSame(parsePayload(samplesBatchSchema, data), expected);
        const check = new SamplesCheck(data);
        let r: ParseResult<SamplesBatch> | undefined;
        let steps = 0;
        while ((r = check.step(slice)) === undefined) steps++;
        expectSame(r, expected);
        expect(steps).toBeLessThanOrEqual(Math.ceil(check.checked / slice));
        // On the wire, the fast path alone decides every valid batch: zod only ever sees refusals.
        const fast = fastSamplesBatch(data);
        expect(fast !== undefined).toBe(expected.ok);
        if (fast !== undefined && expected.ok) expect(JSON.stringify(fast)).toBe(JSON.stringify(expected.value));
      }),
      { numRuns: 3000 },
    );
    // The generator is not just making valid batches (nor only junk).
    expect(refused).toBeGreaterThan(1000);
    expect(refused).toBeLessThan(2900);
    // 3,000 batches through zod several times each: on a loaded 2-core machine, over 30 s.
  }, 180_000);

  it("never accepts what zod refuses, even for in-process values JSON cannot carry", () => {
    const junk = fc.anything({
      withBoxedValues: true, withSet: true, withMap: true, withNullPrototype: true, withBigInt: true, withDate: true,
      withTypedArray: true, withSparseArray: true, withObjectString: true,
    });
    const shaped = fc.tuple(batch, fc.array(fc.record({ kind: fc.constant<Mutation["kind"]>("set"), pick: fc.nat(), value: junk }), { minLength: 1, maxLength: 2 }))
      .map(([b, ms]) => ms.reduce<unknown>(mutate, b));
    fc.assert(
      fc.property(fc.oneof(junk, shaped), (data) => {
        const expected = reference(data);
        expect(checkSamples(data)).toStrictEqual(expected);
        expect(parsePayload(samplesBatchSchema, data)).toStrictEqual(expected);
        if (fastSamplesBatch(data) !== undefined) expect(expected.ok).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  const item = (i: number, over: Record<string, unknown> = {}) => ({
    id: `s${i}`, cap: 10, inUse: 2, available: 8, waiters: 0, oldestWaitMs: 0, acquired: 5, released: 5, timeouts: 0, rejections: 0,
    aborts: 0, doubleReleases: 0, leaseExpiries: 0, longestHoldMs: 15,
    waitMs: { count: 3, p50: 1, p90: 2, p99: 3, max: 3, hist: [[0, 1], [80, 2]] },
    holdMs: { count: 2, p50: 10, p90: 20, p99: 20, max: 20, hist: Array.from({ length: 40 }, (_, b) => [b * 6, b + 1]) },
    ...over,
  });
  const full = (over: (i: number) => Record<string, unknown> = () => ({})) => ({ seq: 1, t: 1, intervalMs: 1000, items: Array.from({ length: 1000 }, (_, i) => item(i, over(i))) });

  it.each([
    ["a full valid batch", full()],
    ["1,001 items", { ...full(), items: [...full().items, item(1000)] }],
    ["every item bad", full((i) => ({ cap: -i - 1 }))],
    ["the last item bad, and the envelope", { ...full((i) => (i === 999 ? { waitMs: null } : {})), seq: -1, dropped: 1.5 }],
    ["items not a list", { ...full(), items: { 0: item(0) } }],
    // In-process only (JSON drops it): zod checks that envelope and keeps the key.
    ["an own `dropped` set to undefined", { seq: 0, t: 0, intervalMs: 1, dropped: undefined, items: [item(0)] }],
    ["changed entries only, and a bad `partial`", { ...full(), partial: "end" }],
    ["an own `partial` set to undefined", { seq: 0, t: 0, intervalMs: 1, partial: undefined, items: [item(0)] }],
    ["a `partial` that is not more or end, and a bad item", { ...full((i) => (i === 3 ? { cap: -1 } : {})), partial: "some" }],
    ["unordered histograms deep inside", full((i) => (i % 100 === 0 ? { holdMs: { ...item(0).holdMs, hist: [[5, 1], [4, 1]] } } : {}))],
  ])("full-size batches: %s", (_name, data) => {
    const expected = reference(data);
    expectSame(checkSamples(data), expected);
    const check = new SamplesCheck(data);
    let r: ParseResult<SamplesBatch> | undefined;
    while ((r = check.step(64)) === undefined);
    expectSame(r, expected);
  });
  // How much cheaper the fast path is: bench:hub (bench/hub/parse-cost.ts).

  it("keeps an item already in schema shape as the object it was sent as, and copies one that is not", () => {
    // The hub keeps what it is sent no longer than it has to (fast-samples.ts exactKeys: why).
    const summaryOf = () => ({ count: 2, p50: 1, p90: 2, p99: 2, max: 2, hist: [[10, 1], [12, 1]] });
    const exact = { id: "db", cap: 4, inUse: 1, available: 3, waiters: 0, oldestWaitMs: 0, acquired: 2, released: 2, timeouts: 0, rejections: 0, aborts: 0, doubleReleases: 0, leaseExpiries: 0, waitMs: summaryOf(), holdMs: summaryOf(), longestHoldMs: 5 };
    const { id, ...rest } = exact;
    const reordered = { ...rest, id };
    const extra = { ...exact, note: "dropped" };
    const data = wire({ seq: 1, t: 1, intervalMs: 1000, items: [exact, reordered, extra] });
    const kept = fastSamplesBatch(data)!;
    expect(kept.items[0]).toBe(data.items[0]);
    expect(kept.items[1]).not.toBe(data.items[1]);
    expect(Object.keys(kept.items[1])).toEqual(Object.keys(exact));
    expect(kept.items[2]).not.toBe(data.items[2]);
    expect(kept.items[2]).toStrictEqual(exact);
    expectSame({ ok: true, value: kept }, reference(data));
  });
});
