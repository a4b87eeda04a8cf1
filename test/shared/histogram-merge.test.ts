// mergeSparse reuses one dense array across calls: each merge must still see only its own
// histograms, exactly as a fresh array per call would give.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BUCKETS, mergeSparse, type SparseHist } from "../../shared/histogram.js";

function freshMerge(hists: readonly SparseHist[]): SparseHist {
  const dense = new Float64Array(BUCKETS);
  for (const h of hists) for (const [b, c] of h) dense[b] += c;
  const out: SparseHist = [];
  for (let b = 0; b < BUCKETS; b++) if (dense[b] > 0) out.push([b, dense[b]]);
  return out;
}

const histArb = fc
  .uniqueArray(fc.tuple(fc.nat(BUCKETS - 1), fc.integer({ min: 1, max: 1000 })), { selector: ([b]) => b, maxLength: 12 })
  .map((pairs) => pairs.sort(([a], [b]) => a - b) as SparseHist);

describe("mergeSparse", () => {
  it("gives what a fresh dense array per merge gives, merge after merge", () => {
    fc.assert(
      fc.property(fc.array(fc.array(histArb, { maxLength: 5 }), { minLength: 1, maxLength: 8 }), (merges) => {
        for (const hists of merges) expect(mergeSparse(hists)).toEqual(freshMerge(hists));
      }),
      { numRuns: 300 },
    );
  });
});
