import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HISTORY_FULL_BYTES, historyFullBytes } from "../../../shared/history/history-options.js";
import { DEFAULT_MIN_IDLE_MS, HistoryStore } from "../../../shared/history/history-store.js";
import { SemaphoreHistory } from "../../../shared/history/semaphore-history.js";
import { T0, bruteQuantile, sample, summaryOf } from "./helpers.js";

const SEC = 1000;
const MIN = 60_000;
type StepOf<A> = A extends fc.Arbitrary<infer T> ? T : never;

describe("HistoryStore eviction", () => {
  /** A store on a clock the test moves. */
  function clocked(opts: ConstructorParameters<typeof HistoryStore>[0] = {}) {
    const clock = { now: 0 };
    const store = new HistoryStore({ now: () => clock.now, ...opts });
    return { store, clock };
  }

  it("makes room for a new key by evicting the least recently updated history once it is idle, and counts it", () => {
    const { store, clock } = clocked({ maxSemaphores: 3, minIdleMs: 60_000 });
    for (const k of ["a", "b", "c"]) store.push(k, sample(), T0, SEC);
    clock.now = 10_000;
    store.push("a", sample(), T0 + SEC, SEC); // a is now the most recent
    expect(store.keys()).toEqual(["b", "c", "a"]);
    // b was updated 20 s ago: live, so the new key waits rather than evict it.
    clock.now = 20_000;
    expect(store.push("d", sample(), T0 + SEC, SEC)).toBe(false);
    expect(store.has("d")).toBe(false);
    expect(store.refused).toBe(1);
    expect(store.evicted).toBe(0);
    // A minute on, b (and c) are idle: the oldest goes, the recent a is kept.
    clock.now = 60_000;
    expect(store.push("d", sample(), T0 + 2 * SEC, SEC)).toBe(true);
    expect(store.keys()).toEqual(["c", "a", "d"]);
    expect(store.evicted).toBe(1);
    expect(store.get("a")?.latestT()).toBe(T0 + SEC);
    clock.now = 70_000;
    store.push("e", sample(), T0 + 3 * SEC, SEC);
    expect(store.keys()).toEqual(["a", "d", "e"]);
    expect(store.evicted).toBe(2);
    expect(store.delete("a")).toBe(true);
    expect(store.delete("a")).toBe(false);
    expect(store.evicted).toBe(2);
    expect(store.keys()).toEqual(["d", "e"]);
    expect(() => new HistoryStore({ maxSemaphores: 0 })).toThrow(RangeError);
  });

  it("gives an instance arriving at a store full of another's live histories its fair share, taken from the one holding most", () => {
    const { store, clock } = clocked({ maxSemaphores: 10 });
    const flood = Array.from({ length: 12 }, (_, i) => `flood/x/${i}`);
    const honest = Array.from({ length: 7 }, (_, i) => `honest/h/${i}`);
    for (const k of flood) store.push(k, sample(), T0, SEC);
    expect([store.size, store.refused]).toEqual([10, 2]);
    clock.now = 1000;
    // Every flood history is live (updated just now): without a share the newcomer would get none.
    for (const k of flood.slice(0, 10)) store.push(k, sample(), T0 + SEC, SEC);
    const got = honest.map((k) => store.push(k, sample(), T0 + SEC, SEC));
    // Two instances, ten histories: five each; the sixth and seventh of the newcomer are refused.
    expect(got).toEqual([true, true, true, true, true, false, false]);
    expect(store.keys().filter((k) => k.startsWith("flood/")).length).toBe(5);
    // The flood's least recently updated went first (flood 0..4 were pushed first in the round).
    expect(flood.slice(0, 5).some((k) => store.has(k))).toBe(false);
    expect([store.evicted, store.evictedForFairness]).toEqual([5, 5]);
    // At its share, the flood cannot take them back.
    expect(store.push(flood[0], sample(), T0 + 2 * SEC, SEC)).toBe(false);
    expect(store.has("honest/h/0")).toBe(true);
  });

  it("evicts for fairness from a group holding most, its least recently updated history, and refuses a group at its share", () => {
    // Keys of a few instances; the clock mostly stands still (every history live), now and then
    // jumps past minIdleMs (the least recent goes whoever holds it).
    type Op = { kind: "push" | "delete"; group: number; id: number; advance: number };
    const op = fc.record({
      kind: fc.constantFrom<Op["kind"]>("push", "push", "push", "push", "push", "push", "delete"),
      // One instance with more keys than the others, as a flood would be.
      group: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: fc.integer({ min: 1, max: 4 }) }),
      id: fc.integer({ min: 0, max: 7 }),
      advance: fc.oneof({ weight: 30, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.constant(SEC) }, { weight: 1, arbitrary: fc.constant(70 * SEC) }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), fc.integer({ min: 2, max: 12 }), (ops, max) => {
        const { store, clock } = clocked({ maxSemaphores: max });
        // The model: each held key's group, last update (order and time).
        const held = new Map<string, { group: string; order: number; at: number }>();
        let order = 0;
        let t = T0;
        const counts = { evicted: 0, fair: 0, refused: 0 };
        const sizes = () => {
          const n = new Map<string, number>();
          for (const h of held.values()) n.set(h.group, (n.get(h.group) ?? 0) + 1);
          return n;
        };
        for (const o of ops) {
          clock.now += o.advance;
          t += SEC;
          const group = `svc/i${o.group}`;
          const key = `${group}/s${o.id}`;
          if (o.kind === "delete") {
            expect(store.delete(key)).toBe(held.delete(key));
            continue;
          }
          const before = new Set(store.keys());
          const ok = store.push(key, sample(), t, SEC);
          const mine = held.get(key);
          if (mine !== undefined) {
            expect(ok).toBe(true);
            held.set(key, { ...mine, order: ++order, at: clock.now });
            continue;
          }
          const gone = [...before].filter((k) => !store.has(k));
          if (held.size < max) {
            expect([ok, gone]).toEqual([true, []]);
          } else {
            const oldest = [...held.entries()].sort((a, b) => a[1].order - b[1].order)[0];
            const n = sizes();
            const own = n.get(group) ?? 0;
            const share = Math.floor(max / (n.size + (own === 0 ? 1 : 0)));
            const most = Math.max(...n.values());
            if (clock.now - oldest[1].at >= DEFAULT_MIN_IDLE_MS) {
              expect([ok, gone]).toEqual([true, [oldest[0]]]);
              counts.evicted++;
            } else if (own >= share || most <= own + 1) {
              expect([ok, gone]).toEqual([false, []]);
              counts.refused++;
            } else {
              // One history went, from a group that held most, the least recently updated of it.
              expect(ok).toBe(true);
              expect(gone.length).toBe(1);
              const victim = held.get(gone[0])!;
              expect(n.get(victim.group)).toBe(most);
              const leastOfGroup = [...held.entries()].filter(([, h]) => h.group === victim.group).sort((a, b) => a[1].order - b[1].order)[0][0];
              expect(gone[0]).toBe(leastOfGroup);
              counts.evicted++;
              counts.fair++;
            }
            for (const k of gone) held.delete(k);
          }
          if (ok) held.set(key, { group, order: ++order, at: clock.now });
        }
        expect(new Set(store.keys())).toEqual(new Set(held.keys()));
        expect([store.evicted, store.evictedForFairness, store.refused]).toEqual([counts.evicted, counts.fair, counts.refused]);
      }),
      { numRuns: 400 },
    );
  });

  it("takes from instances holding most alike in turn, each's least recently updated first", () => {
    const { store, clock } = clocked({ maxSemaphores: 12 });
    for (const g of ["a", "b", "c"]) for (let i = 0; i < 4; i++) store.push(`svc/${g}/${i}`, sample(), T0, SEC);
    clock.now = 1000;
    // b's 0 is updated: its least recent is now its 1.
    store.push("svc/b/0", sample(), T0 + SEC, SEC);
    for (let i = 0; i < 3; i++) expect(store.push(`svc/new/${i}`, sample(), T0 + SEC, SEC)).toBe(true);
    expect(["svc/a/0", "svc/b/1", "svc/c/0"].some((k) => store.has(k))).toBe(false);
    expect(store.evictedForFairness).toBe(3);
    // Now four instances of 3 (share 3): the newcomer holds its share.
    expect(store.push("svc/new/3", sample(), T0 + SEC, SEC)).toBe(false);
  });

  it("one key more than it holds, updated round after round, rebuilds nothing: the held histories keep every sample", () => {
    const { store, clock } = clocked({ maxSemaphores: 100 });
    const keys = Array.from({ length: 101 }, (_, i) => `svc/i/${i}`);
    const rounds = 30;
    for (let r = 0; r < rounds; r++) {
      clock.now = r * SEC;
      for (const k of keys) store.push(k, sample(), T0 + r * SEC, SEC);
    }
    expect(store.size).toBe(100);
    expect(store.evicted).toBe(0);
    expect(store.refused).toBe(rounds);
    expect(store.has(keys[100])).toBe(false);
    for (const k of keys.slice(0, 100)) expect(store.get(k)?.window("1s", T0, T0 + rounds * SEC).t.length).toBe(rounds);
  });

  it("evicts, refuses and orders exactly as a least-recently-updated list would, through keys and handles alike", () => {
    // The reference: the list the store used to relink on every sample, least recently updated first.
    type Op = { kind: "push" | "handle" | "delete"; key: number; advance: number };
    const op = fc.record({ kind: fc.constantFrom<Op["kind"]>("push", "push", "handle", "delete"), key: fc.integer({ min: 0, max: 7 }), advance: fc.constantFrom(0, 0, 10 * SEC, 70 * SEC) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), fc.integer({ min: 1, max: 5 }), (ops, max) => {
        const { store, clock } = clocked({ maxSemaphores: max });
        const list: { key: string; at: number }[] = [];
        let evicted = 0;
        let refused = 0;
        const handles = new Map<string, ReturnType<HistoryStore["entry"]>>();
        let t = T0;
        for (const o of ops) {
          clock.now += o.advance;
          t += SEC;
          const key = `k${o.key}`;
          if (o.kind === "delete") {
            const i = list.findIndex((e) => e.key === key);
            expect(store.delete(key)).toBe(i >= 0);
            if (i >= 0) list.splice(i, 1);
            continue;
          }
          const i = list.findIndex((e) => e.key === key);
          if (i >= 0) list.push(...list.splice(i, 1));
          else if (list.length >= max && clock.now - list[0].at < DEFAULT_MIN_IDLE_MS) refused++;
          else {
            if (list.length >= max) {
              list.shift();
              evicted++;
            }
            list.push({ key, at: clock.now });
          }
          const held = list.some((e) => e.key === key);
          if (held) list[list.length - 1].at = clock.now;
          const handle = handles.get(key);
          const ok = o.kind === "handle" && handle !== undefined ? store.pushTo(handle, sample(), t, SEC) : store.push(key, sample(), t, SEC);
          expect(ok).toBe(held);
          handles.set(key, store.entry(key));
        }
        expect(store.keys()).toEqual(list.map((e) => e.key));
        expect([store.evicted, store.refused]).toEqual([evicted, refused]);
        // A handle to a history no longer held lets go of it.
        for (const [key, h] of handles) if (h !== undefined && !store.has(key)) expect([h.alive, h.history]).toEqual([false, null]);
      }),
      { numRuns: 500 },
    );
  });

  it("with no idle time required, is a plain least-recently-updated cache", () => {
    const { store } = clocked({ maxSemaphores: 2, minIdleMs: 0 });
    store.push("a", sample(), T0, SEC);
    store.push("b", sample(), T0, SEC);
    store.push("a", sample(), T0 + SEC, SEC);
    store.push("c", sample(), T0 + SEC, SEC);
    expect(store.keys()).toEqual(["a", "c"]);
    expect(store.evicted).toBe(1);
  });

  it("holds no more histories than its memory bound allows once they are all full", () => {
    const history = { secondPoints: 10, minutePoints: 5 };
    const full = historyFullBytes(history);
    const { store, clock } = clocked({ maxSemaphores: 1000, maxBytes: Math.floor(2.5 * full), history });
    expect(store.capacity).toBe(2);
    for (let i = 0; i < 10 * 60; i++) {
      clock.now = i * SEC;
      for (const k of ["a", "b", "c"]) store.push(k, sample(), T0 + i * SEC, SEC);
    }
    expect(store.keys()).toEqual(["a", "b"]);
    expect(store.bytes()).toBe(2 * full);
    expect(store.bytes()).toBeLessThanOrEqual(store.maxBytes);
    expect(() => new HistoryStore({ maxBytes: full - 1, history })).toThrow(/maxBytes/);
    // The defaults: 10,000 histories, within 1 GiB.
    const dflt = new HistoryStore();
    expect(dflt.maxSemaphores).toBe(10_000);
    expect(dflt.capacity * HISTORY_FULL_BYTES).toBeLessThanOrEqual(1024 ** 3);
    expect(dflt.capacity).toBeGreaterThan(3000);
  });

  it("reports what the histories hold, and a late sample through push()", () => {
    const store = new HistoryStore();
    expect(store.push("a", sample(), T0 + SEC, SEC)).toBe(true);
    expect(store.push("a", sample(), T0, SEC)).toBe(false);
    expect(store.bytes()).toBe(store.get("a")?.bytes());
  });

  it("warming a history (the hub reads it before storing a batch) changes neither it nor the recency order", () => {
    const { store, clock } = clocked({ maxSemaphores: 2, minIdleMs: 0 });
    for (let i = 1; i <= 70; i++) {
      clock.now = i;
      store.push("old", sample({ inUse: i % 5, acquired: i }), T0 + i * SEC, SEC);
      store.push("new", sample({ waiters: i % 3 }), T0 + i * SEC, SEC);
    }
    const before = (k: string) => [store.get(k)!.window("1s", 0, Infinity), store.get(k)!.window("1m", 0, Infinity)];
    const snapshot = { old: before("old"), new: before("new"), keys: store.keys() };
    const entry = store.entry("old")!;
    clock.now = 100;
    expect(Number.isFinite(store.warm(entry))).toBe(true);
    expect({ old: before("old"), new: before("new"), keys: store.keys() }).toEqual(snapshot);
    // Still the least recently updated: the next new key evicts it, not the other.
    store.push("third", sample(), T0, SEC);
    expect(store.has("old")).toBe(false);
    expect(store.has("new")).toBe(true);
    // A handle the store dropped warms nothing.
    expect(store.warm(entry)).toBe(0);
  });
});

