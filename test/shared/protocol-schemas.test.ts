import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  LIMITS,
  PAYLOAD_LIMITS,
  agentPayloadSchemas,
  eventsBatchSchema,
  handshakeAuthSchema,
  helloSchema,
  parsePayload,
  registerSchema,
  samplesBatchSchema,
  type AgentEvent,
  type SemaphoreInfo,
  type Summary,
} from "../../shared/protocol/index.js";

const protoNamesBefore = Object.getOwnPropertyNames(Object.prototype).sort();
afterAll(() => {
  // Nothing any test fed the parser may leave a trace on the shared prototype.
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoNamesBefore);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

/** What socket.io delivers: the payload after a JSON round trip. */
const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function expectOk(schema: z.ZodType, data: unknown): unknown {
  const r = parsePayload(schema, data);
  if (!r.ok) expect.fail(`expected ok, got: ${r.error}`);
  return r.value;
}

function expectError(schema: z.ZodType, data: unknown): string {
  const r = parsePayload(schema, data);
  if (r.ok) expect.fail("expected a refusal, got ok");
  return r.error;
}

/** A deep copy of `base` with the value at `path` replaced (or removed when value is DELETE). */
const DELETE = Symbol("delete");
function withAt<T>(base: T, path: (string | number)[], value: unknown): T {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (value === DELETE) delete node[last];
  else node[last] = value;
  return copy as T;
}

// ---- valid payloads ----

const summary = (): Summary => ({ count: 3, p50: 0.5, p90: 2, p99: 2, max: 2.1, hist: [[0, 1], [40, 1], [88, 1]] });
const semaphore = (id = "db"): SemaphoreInfo => ({
  id, name: "db-pool", kind: "pg-pool", cap: 10, queue: "fifo", maxWaiters: null,
  acquireTimeoutMs: 5000, leaseTimeoutMs: null, leakThresholdMs: 30000, scope: "process", budget: 40,
});
const base = {
  auth: { protocol: 1, token: "s3cret" },
  hello: {
    agentId: "0b0e4d3c-1111-4a4a-9c9c-2f2f2f2f2f2f", service: "checkout", instance: "web-1:4242",
    pid: 4242, host: "web-1", runtime: "node 20.20.2", agentVersion: "0.1.0", startedAt: 1767225600000,
  },
  register: { semaphores: [semaphore("db"), { ...semaphore("http"), queue: "unknown", scope: "global" }] },
  samples: {
    seq: 7, t: 1767225601000, intervalMs: 1000, dropped: 2,
    items: [{
      id: "db", cap: 10, inUse: 10, available: 0, waiters: 3, oldestWaitMs: 120.5, acquired: 40,
      released: 38, timeouts: 1, rejections: 0, aborts: 0, doubleReleases: 0, leaseExpiries: 0,
      waitMs: summary(), holdMs: summary(), longestHoldMs: 900,
    }],
  },
  events: {
    items: [{
      t: 1767225601500, id: "db", type: "leak_suspected", holderId: "h-17", heldMs: 31000,
      stack: "Error\n    at acquire (app.js:1:1)", detail: { available: -1, inUse: 11, cap: 10, tags: ["a", null, true] },
    }] satisfies AgentEvent[],
  },
};

const kinds = [
  ["handshake auth", handshakeAuthSchema, base.auth],
  ["hello", agentPayloadSchemas.hello, base.hello],
  ["register", agentPayloadSchemas.register, base.register],
  ["samples", agentPayloadSchemas.samples, base.samples],
  ["events", agentPayloadSchemas.events, base.events],
] as const;

// ---- generated payloads ----

const FORBIDDEN = ["__proto__", "constructor", "prototype"];
/** Any UTF-16 code units, lone surrogates included: the limit counts units, not characters. */
const units = (maxLength: number) =>
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength }).map((codes) => String.fromCharCode(...codes));
const str = (maxLength: number = LIMITS.maxString) => fc.oneof(fc.string({ maxLength }), units(maxLength));
const amount = fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }));
const count = fc.oneof(fc.nat(), fc.maxSafeNat());
const signed = fc.double({ noNaN: true, noDefaultInfinity: true });
const hist = fc
  .uniqueArray(fc.tuple(fc.integer({ min: 0, max: 255 }), count), { selector: (p) => p[0], maxLength: 256 })
  .map((pairs) => pairs.sort((a, b) => a[0] - b[0]));
