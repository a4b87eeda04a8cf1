// A fleet entry's wait and hold percentiles are merged from each live member's latest interval as
// LatestSample holds it (numbers, no Summary built): what dashboards show for a fleet must be
// what merging the members' samples, as the agents sent them, gives.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fleetEntry, fleetFigures, type FleetMember } from "../../../shared/alerts/fleet.js";
import { BUCKETS, quantileOfSparse, type SparseHist, type Summary } from "../../../shared/histogram.js";
import { LatestSample } from "../../../shared/protocol/latest-sample.js";
import type { Sample } from "../../../shared/protocol/index.js";
import { sampleArb } from "../../fixtures/protocol-arbitraries.js";

/** The merge written out from its definition: counts add, the max is the largest, histograms add by bucket. */
function merged(summaries: readonly Summary[]): Summary {
  const dense = new Float64Array(BUCKETS);
  let count = 0;
  let max = 0;
  for (const s of summaries) {
    count += s.count;
    max = Math.max(max, s.max);
    for (const [b, c] of s.hist) dense[b] += c;
  }
  const hist: SparseHist = [];
  for (let b = 0; b < BUCKETS; b++) if (dense[b] > 0) hist.push([b, dense[b]]);
  return { count, p50: quantileOfSparse(hist, max, 0.5), p90: quantileOfSparse(hist, max, 0.9), p99: quantileOfSparse(hist, max, 0.99), max, hist };
}

// Few buckets and small counts as well: a percentile's rank then often falls exactly on a bucket's edge.
const smallHist = fc
  .uniqueArray(fc.tuple(fc.integer({ min: 0, max: 24 }), fc.integer({ min: 1, max: 3 })), { selector: ([b]) => b, maxLength: 6 })
  .map((pairs) => pairs.sort(([a], [b]) => a - b) as SparseHist);
const smallSummary = fc.tuple(smallHist, fc.integer({ min: 0, max: 40 })).map(([hist, max]): Summary => ({ count: hist.reduce((n, [, c]) => n + c, 0), p50: 0, p90: 0, p99: 0, max, hist }));
const sampleOf = fc.oneof(
  sampleArb(false),
  fc.tuple(sampleArb(false), smallSummary, smallSummary).map(([s, waitMs, holdMs]): Sample => ({ ...s, waitMs, holdMs })),
);

function member(instance: string, latest: LatestSample): FleetMember {
  return { instance, scope: "process", cap: latest.present ? latest.cap : 1, budget: undefined, inUse: 0, waiters: 0, summaries: latest.present ? latest : null };
}

describe("fleetEntry and fleetFigures", () => {
  it("merges the members' latest samples from their numbers as the samples themselves merge, fleet after fleet", () => {
    // Each member: the samples it was sent in turn (none: registered, never sampled), the last one counting.
    const fleet = fc.array(fc.array(sampleOf, { maxLength: 3 }), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(fc.array(fleet, { minLength: 1, maxLength: 3 }), (fleets) => {
        for (const sent of fleets) {
          const members: FleetMember[] = [];
          const latest: Sample[] = [];
          sent.forEach((samples, i) => {
            const held = new LatestSample(`db-${i}`);
            for (const s of samples) held.set(s);
            members.push(member(`i${i}`, held));
            const last = samples.at(-1);
            if (last !== undefined) latest.push(last);
          });
          const entry = fleetEntry("api", "db", members);
          expect(entry.waitMs).toEqual(merged(latest.map((s) => s.waitMs)));
          expect(entry.holdMs).toEqual(merged(latest.map((s) => s.holdMs)));
          // And as the Samples LatestSample builds for its cold readers.
          const built = members.map((m) => (m.summaries as LatestSample | null)?.get()).filter((s) => s != null);
          expect(entry.waitMs).toEqual(merged(built.map((s) => s.waitMs)));
          expect(entry.holdMs).toEqual(merged(built.map((s) => s.holdMs)));
          // What the fleet view shows: the same figures, the histograms never built.
          const { hist: _w, ...waitMs } = entry.waitMs;
          const { hist: _h, ...holdMs } = entry.holdMs;
          expect(JSON.stringify(fleetFigures("api", "db", members))).toBe(JSON.stringify({ ...entry, waitMs, holdMs }));
        }
      }),
      { numRuns: 200 },
    );
  });
});