describe("fleetWindow", () => {
  // Three replicas whose clocks and timers differ by tens to hundreds of ms.
  const offsets = [13, -40, 250];
  const waitHists: [number, number][][] = [[[60, 3]], [[70, 2], [90, 1]], [[0, 5], [120, 1]]];

  function fleet(): HistoryStore {
    const store = new HistoryStore();
    offsets.forEach((off, r) => {
      for (let s = 1; s <= 10; s++) {
        if (r === 2 && s === 7) continue; // replica 2 missed second 7
        store.push(
          `svc/i${r}/pool`,
          sample({
            cap: 10,
            inUse: r + 1,
            available: 9 - r,
            waiters: r,
            oldestWaitMs: 100 * (r + 1),
            acquired: 10 * (r + 1),
            waitMs: summaryOf(waitHists[r], 2 + r),
          }),
          T0 + s * SEC + off,
          SEC,
        );
      }
    });
    return store;
  }
  const keys = offsets.map((_, r) => `svc/i${r}/pool`);

  it("aligns replicas on the second, sums gauges and rates, and takes the oldest wait", () => {
    const w = fleet().fleetWindow([...keys, "svc/unknown/pool"], "1s", -Infinity, Infinity);
    expect(Array.from(w.t)).toEqual(Array.from({ length: 10 }, (_, i) => T0 + (i + 1) * SEC));
    expect(Array.from(w.replicas)).toEqual([3, 3, 3, 3, 3, 3, 2, 3, 3, 3]);
    expect(w.inUse[0]).toBe(6);
    expect(w.inUse[6]).toBe(3);
    expect(w.cap[0]).toBe(30);
    expect(w.available[0]).toBe(24);
    expect(w.waiters[0]).toBe(3);
    expect(w.oldestWaitMs[0]).toBe(300);
    expect(w.acquiredPerSec[0]).toBe(60);
    expect(w.acquiredPerSec[6]).toBe(30);
  });

  it("merges the replicas' histograms into a real fleet p99 at each second", () => {
    const w = fleet().fleetWindow(keys, "1s", -Infinity, Infinity);
    expect(w.waitCount[0]).toBe(3 + 3 + 6);
    expect(w.waitMax[0]).toBe(4);
    for (const [q, col] of [[0.5, w.waitP50], [0.9, w.waitP90], [0.99, w.waitP99]] as const) {
      expect(col[0]).toBeCloseTo(bruteQuantile(waitHists, 4, q), 6);
      expect(col[6]).toBeCloseTo(bruteQuantile(waitHists.slice(0, 2), 3, q), 6);
    }
  });

  it("merges minutes too, and one Summary over a range", () => {
    const store = fleet();
    for (const k of keys) store.push(k, sample(), T0 + MIN + SEC, SEC); // close minute 0
    const m = store.fleetWindow(keys, "1m", T0, T0);
    expect(m.length).toBe(1);
    expect(m.replicas[0]).toBe(3);
    expect(m.inUseMax[0]).toBe(6);
    expect(m.waitCount[0]).toBe(10 * 3 + 10 * 3 + 9 * 6);
    const all = [...Array<[number, number][]>(10).fill(waitHists[0]), ...Array<[number, number][]>(10).fill(waitHists[1]), ...Array<[number, number][]>(9).fill(waitHists[2])];
    expect(m.waitP99[0]).toBeCloseTo(bruteQuantile(all, 4, 0.99), 4);
    const s = store.fleetSummary(keys, T0, T0 + MIN - 1, "wait");
    expect(s.count).toBe(114);
    expect(s.p99).toBeCloseTo(bruteQuantile(all, 4, 0.99), 6);
    expect(s.p50).toBeCloseTo(bruteQuantile(all, 4, 0.5), 6);
  });

  it("counts a jittery replica's two points in one second once for gauges, fully for counts", () => {
    const store = new HistoryStore();
    store.push("a", sample({ inUse: 4, acquired: 5 }), T0 + 5 * SEC - 400, SEC);
    store.push("a", sample({ inUse: 7, acquired: 6 }), T0 + 5 * SEC + 300, SEC);
    store.push("b", sample({ inUse: 1, acquired: 1 }), T0 + 5 * SEC, SEC);
    const w = store.fleetWindow(["a", "b"], "1s", -Infinity, Infinity);
    expect(w.length).toBe(1);
    expect(w.replicas[0]).toBe(2);
    expect(w.inUse[0]).toBe(8);
    expect(w.acquiredPerSec[0]).toBe(12);
  });

  it("marks a fleet 1m window whose last minute is still open", () => {
    const w = fleet().fleetWindow(keys, "1m", -Infinity, Infinity);
    expect([w.length, w.partialLast]).toEqual([1, true]);
  });
});