const summaryArb = fc.record({ count, p50: amount, p90: amount, p99: amount, max: amount, hist });
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { maxDepth: 3, depthIdentifier: "detail" },
    fc.constant(null), fc.boolean(), signed, str(),
    fc.array(tie("json"), { maxLength: 4, depthIdentifier: "detail" }),
    fc.dictionary(str(20).filter((k) => !FORBIDDEN.includes(k)), tie("json"), { maxKeys: 4, depthIdentifier: "detail" }),
  ),
}));
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const orNull = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

const arbitraries = {
  "handshake auth": fc.record({ protocol: fc.constant(1), token: optional(str()) }),
  hello: fc.record({
    agentId: fc.uuid(), service: str(), instance: str(), pid: count, host: str(), runtime: str(),
    agentVersion: str(), startedAt: amount,
  }),
  register: fc.record({
    semaphores: fc.uniqueArray(
      fc.record({
        id: str(), name: str(), kind: str(), cap: amount,
        queue: fc.constantFrom("fifo", "lifo", "priority", "adaptive", "unknown"),
        maxWaiters: orNull(count), acquireTimeoutMs: orNull(amount), leaseTimeoutMs: orNull(amount),
        leakThresholdMs: orNull(amount), scope: fc.constantFrom("process", "global"), budget: optional(amount),
      }),
      { selector: (s) => s.id, maxLength: 20 },
    ),
  }),
  samples: fc.record({
    seq: count, t: amount, intervalMs: amount.filter((n) => n > 0), dropped: optional(count),
    items: fc.array(
      fc.record({
        id: str(), cap: amount, inUse: amount, available: signed, waiters: count, oldestWaitMs: amount,
        acquired: count, released: count, timeouts: count, rejections: count, aborts: count,
        doubleReleases: count, leaseExpiries: count, waitMs: summaryArb, holdMs: summaryArb, longestHoldMs: amount,
      }),
      { maxLength: 5 },
    ),
  }),
  events: fc.record({
    items: fc.array(
      fc.record({
        t: amount, id: str(),
        type: fc.constantFrom("leak_suspected", "leak_resolved", "double_release", "invariant_violation", "lease_expired", "order_inversion"),
        holderId: optional(str()), heldMs: optional(amount), stack: optional(str(LIMITS.maxStack)),
        detail: optional(fc.dictionary(str(20).filter((k) => !FORBIDDEN.includes(k)), json, { maxKeys: 6 })),
      }),
      { maxLength: 5 },
    ),
  }),
};

describe("valid payloads", () => {
  it.each(kinds)("%s: the example from docs/protocol.md parses to itself", (_name, schema, payload) => {
    expect(expectOk(schema, wire(payload))).toEqual(payload);
  });

  it.each(kinds)("%s: generated payloads parse and round-trip", (name, schema) => {
    fc.assert(
      fc.property(arbitraries[name] as fc.Arbitrary<unknown>, (payload) => {
        const sent = wire(payload);
        const parsed = expectOk(schema, sent);
        expect(parsed).toEqual(sent);
        expect(expectOk(schema, wire(parsed))).toEqual(sent);
      }),
      { numRuns: 200 },
    );
  });

  it.each(kinds)("%s: unknown fields are stripped, not refused (the protocol grows by optional fields)", (_name, schema, payload) => {
    const parsed = expectOk(schema, { ...wire(payload), addedInV2: { x: 1 } });
    expect(parsed).not.toHaveProperty("addedInV2");
  });

  it("strips unknown fields inside nested objects too", () => {
    const sent = withAt(withAt(base.samples, ["items", 0, "waitMs", "extra"], 1), ["items", 0, "extra"], 2);
    expect(expectOk(samplesBatchSchema, sent)).toEqual(base.samples);
  });

  it("accepts a negative `available` (an over-subscribed lowered cap) and fractional permits", () => {
    const sent = withAt(withAt(base.samples, ["items", 0, "available"], -3), ["items", 0, "cap"], 2.5);
    expect(expectOk(samplesBatchSchema, sent)).toEqual(sent);
  });

  it("accepts every queue, scope and event type the protocol names", () => {
    for (const queue of ["fifo", "lifo", "priority", "adaptive", "unknown"]) expectOk(registerSchema, withAt(base.register, ["semaphores", 0, "queue"], queue));
    for (const scope of ["process", "global"]) expectOk(registerSchema, withAt(base.register, ["semaphores", 0, "scope"], scope));
    for (const type of ["leak_suspected", "leak_resolved", "double_release", "invariant_violation", "lease_expired", "order_inversion"]) {
      expectOk(eventsBatchSchema, withAt(base.events, ["items", 0, "type"], type));
    }
  });
});

