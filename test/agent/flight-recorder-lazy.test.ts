// The flight recorder costs nothing until used (issue 33): no array before the first operation,
// then one that doubles as it fills, up to its capacity; rings of the default capacity share one
// process-wide budget past their floor. Whatever size it reached, it still answers with exactly
// the operations before the alert, in order, and a semaphore's histograms come and go with use.
import { describe, expect, it } from "vitest";
import { FlightRecorder, Semaphore, type Permit } from "../../agent/src/index.js";
import { RING_BUDGET_OPS, RING_FIRST_OPS, RING_FLOOR_OPS, ringBudgetUsed } from "../../agent/src/flight-recorder.js";

let seq = 0;
const name = (what: string) => `lazy-${what}-${++seq}`;
const ringOf = (s: Semaphore) => s.flightRecorder as FlightRecorder;

describe("a lazily allocated flight recorder", () => {
  it("holds no array until the first operation, then grows by doubling to its capacity", async () => {
    const sem = new Semaphore({ name: name("grow"), permits: 2 });
    const ring = ringOf(sem);
    expect(ring.capacity).toBe(1024);
    expect(ring.size).toBe(0);
    expect(ring.bytes).toBe(0);
    sem.tryAcquire()?.release();
    expect(ring.size).toBe(RING_FIRST_OPS);
    expect(ring.bytes).toBe(RING_FIRST_OPS * 32);
    for (let i = 0; i < 40; i++) sem.tryAcquire()?.release();
    expect(ring.total).toBe(82);
    expect(ring.size).toBe(128);
    for (let i = 0; i < 5000; i++) sem.tryAcquire()?.release();
    expect(ring.size).toBe(1024);
    expect(ring.ops()).toHaveLength(1024);
    await sem.close();
  });

  it("returns the operations before a leak, in order, across every growth of the ring", async () => {
    const sem = new Semaphore({ name: name("leak"), permits: 3, leakThresholdMs: 60_000 });
    const held: Permit[] = [];
    // 37 ordinary pairs (74 operations: grown 16 → 32 → 64 → 128), then the permit kept.
    for (let i = 0; i < 37; i++) (await sem.acquire()).release();
    held.push(await sem.acquire());
    const ring = ringOf(sem);
    expect(ring.size).toBe(128);
    const ops = ring.ops();
    expect(ops).toHaveLength(75);
    expect(ops.map((o) => o.op)).toEqual([...Array.from({ length: 37 }, () => ["grant", "release"]).flat(), "grant"]);
    // Holders numbered 1..38 in grant order, each release naming the grant before it.
    expect(ops.filter((o) => o.op === "grant").map((o) => o.holder)).toEqual(Array.from({ length: 38 }, (_, i) => i + 1));
    ops.forEach((o, i) => i > 0 && expect(o.at).toBeGreaterThanOrEqual(ops[i - 1].at));
    const record = ring.toRecord("x", "alert-1", Date.now(), { maxOps: 4096, maxHolders: 256, maxStacks: 32 });
    expect(record.holders.map((h) => h.holder)).toEqual([38]);
    expect(record.stacks[record.holders[0].stack as number]).toContain("flight-recorder-lazy.test");
    expect(record.ops.at(-1)).toMatchObject({ op: "grant", holder: 38 });
    held[0].release();
    await sem.close();
  });

  it("shares one budget among default rings: past it they wrap at the size they reached, and a closed one gives its share back", async () => {
    const before = ringBudgetUsed();
    const perRing = 1024 - RING_FLOOR_OPS;
    const fill = Math.floor((RING_BUDGET_OPS - before) / perRing);
    const full: Semaphore[] = [];
    for (let i = 0; i < fill; i++) {
      const s = new Semaphore({ name: name("full"), permits: 1 });
      for (let k = 0; k < 600; k++) s.tryAcquire()?.release();
      full.push(s);
    }
    expect(full.every((s) => ringOf(s).size === 1024)).toBe(true);
    expect(ringBudgetUsed()).toBe(before + fill * perRing);

    // Over budget: this one stops where the budget ends (at least its floor), and still keeps
    // exactly its newest operations in order.
    const late = new Semaphore({ name: name("late"), permits: 1 });
    for (let k = 0; k < 3000; k++) late.tryAcquire()?.release();
    const size = ringOf(late).size;
    expect(size).toBeGreaterThanOrEqual(RING_FLOOR_OPS);
    expect(size).toBeLessThan(1024);
    const ops = ringOf(late).ops();
    expect(ops).toHaveLength(size);
    expect(ops.at(-1)).toMatchObject({ op: "release", holder: 3000 });
    expect(ops[0].holder).toBe(3000 - size / 2 + 1);
    // A number asked for explicitly is not held back by the budget.
    const explicit = new Semaphore({ name: name("explicit"), permits: 1, flightRecorder: 2048 });
    for (let k = 0; k < 1100; k++) explicit.tryAcquire()?.release();
    expect(ringOf(explicit).size).toBe(2048);

    // Closing gives the share back: the late ring grows on at its next wrap.
    await full[0].close();
    for (let k = 0; k < 3000; k++) late.tryAcquire()?.release();
    expect(ringOf(late).size).toBe(1024);
    expect(ringOf(late).ops().at(-1)).toMatchObject({ op: "release", holder: 6000 });
    for (const s of [...full, late, explicit]) await s.close();
    expect(ringBudgetUsed()).toBe(before);
  });
});

describe("a semaphore's histograms", () => {
  it("are made by the first value and let go after an interval that recorded none, without changing what a sample says", async () => {
    const sem = new Semaphore({ name: name("hist"), permits: 1 });
    const idle = sem.sample(Date.now());
    expect(idle.waitMs).toEqual({ count: 0, p50: 0, p90: 0, p99: 0, max: 0, hist: [] });
    expect(idle.holdMs).toEqual(idle.waitMs);
    const p = await sem.acquire();
    const waiter = sem.acquire();
    await new Promise((r) => setTimeout(r, 5));
    p.release();
    (await waiter).release();
    const busy = sem.sample(Date.now());
    expect(busy.acquired).toBe(2);
    expect(busy.waitMs.count).toBe(2);
    expect(busy.waitMs.max).toBeGreaterThanOrEqual(4);
    expect(busy.holdMs.count).toBe(2);
    const after = sem.sample(Date.now());
    expect(after.waitMs.count).toBe(0);
    expect(after.holdMs.count).toBe(0);
    // Busy again after being let go: counted from its first value.
    sem.tryAcquire()?.release();
    expect(sem.sample(Date.now()).holdMs.count).toBe(1);
    await sem.close();
  });
});
