// SampleArena (main/hub/core/sample-arena.ts) holds deferred batches' items as numbers; what it gives
// back is what the hub stores. It must be each item exactly, keys in the wire's order, however
// many batches were packed before and whichever was unpacked last.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SampleArena } from "../../../../main/hub/core/sample-arena.js";
import type { Sample } from "../../../../shared/protocol/index.js";
import { sampleArb } from "../../../fixtures/protocol-arbitraries.js";

const header = (seq: number) => ({ seq, t: 1_700_000_000_000.25 + seq, intervalMs: 1000 });
const ids = (items: readonly Sample[]) => items.map((s) => ({ id: s.id }));

describe("SampleArena", () => {
  it("gives back every packed batch exactly, in any order, until it is reset", () => {
    const batches = fc.array(fc.array(sampleArb(false), { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(batches, fc.func(fc.integer()), (list, order) => {
        const arena = new SampleArena();
        // Copies of each batch (-0 included, which JSON would drop): what the arena gives back must
        // equal them whatever happens to the packets; the JSON text checks the keys' order.
        const copies = list.map((items) => structuredClone(items));
        const wire = list.map((items) => JSON.stringify(items));
        const at = list.map((items) => arena.pack(items));
        const reads = list.map((_, i) => i).sort((a, b) => order(a) - order(b) || a - b);
        for (const i of [...reads, ...reads]) {
          const got = arena.unpack(header(i), at[i], ids(list[i]));
          expect({ seq: got.seq, t: got.t, intervalMs: got.intervalMs }).toEqual(header(i));
          expect(JSON.stringify(got.items)).toBe(wire[i]);
          expect(got.items).toEqual(copies[i]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("reuses its objects from one unpack to the next, and packs afresh after a reset", () => {
    const arena = new SampleArena();
    const [a, b] = fc.sample(fc.array(sampleArb(false), { minLength: 3, maxLength: 3 }), { numRuns: 2, seed: 7 });
    const first = arena.unpack(header(1), arena.pack(a), ids(a));
    const item = first.items[0];
    const atB = arena.pack(b);
    const second = arena.unpack(header(2), atB, ids(b));
    expect(second).toBe(first);
    expect(second.items[0]).toBe(item);
    expect(second.items).toEqual(b);
    arena.reset();
    expect(arena.pack(a)).toBe(0);
    expect(arena.unpack(header(3), 0, ids(a)).items).toEqual(a);
  });

  it("packs no batch with a global semaphore's part", () => {
    const local = fc.sample(sampleArb(false), { numRuns: 2, seed: 3 });
    const global: Sample = { ...local[0], global: { inUse: 3, holders: ["h1"], own: [] } };
    expect(SampleArena.packable(local)).toBe(true);
    expect(SampleArena.packable([local[1], global])).toBe(false);
  });
});