describe("limits, at their boundaries", () => {
  const stringFields: [z.ZodType, unknown, (string | number)[]][] = [
    ...(["agentId", "service", "instance", "host", "runtime", "agentVersion"] as const).map((f) => [helloSchema, base.hello, [f]] as [z.ZodType, unknown, string[]]),
    [handshakeAuthSchema, base.auth, ["token"]],
    [registerSchema, base.register, ["semaphores", 1, "id"]],
    [registerSchema, base.register, ["semaphores", 0, "name"]],
    [registerSchema, base.register, ["semaphores", 0, "kind"]],
    [samplesBatchSchema, base.samples, ["items", 0, "id"]],
    [eventsBatchSchema, base.events, ["items", 0, "id"]],
    [eventsBatchSchema, base.events, ["items", 0, "holderId"]],
    [eventsBatchSchema, base.events, ["items", 0, "detail", "note"]],
  ];
  it.each(stringFields)("%#: a string of 256 UTF-16 units passes, 257 is refused", (schema, payload, path) => {
    expectOk(schema, withAt(payload, path, "x".repeat(256)));
    // 128 astral characters are 256 units: the limit counts UTF-16 units, not code points.
    expectOk(schema, withAt(payload, path, "😀".repeat(128)));
    expect(expectError(schema, withAt(payload, path, "😀".repeat(128) + "x"))).toBe(`${path.join(".")}: must be a string of at most 256 UTF-16 units`);
  });

  it("a stack may hold 16,384 UTF-16 units, not 16,385", () => {
    expectOk(eventsBatchSchema, withAt(base.events, ["items", 0, "stack"], "s".repeat(16384)));
    expect(expectError(eventsBatchSchema, withAt(base.events, ["items", 0, "stack"], "s".repeat(16385)))).toMatch(/^items\.0\.stack: .*16384/);
  });

  it("a key inside detail may be 256 units long, not 257", () => {
    expectOk(eventsBatchSchema, withAt(base.events, ["items", 0, "detail", "k".repeat(256)], 1));
    expect(expectError(eventsBatchSchema, withAt(base.events, ["items", 0, "detail", "k".repeat(257)], 1))).toMatch(/^items\.0\.detail: .*key longer than 256/);
  });

  const many = (n: number, make: (i: number) => unknown) => Array.from({ length: n }, (_, i) => make(i));
  it("a register message may list 10,000 semaphores, not 10,001 (the agent's own limit is the hub's to check), and say which part it is", () => {
    expectOk(registerSchema, { semaphores: many(10_000, (i) => semaphore(`s${i}`)) });
    expect(expectError(registerSchema, { semaphores: many(10_001, (i) => semaphore(`s${i}`)) })).toBe("semaphores: must have at most 10000 items");
    expectOk(registerSchema, { semaphores: [semaphore("a")], partial: "more" });
    expect(expectError(registerSchema, { semaphores: [semaphore("a")], partial: "all" })).toMatch(/^partial: /);
  });

  it("batches hold at most 1,000 samples and 1,000 events", () => {
    const sample = base.samples.items[0];
    expectOk(samplesBatchSchema, { ...base.samples, items: many(1000, (i) => ({ ...sample, id: `s${i}` })) });
    expect(expectError(samplesBatchSchema, { ...base.samples, items: many(1001, (i) => ({ ...sample, id: `s${i}` })) })).toBe("items: must have at most 1000 items");
    expect(PAYLOAD_LIMITS.maxEventsPerBatch).toBe(1000);
    expectOk(eventsBatchSchema, { items: many(1000, () => base.events.items[0]) });
    expect(expectError(eventsBatchSchema, { items: many(1001, () => base.events.items[0]) })).toBe("items: must have at most 1000 items");
  });

  it("refuses a semaphore id listed twice in one register", () => {
    expect(expectError(registerSchema, { semaphores: [semaphore("a"), semaphore("b"), semaphore("a")] })).toBe("semaphores.2.id: duplicate id");
  });

  const numberFields: [string, z.ZodType, unknown, (string | number)[], { int: boolean }][] = [
    ["protocol", handshakeAuthSchema, base.auth, ["protocol"], { int: false }],
    ["pid", helloSchema, base.hello, ["pid"], { int: true }],
    ["startedAt", helloSchema, base.hello, ["startedAt"], { int: false }],
    ["seq", samplesBatchSchema, base.samples, ["seq"], { int: true }],
    ["t", samplesBatchSchema, base.samples, ["t"], { int: false }],
    ["dropped", samplesBatchSchema, base.samples, ["dropped"], { int: true }],
    ...(["cap", "inUse", "oldestWaitMs", "longestHoldMs"] as const).map((f) => [f, samplesBatchSchema, base.samples, ["items", 0, f], { int: false }] as [string, z.ZodType, unknown, (string | number)[], { int: boolean }]),
    ...(["waiters", "acquired", "released", "timeouts", "rejections", "aborts", "doubleReleases", "leaseExpiries"] as const).map(
      (f) => [f, samplesBatchSchema, base.samples, ["items", 0, f], { int: true }] as [string, z.ZodType, unknown, (string | number)[], { int: boolean }],
    ),
    ["summary count", samplesBatchSchema, base.samples, ["items", 0, "holdMs", "count"], { int: true }],
    ["p99", samplesBatchSchema, base.samples, ["items", 0, "waitMs", "p99"], { int: false }],
    ["hist count", samplesBatchSchema, base.samples, ["items", 0, "waitMs", "hist", 1, 1], { int: true }],
    ["semaphore cap", registerSchema, base.register, ["semaphores", 0, "cap"], { int: false }],
    ["maxWaiters", registerSchema, base.register, ["semaphores", 0, "maxWaiters"], { int: true }],
    ["acquireTimeoutMs", registerSchema, base.register, ["semaphores", 0, "acquireTimeoutMs"], { int: false }],
    ["budget", registerSchema, base.register, ["semaphores", 0, "budget"], { int: false }],
    ["event t", eventsBatchSchema, base.events, ["items", 0, "t"], { int: false }],
    ["heldMs", eventsBatchSchema, base.events, ["items", 0, "heldMs"], { int: false }],
  ];
  it.each(numberFields)("%s: 0 passes; NaN, ±Infinity, -1 and strings are refused", (_name, schema, payload, path, { int }) => {
    expectOk(schema, withAt(payload, path, 0));
    for (const bad of [NaN, Infinity, -Infinity, -1, "1", true]) {
      expect(expectError(schema, withAt(payload, path, bad))).toMatch(new RegExp(`^${path.join("\\.")}: must be .*(finite|integer)`));
    }
    if (int) {
      expect(expectError(schema, withAt(payload, path, 1.5))).toBe(`${path.join(".")}: must be ${path.at(-1) === "maxWaiters" ? "null or " : ""}an integer >= 0`);
      expect(expectError(schema, withAt(payload, path, 2 ** 53))).toMatch(/safe integer/);
    } else {
      expectOk(schema, withAt(payload, path, 1.5));
    }
  });

  it("available is the one number that may be negative, but it must still be finite", () => {
    for (const bad of [NaN, Infinity, -Infinity, "0"]) {
      expect(expectError(samplesBatchSchema, withAt(base.samples, ["items", 0, "available"], bad))).toBe("items.0.available: must be a finite number");
    }
  });

  it("refuses an interval of 0 ms (rates divide by it)", () => {
    expect(expectError(samplesBatchSchema, { ...base.samples, intervalMs: 0 })).toBe("intervalMs: must be finite and > 0");
  });

  describe("sparse histograms", () => {
    const histAt = ["items", 0, "waitMs", "hist"];
    const withHist = (h: unknown) => withAt(base.samples, histAt, h);
    it("takes buckets 0..255, all 256 of them, and an empty histogram", () => {
      expectOk(samplesBatchSchema, withHist([]));
      expectOk(samplesBatchSchema, withHist(many(256, (b) => [b, 1])));
      expectOk(samplesBatchSchema, withHist([[255, 0]]));
    });
    it.each([
      ["bucket 256", [[256, 1]], "hist.0.0: bucket must be an integer 0..255"],
      ["bucket -1", [[-1, 1]], "hist.0.0: bucket must be an integer 0..255"],
      ["bucket 1.5", [[1.5, 1]], "hist.0.0: bucket must be an integer 0..255"],
      ["a repeated bucket", [[3, 1], [3, 1]], "hist.1.0: buckets must be strictly ascending"],
      ["descending buckets", [[1, 1], [9, 1], [4, 1]], "hist.2.0: buckets must be strictly ascending"],
      ["a negative count", [[3, -1]], "hist.0.1: must be an integer >= 0"],
      ["a fractional count", [[3, 0.5]], "hist.0.1: must be an integer >= 0"],
      ["a triple", [[3, 1, 1]], "hist.0: must be a [bucket, count] pair"],
      ["a single", [[3]], "hist.0: must be a [bucket, count] pair"],
      ["a bare number", [3], "hist.0: must be a [bucket, count] pair"],
      ["an object", { 3: 1 }, "hist: must be an array"],
      ["257 pairs", many(257, (b) => [b, 1]), "hist: must have at most 256 items"],
    ])("refuses %s", (_name, hist, reason) => {
      expect(expectError(samplesBatchSchema, withHist(hist))).toBe(`items.0.waitMs.${reason}`);
    });
  });

  describe("missing fields and wrong types", () => {
    const optionalKeys = new Set(["token", "budget", "dropped", "holderId", "heldMs", "stack", "detail"]);
    const objects: [string, z.ZodType, unknown, (string | number)[]][] = [
      ["auth", handshakeAuthSchema, base.auth, []],
      ["hello", helloSchema, base.hello, []],
      ["semaphore", registerSchema, base.register, ["semaphores", 0]],
      ["samples batch", samplesBatchSchema, base.samples, []],
      ["sample", samplesBatchSchema, base.samples, ["items", 0]],
      ["summary", samplesBatchSchema, base.samples, ["items", 0, "holdMs"]],
      ["event", eventsBatchSchema, base.events, ["items", 0]],
    ];
    it.each(objects)("%s: each required field is required, each optional one is not", (_name, schema, payload, at) => {
      let node: unknown = payload;
      for (const k of at) node = (node as Record<string | number, unknown>)[k];
      for (const key of Object.keys(node as object)) {
        const path = [...at, key];
        if (optionalKeys.has(key)) expectOk(schema, withAt(payload, path, DELETE));
        else expect(expectError(schema, withAt(payload, path, DELETE))).toBe(`${path.join(".")}: required`);
        const wrong = typeof (node as Record<string, unknown>)[key] === "string" ? 42 : "wrong";
        expect(expectError(schema, withAt(payload, path, wrong))).toMatch(new RegExp(`^${path.join("\\.")}: must be`));
        if (!["maxWaiters", "acquireTimeoutMs", "leaseTimeoutMs", "leakThresholdMs"].includes(key)) {
          expect(expectError(schema, withAt(payload, path, null))).toMatch(new RegExp(`^${path.join("\\.")}: must be`));
        }
      }
    });
    it("nullable settings take null but not absence", () => {
      for (const key of ["maxWaiters", "acquireTimeoutMs", "leaseTimeoutMs", "leakThresholdMs"]) {
        expectOk(registerSchema, withAt(base.register, ["semaphores", 0, key], null));
        expect(expectError(registerSchema, withAt(base.register, ["semaphores", 0, key], DELETE))).toBe(`semaphores.0.${key}: required`);
      }
    });
    it.each([
      ["queue", registerSchema, base.register, ["semaphores", 0, "queue"], "FIFO"],
      ["scope", registerSchema, base.register, ["semaphores", 0, "scope"], "cluster"],
      ["event type", eventsBatchSchema, base.events, ["items", 0, "type"], "leak"],
    ] as const)("%s outside its enum is refused", (_name, schema, payload, path, value) => {
      expect(expectError(schema, withAt(payload, [...path], value))).toMatch(new RegExp(`^${path.join("\\.")}: must be one of `));
    });
    it.each([[null], [undefined], [42], ["hello"], [[]], [true]])("a payload of %j is refused as not an object", (junk) => {
      for (const [, schema] of kinds) expect(expectError(schema, junk)).toMatch(/^payload: (must be an object|required)$/);
    });
  });
});

