// The flight recorder's ring: bounded (a fixed capacity, whatever is pushed), exact (the last
// `capacity` operations, in order, against a plain array model), and, fed by the Semaphore,
// consistent with what the semaphore did (its counters, its holders) on random command runs.
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FlightRecorder, Semaphore, type Permit } from "../../agent/src/index.js";
import type { FlightOpKind } from "../../shared/protocol/types.js";
import { FAKE_TIMERS } from "./semantic-suite.js";

const KINDS: FlightOpKind[] = ["request", "grant", "release", "timeout", "reject", "abort", "double_release", "expire"];
let seq = 0;
const name = (what: string) => `flight-${what}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

describe("FlightRecorder ring", () => {
  it("keeps exactly the last capacity operations, oldest first, and its memory never grows", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(
          fc.record({
            op: fc.constantFrom(...KINDS),
            holder: fc.nat({ max: 1000 }),
            weight: fc.integer({ min: 1, max: 9 }),
            at: fc.double({ min: 0, max: 1e6, noNaN: true }),
            span: fc.double({ min: 0, max: 1000, noNaN: true }),
            stack: fc.option(fc.constantFrom("at a (x.js:1:1)", "at b (y.js:2:2)"), { nil: undefined }),
          }),
          { maxLength: 200 },
        ),
        (requested, ops) => {
          const ring = new FlightRecorder(requested);
          const capacity = ring.capacity;
          expect(capacity).toBeGreaterThanOrEqual(requested);
          expect(capacity & (capacity - 1)).toBe(0);
          const model: typeof ops = [];
          for (const o of ops) {
            ring.record(o.op, { holder: o.holder, weight: o.weight, at: o.at, since: o.at - o.span, stack: o.stack });
            model.push(o);
          }
          expect(ring.total).toBe(model.length);
          const got = ring.ops();
          const want = model.slice(Math.max(0, model.length - capacity));
          expect(got.length).toBe(want.length);
          got.forEach((g, i) => {
            const w = want[i];
            expect(g.op).toBe(w.op);
            expect(g.holder).toBe(w.holder);
            expect(g.weight).toBe(w.weight);
            expect(g.at).toBe(w.at);
            expect(g.since).toBeCloseTo(w.at - w.span, 6);
            expect(g.stack?.stack).toBe(w.stack);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses a capacity that is not a positive integer or past the maximum", () => {
    expect(() => new FlightRecorder(0)).toThrow(RangeError);
    expect(() => new FlightRecorder(1.5)).toThrow(RangeError);
    expect(() => new FlightRecorder(1 << 20)).toThrow(/at most 65536/);
    expect(new FlightRecorder(1000).capacity).toBe(1024);
  });

  it("ignores an unknown kind from an adapter instead of throwing into it, and reads odd numbers sanely", () => {
    const ring = new FlightRecorder(8);
    expect(() => ring.record("bogus" as FlightOpKind)).not.toThrow();
    expect(ring.total).toBe(0);
    ring.record("grant", { weight: 2.6, holder: -3, at: NaN });
    ring.record("release", { weight: 0.2 });
    expect(ring.ops().map((o) => [o.op, o.weight, o.holder, Number.isFinite(o.at)])).toEqual([
      ["grant", 3, 0, true],
      ["release", 1, 0, true],
    ]);
  });

  it("turns the ring into a wire record: epoch times, waits and holds, a deduplicated stack table", () => {
    vi.useFakeTimers(FAKE_TIMERS);
    try {
      const ring = new FlightRecorder(4);
      const t0 = performance.now();
      ring.record("request", { at: t0 });
      ring.record("grant", { holder: 1, at: t0 + 30, since: t0, stack: "at same (s.js:1:1)" });
      ring.record("grant", { holder: 2, at: t0 + 31, since: t0 + 31, stack: "at same (s.js:1:1)" });
      ring.record("release", { holder: 1, at: t0 + 80, since: t0 + 30 });
      ring.record("timeout", { at: t0 + 90, since: t0 + 40 });
      const rec = ring.toRecord("db", "a1", Date.now(), { maxOps: 100, maxHolders: 10, maxStacks: 4 });
      expect(rec.total).toBe(5);
      expect(rec.ops.map((o) => o.op)).toEqual(["grant", "grant", "release", "timeout"]);
      expect(rec.ops[0]).toMatchObject({ holder: 1, waitMs: 30, stack: 0 });
      expect(rec.ops[1]).toMatchObject({ holder: 2, waitMs: 0, stack: 0 });
      expect(rec.ops[2]).toMatchObject({ holder: 1, holdMs: 50 });
      expect(rec.ops[3]).toMatchObject({ waitMs: 50 });
      expect(rec.stacks).toEqual(["at same (s.js:1:1)"]);
      expect(rec.ops[3].t - rec.ops[0].t).toBeCloseTo(60, 6);
    } finally {
      vi.useRealTimers();
    }
  });
});

// ---- fed by the Semaphore ----

type Cmd =
  | { k: "acquire"; weight: number; timeout: number | undefined }
  | { k: "try"; weight: number }
  | { k: "release"; pick: number }
  | { k: "double"; pick: number }
  | { k: "abort" }
  | { k: "advance"; ms: number };

const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 25, arbitrary: fc.record({ k: fc.constant("acquire" as const), weight: fc.integer({ min: 1, max: 3 }), timeout: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }) }) },
  { weight: 6, arbitrary: fc.record({ k: fc.constant("try" as const), weight: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 20, arbitrary: fc.record({ k: fc.constant("release" as const), pick: fc.nat({ max: 7 }) }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant("double" as const), pick: fc.nat({ max: 7 }) }) },
  { weight: 4, arbitrary: fc.constant({ k: "abort" as const }) },
  { weight: 15, arbitrary: fc.record({ k: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 30 }) }) },
);

interface Run {
  sem: Semaphore;
  held: Permit[];
}

async function run(cmds: Cmd[], permits: number, maxWaiters: number, flightRecorder: number | boolean): Promise<Run> {
  const sem = new Semaphore({ name: name("run"), permits, maxWaiters, flightRecorder });
  const held: Permit[] = [];
  const released: Permit[] = [];
  let ctrl = new AbortController();
  for (const c of cmds) {
    switch (c.k) {
      case "acquire":
        sem.acquire({ weight: Math.min(c.weight, permits), timeoutMs: c.timeout, signal: ctrl.signal }).then(
          (p) => held.push(p),
          () => undefined,
        );
        break;
      case "try": {
        const p = sem.tryAcquire(Math.min(c.weight, permits));
        if (p !== undefined) held.push(p);
        break;
      }
      case "release":
        if (held.length > 0) {
          const [p] = held.splice(c.pick % held.length, 1);
          p.release();
          released.push(p);
        }
        break;
      case "double":
        if (released.length > 0) released[c.pick % released.length].release();
        break;
      case "abort":
        ctrl.abort();
        ctrl = new AbortController();
        break;
      case "advance":
        await vi.advanceTimersByTimeAsync(c.ms);
        break;
    }
    await Promise.resolve();
  }
  await vi.advanceTimersByTimeAsync(0);
  return { sem, held };
}

describe("Semaphore feeding the ring", () => {
  beforeEach(() => {
    vi.useFakeTimers(FAKE_TIMERS);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("records what the semaphore did: counts match its counters, releases match earlier grants, holders match", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmdArb, { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), fc.oneof(fc.constant(Infinity), fc.integer({ min: 0, max: 3 })), async (cmds, permits, maxWaiters) => {
        const { sem } = await run(cmds, permits, maxWaiters, 4096);
        const ring = sem.flightRecorder as FlightRecorder;
        const ops = ring.ops();
        const count = (k: FlightOpKind) => ops.filter((o) => o.op === k).length;
        const c = sem.counters();
        expect(count("grant")).toBe(c.acquired);
        expect(count("release")).toBe(c.released);
        expect(count("timeout")).toBe(c.timeouts);
        expect(count("reject")).toBe(c.rejections);
        expect(count("abort")).toBe(c.aborts);
        expect(count("double_release")).toBe(c.doubleReleases);
        // Holders: granted in sequence, each released at most once, after its grant.
        const live = new Map<number, number>();
        let lastGrant = 0;
        let lastAt = -Infinity;
        for (const o of ops) {
          expect(o.at).toBeGreaterThanOrEqual(lastAt);
          lastAt = o.at;
          if (o.op === "grant") {
            expect(o.holder).toBe(++lastGrant);
            expect(o.since).toBeLessThanOrEqual(o.at);
            live.set(o.holder, o.weight);
          } else if (o.op === "release") {
            expect(live.get(o.holder)).toBe(o.weight);
            live.delete(o.holder);
          }
        }
        const snap = sem.snapshot();
        expect([...live.keys()].map((h) => `${sem.name}#${h}`)).toEqual(snap.holders.map((h) => h.holderId));
        expect(ring.holders().map((h) => h.holder)).toEqual([...live.keys()]);
        await sem.close();
      }),
      { numRuns: 150 },
    );
  });

  it("a small ring holds exactly the newest operations of the same run", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmdArb, { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), async (cmds, permits) => {
        const big = await run(cmds, permits, Infinity, 4096);
        // Read and closed first: its waiters' timers would fire during the second run.
        const all = (big.sem.flightRecorder as FlightRecorder).ops();
        await big.sem.close();
        const small = await run(cmds, permits, Infinity, 8);
        const kept = (small.sem.flightRecorder as FlightRecorder).ops();
        const strip = (o: { op: string; holder: number; weight: number; at: number; since: number }) => [o.op, o.holder, o.weight, o.at - o.since];
        expect(kept.map(strip)).toEqual(all.slice(Math.max(0, all.length - 8)).map(strip));
        expect((small.sem.flightRecorder as FlightRecorder).total).toBe(all.length);
        await small.sem.close();
      }),
      { numRuns: 100 },
    );
  });

  it("is on by default with 1,024 operations, sized by a number, and off with false", async () => {
    const on = new Semaphore({ name: name("default"), permits: 1 });
    const sized = new Semaphore({ name: name("sized"), permits: 1, flightRecorder: 100 });
    const off = new Semaphore({ name: name("off"), permits: 1, flightRecorder: false });
    expect(on.flightRecorder?.capacity).toBe(1024);
    expect(sized.flightRecorder?.capacity).toBe(128);
    expect(off.flightRecorder).toBeUndefined();
    off.tryAcquire()?.release();
    expect(() => new Semaphore({ name: name("bad"), permits: 1, flightRecorder: -1 })).toThrow(RangeError);
    expect(() => new Semaphore({ name: name("bad2"), permits: 1, flightRecorder: "yes" as unknown as number })).toThrow(TypeError);
    for (const s of [on, sized, off]) await s.close();
  });

  it("keeps the acquiring stack with a grant when stacks are captured (leak detection on)", async () => {
    const sem = new Semaphore({ name: name("stacks"), permits: 1, leakThresholdMs: 1000 });
    const p = await sem.acquire();
    const grant = (sem.flightRecorder as FlightRecorder).ops().find((o) => o.op === "grant");
    expect(grant?.stack?.stack).toContain("flight-recorder.test");
    p.release();
    await sem.close();
  });
});