describe("HistoryStore growth", () => {
  it("spreads its histories' ring growth over many samples, within the stated memory", () => {
    // 500 semaphores of one fleet, first sampled in the same second: how many grow at each sample.
    const n = 500;
    const store = new HistoryStore({ maxSemaphores: n, maxBytes: n * HISTORY_FULL_BYTES });
    const keys = Array.from({ length: n }, (_, i) => `svc-${i % 7}/inst-${i % 50}/sem-${i}`);
    const before = new Map<string, number>();
    let mostAtOnce = 0;
    for (let s = 1; s <= 300; s++) {
      let grew = 0;
      for (const k of keys) {
        store.push(k, sample(), T0 + s * SEC, SEC);
        const b = store.get(k)?.bytes() ?? 0;
        if (before.has(k) && b !== before.get(k)) grew++;
        before.set(k, b);
      }
      mostAtOnce = Math.max(mostAtOnce, grew);
    }
    // Taking a chunk only when full, all 500 would take one in the same second (every 60 samples).
    expect(mostAtOnce).toBeLessThanOrEqual(n / 8);
    // The stated figures hold: at most 54 KiB after 5 minutes, exactly the full figure once full.
    for (const k of keys) expect(store.get(k)?.bytes()).toBeLessThanOrEqual(54 * 1024);
    const one = keys[0];
    for (let m = 6; m <= 1450; m++) store.push(one, sample(), T0 + m * MIN, SEC);
    expect(store.get(one)?.bytes()).toBe(HISTORY_FULL_BYTES);
  });

  it("gives a dropped history's rows to the next: keys churning at the bound allocate nothing more, and a dropped history read later holds no rows", () => {
    const store = new HistoryStore({ maxSemaphores: 20, minIdleMs: 0 });
    const fill = (prefix: string, seconds: number) => {
      for (let s = 1; s <= seconds; s++) for (let i = 0; i < 20; i++) store.push(`${prefix}/${i}`, sample(), T0 + s * SEC, SEC);
    };
    fill("first", 200);
    const allocated = store.allocatedBytes();
    const kept = store.get("first/0");
    expect(kept?.latestT()).toBe(T0 + 200 * SEC);
    // Three more generations of 20 keys, each evicting the last.
    for (const gen of ["second", "third", "fourth"]) fill(gen, 200);
    expect(store.evicted).toBe(60);
    expect(store.allocatedBytes()).toBe(allocated);
    expect(store.bytes()).toBeLessThanOrEqual(allocated);
    // The evicted history's rows now belong to another: it reads none of them, and stores nothing.
    expect(kept?.latestT()).toBeNull();
    expect(kept?.window("1s", T0, T0 + 1000 * SEC).length).toBe(0);
    expect(kept?.window("1m", T0 - MIN, T0 + 1000 * SEC).length).toBe(0);
    expect(kept?.mergedSummary(T0, T0 + 1000 * SEC, "hold").count).toBe(0);
    expect(kept?.push(sample(), T0 + 1000 * SEC, SEC)).toBe(false);
    expect(store.get("fourth/0")?.window("1s", T0, T0 + 200 * SEC).length).toBe(200);
  });

  it("reads a history the same whether its storage was fresh or a dropped history's, its open minute included", () => {
    // A history on its own (storage of its own, never used) against one in a store that takes the
    // open minute and rows another history left mid-minute, with samples in it.
    const histArb = fc.uniqueArray(fc.integer({ min: 0, max: 255 }), { maxLength: 5 }).map((bs) => bs.sort((a, b) => a - b).map((b, i): [number, number] => [b, 1 + ((b + i) % 7)]));
    const stepArb = fc.record({ gapMs: fc.integer({ min: 1, max: 40 * SEC }), inUse: fc.integer({ min: 0, max: 10 }), waiters: fc.integer({ min: 0, max: 9 }), acquired: fc.integer({ min: 0, max: 500 }), timeouts: fc.integer({ min: 0, max: 9 }), wait: histArb, hold: histArb });
    const feed = (push: (s: ReturnType<typeof sample>, t: number) => void, steps: StepOf<typeof stepArb>[], from: number) => {
      let t = from;
      for (const st of steps) {
        t += st.gapMs;
        push(sample({ inUse: st.inUse, available: 10 - st.inUse, waiters: st.waiters, acquired: st.acquired, timeouts: st.timeouts, waitMs: summaryOf(st.wait, 500), holdMs: summaryOf(st.hold, 900) }), t);
      }
      return t;
    };
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), fc.array(stepArb, { minLength: 1, maxLength: 120 }), (before, steps) => {
        const history = { secondPoints: 30, minutePoints: 4 };
        const store = new HistoryStore({ maxSemaphores: 1, minIdleMs: 0, history });
        feed((s, t) => store.push("svc/a/old", s, t, SEC), before, T0 + 17 * SEC);
        const end = feed((s, t) => store.push("svc/b/new", s, t, SEC), steps, T0);
        expect(store.has("svc/a/old")).toBe(false);
        const own = new SemaphoreHistory(history);
        feed((s, t) => own.push(s, t, SEC), steps, T0);
        const reused = store.get("svc/b/new")!;
        for (const tier of ["1s", "1m"] as const) expect(reused.window(tier, -Infinity, Infinity)).toEqual(own.window(tier, -Infinity, Infinity));
        for (const kind of ["wait", "hold"] as const) {
          for (const from of [T0, end - 5 * MIN, end - 20 * SEC]) expect(reused.mergedSummary(from, end, kind)).toEqual(own.mergedSummary(from, end, kind));
        }
        expect(reused.bytes()).toBe(own.bytes());
      }),
      { numRuns: 200 },
    );
  });

  it("grows a replay's histories at the same samples as the live hub's (the spread comes from the key)", () => {
    const grows = (key: string) => {
      const store = new HistoryStore();
      const at: number[] = [];
      let last = 0;
      for (let s = 1; s <= 200; s++) {
        store.push(key, sample(), T0 + s * SEC, SEC);
        const b = store.bytes();
        if (b !== last && last !== 0) at.push(s);
        last = b;
      }
      return at;
    };
    expect(grows("svc/a/db")).toEqual(grows("svc/a/db"));
    expect(grows("svc/a/db").length).toBeGreaterThanOrEqual(1);
  });
});