describe("event detail", () => {
  const eventWith = (detailJson: string) =>
    JSON.parse(`{"items":[{"t":1,"id":"db","type":"invariant_violation","detail":${detailJson}}]}`) as unknown;

  it.each([
    ['{"__proto__":{"polluted":"yes"}}', "items.0.detail", "__proto__"],
    ['{"a":{"b":[0,{"__proto__":{"polluted":"yes"}}]}}', "items.0.detail.a.b.1", "__proto__"],
    ['{"constructor":{"prototype":{"polluted":"yes"}}}', "items.0.detail", "constructor"],
    ['{"x":[{"prototype":{"polluted":"yes"}}]}', "items.0.detail.x.0", "prototype"],
  ])("refuses %s, naming the key, and pollutes nothing", (json, path, key) => {
    expect(expectError(eventsBatchSchema, eventWith(json))).toBe(`${path}: key "${key}" is not allowed`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
  });

  it("drops a top-level __proto__ key with the other unknown fields; the result's prototype is untouched", () => {
    const sent = JSON.parse(`{"__proto__":{"polluted":"yes"},${JSON.stringify(base.hello).slice(1)}`) as unknown;
    const value = expectOk(helloSchema, sent) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, "__proto__")).toBe(false);
    expect(value.polluted).toBeUndefined();
  });

  it("returns detail as a fresh plain object, even from a null-prototype input", () => {
    const inner = [1, { deep: "x" }];
    const detail = Object.assign(Object.create(null) as Record<string, unknown>, { inner });
    const value = expectOk(eventsBatchSchema, withAt(base.events, ["items", 0, "detail"], DELETE)) as { items: AgentEvent[] };
    expect(value.items[0].detail).toBeUndefined();
    const parsed = (expectOk(eventsBatchSchema, { items: [{ ...base.events.items[0], detail }] }) as { items: AgentEvent[] }).items[0].detail!;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(parsed).toEqual({ inner: [1, { deep: "x" }] });
    expect(parsed.inner).not.toBe(inner);
    inner.push(2);
    expect(parsed.inner).toHaveLength(2);
  });

  class Holder {
    x = 1;
  }
  it.each([
    ["an array", [1, 2]], ["null", null], ["a string", "x"], ["a Date", new Date(0)], ["a class instance", new Holder()],
  ])("refuses %s as detail itself", (_name, detail) => {
    expect(expectError(eventsBatchSchema, { items: [{ ...base.events.items[0], detail }] })).toMatch(/^items\.0\.detail: must be/);
  });

  it.each([
    ["NaN", NaN], ["Infinity", Infinity], ["undefined", undefined], ["a bigint", 1n], ["a function", () => 1],
    ["a Date", new Date(0)], ["a Map", new Map()], ["bytes", new Uint8Array(2)], ["a class instance", new Holder()],
  ])("refuses %s inside detail", (_name, bad) => {
    const r = parsePayload(eventsBatchSchema, { items: [{ ...base.events.items[0], detail: { ok: 1, list: [0, bad] } }] });
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/^items\.0\.detail\.list\.1: must be/) as unknown });
  });

  const nested = (levels: number): Record<string, unknown> => (levels === 1 ? { leaf: 1 } : { n: nested(levels - 1) });
  it("nests 8 levels deep (detail itself is level 1), not 9", () => {
    expectOk(eventsBatchSchema, withAt(base.events, ["items", 0, "detail"], nested(8)));
    expect(expectError(eventsBatchSchema, withAt(base.events, ["items", 0, "detail"], nested(9)))).toMatch(/^items\.0\.detail(\.n){8}: nests deeper than 8 levels$/);
  });

  it("holds 1,000 values, not 1,001, counting nested ones", () => {
    const flat = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    expectOk(eventsBatchSchema, withAt(base.events, ["items", 0, "detail"], flat(1000)));
    expectOk(eventsBatchSchema, withAt(base.events, ["items", 0, "detail"], { a: Array(998).fill(0), b: 0 }));
    expect(expectError(eventsBatchSchema, withAt(base.events, ["items", 0, "detail"], flat(1001)))).toBe("items.0.detail: detail holds more than 1000 values");
    expect(expectError(eventsBatchSchema, withAt(base.events, ["items", 0, "detail"], { a: Array(999).fill(0), b: 0 }))).toMatch(/more than 1000 values/);
  });

  it("refuses a cyclic detail without overflowing the stack", () => {
    const detail: Record<string, unknown> = {};
    detail.self = detail;
    expect(expectError(eventsBatchSchema, { items: [{ ...base.events.items[0], detail }] })).toMatch(/nests deeper than 8 levels/);
  });
});

