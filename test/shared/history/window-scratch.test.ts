import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WINDOW_COLUMNS, type ColumnarWindow } from "../../../shared/history/columnar-window.js";
import { SemaphoreHistory } from "../../../shared/history/semaphore-history.js";
import { WindowScratch } from "../../../shared/history/window-scratch.js";
import { T0, sample } from "./helpers.js";

/** The first `length` rows of every column, as plain arrays. */
function rows(w: ColumnarWindow): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const c of WINDOW_COLUMNS) out[c] = Array.from(w[c].subarray(0, w.length));
  return out;
}

describe("a reused window (WindowScratch)", () => {
  it("reads the same rows as a fresh window, whichever range came before it", () => {
    const h = new SemaphoreHistory({ secondPoints: 120, minutePoints: 30 });
    for (let i = 1; i <= 400; i++) {
      h.push(sample({ inUse: i % 7, available: 10 - (i % 7), waiters: i % 3, acquired: i, released: i - 1 }), T0 + i * 1000, 1000);
    }
    const scratch = new WindowScratch();
    const range = fc.tuple(fc.constantFrom<"1s" | "1m">("1s", "1m"), fc.integer({ min: -50, max: 450 }), fc.integer({ min: 0, max: 500 }));
    fc.assert(
      fc.property(fc.array(range, { minLength: 1, maxLength: 12 }), (reads) => {
        for (const [tier, from, span] of reads) {
          const fromT = T0 + from * 1000;
          const toT = fromT + span * 1000;
          const fresh = h.window(tier, fromT, toT);
          const reused = scratch.read(h.reader(tier), fromT, toT);
          expect(reused.length).toBe(fresh.length);
          expect(reused.tier).toBe(tier);
          expect(reused.partialLast).toBe(fresh.partialLast);
          expect(rows(reused)).toEqual(rows(fresh));
        }
      }),
      { numRuns: 100 },
    );
  });
});