describe("HistoryStore memory and the garbage collector", () => {
  /** Fills a store's rings in a process of its own (test/fixtures/history-gc.ts); its report. */
  function fill(mode: "long-lived" | "plain") {
    const run = spawnSync(process.execPath, ["--import", "tsx", "test/fixtures/history-gc.ts", mode, "25000"], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as { majors: number; bytes: number; held: number; external: number };
  }

  // A live hub's rings fill for 15 minutes, and V8 marked its whole heap for every 64 MB of them
  // though none could be freed: a long-lived store starts none of those.
  it("a long-lived store allocates its rings' memory without starting a major collection for it", () => {
    const plain = fill("plain");
    const lasting = fill("long-lived");
    expect(lasting.held).toBe(25_000);
    expect(lasting.bytes).toBe(plain.bytes);
    expect(lasting.bytes).toBeGreaterThan(200 * 2 ** 20);
    // What V8 weighs when it decides to mark: every byte of plain slabs counts as the isolate's
    // external memory, and it starts a mark-compact for each 64 MB of it; shared slabs do not.
    expect(plain.external - lasting.external).toBeGreaterThanOrEqual(0.95 * plain.bytes);
    // So fewer collections. (The same JS objects either way, and the collections for those vary
    // with the machine's load: by one or two here and there, never by the three or four plain
    // memory adds.)
    expect(plain.majors).toBeGreaterThan(lasting.majors);
  });
});