describe("parsePayload on hostile input", () => {
  const junk = fc.anything({
    withBoxedValues: true, withSet: true, withMap: true, withObjectString: true, withNullPrototype: true,
    withBigInt: true, withDate: true, withTypedArray: true, withSparseArray: true, stringUnit: "binary",
  });

  it.each(kinds)("%s: thousands of random values never throw and get a short reason", (_name, schema) => {
    fc.assert(
      fc.property(junk, (data) => {
        const r = parsePayload(schema, data);
        if (!r.ok) {
          expect(typeof r.error).toBe("string");
          expect(r.error.length).toBeLessThanOrEqual(200);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it.each(kinds)("%s: a valid payload with junk at any one place never throws, and what passes parses again", (name, schema) => {
    fc.assert(
      fc.property(arbitraries[name] as fc.Arbitrary<unknown>, fc.nat(), junk, (payload, pick, bad) => {
        const paths: (string | number)[][] = [];
        const collect = (node: unknown, path: (string | number)[]) => {
          paths.push(path);
          if (node !== null && typeof node === "object") for (const [k, v] of Object.entries(node)) collect(v, [...path, Array.isArray(node) ? Number(k) : k]);
        };
        collect(payload, []);
        const path = paths[pick % paths.length];
        const data = path.length === 0 ? bad : withAt(payload, path, bad);
        const r = parsePayload(schema, data);
        if (r.ok) expect(parsePayload(schema, wire(r.value)).ok).toBe(true);
        else expect(r.error.length).toBeLessThanOrEqual(200);
      }),
      { numRuns: 1000 },
    );
  });

  it("never echoes a huge value back", () => {
    const huge = "A".repeat(1 << 20);
    const refused: [z.ZodType, unknown][] = [
      [helloSchema, { ...base.hello, service: huge }],
      [helloSchema, huge],
      [eventsBatchSchema, { items: [{ ...base.events.items[0], detail: { [huge]: 1 } }] }],
      [eventsBatchSchema, { items: [{ ...base.events.items[0], type: huge }] }],
    ];
    for (const [schema, data] of refused) {
      const error = expectError(schema, data);
      expect(error.length).toBeLessThanOrEqual(200);
      expect(error).not.toMatch(/A{50}/);
    }
    // A huge unknown key is stripped like any other unknown field.
    expectOk(helloSchema, { ...base.hello, [huge]: 1 });
  });

  it("reports a throwing getter or proxy as unreadable instead of throwing", () => {
    const getter = Object.defineProperty({ ...base.hello }, "service", { get: () => { throw new Error("boom"); }, enumerable: true });
    expect(parsePayload(helloSchema, getter)).toEqual({ ok: false, error: "payload: could not be read" });
    const trap = new Proxy({}, { getPrototypeOf: () => { throw new Error("trap"); }, ownKeys: () => { throw new Error("trap"); } });
    const r = parsePayload(eventsBatchSchema, { items: [{ ...base.events.items[0], detail: trap }] });
    expect(r.ok).toBe(false);
  });

  it("names the first problem by its path and counts the rest", () => {
    const sent = withAt(withAt(base.samples, ["items", 0, "cap"], -1), ["seq"], 1.5);
    expect(expectError(samplesBatchSchema, sent)).toBe("seq: must be an integer >= 0 (and 1 more)");
  });
});
