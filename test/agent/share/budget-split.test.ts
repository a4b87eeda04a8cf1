// The split every replica computes alone, and when a replica may take a larger share: the sum
// equals the budget whatever order replicas list the members in, and a share never grows before
// the larger answer has held for a whole lease period, nor past the smallest answer in it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GrowGate } from "../../../agent/src/share/grow-gate.js";
import { shareOf, splitBudget } from "../../../agent/src/share/split.js";

const memberList = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 40 });

describe("splitBudget", () => {
  it("adds up to the budget, shares differ by at most one, and the order members are listed in does not matter", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), memberList, fc.integer(), (budget, members, seed) => {
        const split = splitBudget(budget, members);
        const shares = [...split.values()];
        expect(shares.reduce((a, b) => a + b, 0)).toBe(budget);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
        const shuffled = [...members].sort(() => (seed = (seed * 1103515245 + 12345) | 0) & 1 ? 1 : -1);
        expect(splitBudget(budget, shuffled)).toEqual(split);
        if (members.length <= budget) for (const m of members) expect(shareOf(budget, shuffled, m)).toBe(split.get(m));
      }),
    );
  });

  it("gives the issue's figures: 20 over 4 is 5 each, over 3 is 7, 7, 6, over 6 is 4, 4, 3, 3, 3, 3", () => {
    expect([...splitBudget(20, ["d", "b", "a", "c"]).values()]).toEqual([5, 5, 5, 5]);
    expect([...splitBudget(20, ["c", "a", "b"]).entries()]).toEqual([["a", 7], ["b", 7], ["c", 6]]);
    expect([...splitBudget(20, ["f", "e", "d", "c", "b", "a"]).values()]).toEqual([4, 4, 3, 3, 3, 3]);
  });

  it("with more replicas than budget: exactly `budget` hold 1 in any turn, and every replica holds one within n / budget turns (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), memberList, fc.integer({ min: 0, max: 2 ** 40 }), (budget, members, turn) => {
        fc.pre(members.length > budget);
        const n = members.length;
        const heldAt = (t: number) => members.map((m) => shareOf(budget, members, m, t));
        const now = heldAt(turn);
        expect(now.every((x) => x === 0 || x === 1)).toBe(true);
        expect(now.reduce((a, b) => a + b, 0)).toBe(budget);
        const everHeld = new Set<string>();
        for (let t = turn; t < turn + Math.ceil(n / budget); t++) heldAt(t).forEach((x, i) => x === 1 && everHeld.add(members[i]));
        expect(everHeld.size).toBe(n);
      }),
    );
  });

  it("a replica not yet in the member list counts itself in", () => {
    expect(shareOf(2, ["a", "b"], "c", 0) + shareOf(2, ["a", "b", "c"], "a", 0) + shareOf(2, ["a", "b", "c"], "b", 0)).toBe(2);
    expect([0, 1, 2].map((t) => shareOf(2, ["a", "b"], "c", t))).toContain(1);
  });
});

describe("GrowGate", () => {
  const HOLD = 1000;
  it("shrinks at once and grows only after the larger answer has held for the whole period", () => {
    const g = new GrowGate(HOLD);
    expect(g.next(5, 3, 0)).toBe(3);
    expect(g.next(3, 7, 100)).toBe(3);
    expect(g.next(3, 7, 600)).toBe(3);
    expect(g.waiting).toBe(true);
    expect(g.next(3, 7, 1100)).toBe(7);
    expect(g.waiting).toBe(false);
  });

  it("starts the wait again after a failed heartbeat", () => {
    const g = new GrowGate(HOLD);
    g.next(3, 7, 0);
    g.reset();
    expect(g.next(3, 7, 1200)).toBe(3);
    expect(g.next(3, 7, 2200)).toBe(7);
  });

  it("never grows past an answer of the last period, nor before the period is covered (property)", () => {
    const answers = fc.array(fc.record({ dt: fc.integer({ min: 1, max: 700 }), target: fc.integer({ min: 1, max: 30 }), fail: fc.boolean() }), { maxLength: 60 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), answers, (start, seq) => {
        const g = new GrowGate(HOLD);
        let cap = start;
        let t = 0;
        const seen: { t: number; target: number }[] = [];
        let failedAt = -Infinity;
        for (const a of seq) {
          t += a.dt;
          if (a.fail) {
            g.reset();
            failedAt = t;
            continue;
          }
          seen.push({ t, target: a.target });
          const next = g.next(cap, a.target, t);
          if (next > cap) {
            // Every answer in the period before this one was at least the new cap, and the period
            // began after the last failure and at or after an answer.
            const window = seen.filter((s) => s.t >= t - HOLD);
            for (const s of window) expect(s.target).toBeGreaterThanOrEqual(next);
            expect(failedAt).toBeLessThan(t - HOLD);
            expect(seen.some((s) => s.t <= t - HOLD)).toBe(true);
          }
          if (a.target <= cap) expect(next).toBe(a.target);
          expect(next).toBeLessThanOrEqual(Math.max(cap, a.target));
          cap = next;
        }
      }),
    );
  });
});
