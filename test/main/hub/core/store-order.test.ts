// The store path finds each item's slot once (StoreJob: fitsIn or step) and then feeds every
// structure from the slots by position. Agents report their semaphores in the same order every
// interval, but whatever order and subset of ids a batch brings, a register in between included,
// each sample must land in its own semaphore's history and counter totals, never a neighbour's.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SAMPLE_COUNTERS } from "../../../../shared/protocol/index.js";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { semaphoreKey } from "../../../../shared/protocol/types.js";
import { hello, info, sample, T0 } from "../helpers.js";

const IDS = ["db", "cache", "http", "queue", "files"];
const ACQUIRED = SAMPLE_COUNTERS.indexOf("acquired");

const stepArb = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("samples" as const), ids: fc.shuffledSubarray(IDS, { minLength: 1 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("register" as const), ids: fc.subarray(IDS) }) },
);

describe("storing a batch", () => {
  it("puts each item in its own semaphore's history and totals, whatever the order and subset of ids", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), (steps) => {
        const core = new HubCore({ now: () => T0, version: "t", thresholds: {}, maxHistories: 100, forgetAfterMs: 0, recorder: undefined });
        const h = hello("a1", { service: "svc", instance: "i1" });
        const rec = core.hello(1, h);
        core.register(rec, { semaphores: IDS.slice(0, 3).map((id) => info(id)) });
        const sent = new Map<string, number[]>(IDS.map((id) => [id, []]));
        let seq = 0;
        let n = 0;
        for (const step of steps) {
          if (step.kind === "register") {
            core.register(rec, { semaphores: step.ids.map((id) => info(id)) });
            continue;
          }
          // Every sample's `acquired` is unique to it: a sample stored under another id shows.
          const items = step.ids.map((id) => {
            sent.get(id)?.push(++n);
            return sample(id, { acquired: n, released: n });
          });
          seq++;
          expect(core.samples(rec, { seq, t: T0 + seq * 1000, intervalMs: 1000, items })).toEqual({ ok: true, duplicate: false });
        }
        for (const id of IDS) {
          const key = semaphoreKey(h.service, h.instance, id);
          const expected = sent.get(id) ?? [];
          const stored = core.history.get(key)?.window("1s", -Infinity, Infinity).acquiredPerSec ?? [];
          expect([...stored]).toEqual(expected);
          expect(core.totals.get(key)?.[ACQUIRED] ?? 0).toBe(expected.reduce((a, b) => a + b, 0));
        }
      }),
      { numRuns: 200 },
    );
  });
});
