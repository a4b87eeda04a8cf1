// The copy a replay's restore points are made of (state-copy.ts): independent of the original,
// with its classes, shared references, cycles and views over one buffer kept, packed (in chunks shared with an earlier copy) and unpacked
// back to the same values, and its closures pointed at a fresh object's state.
import { describe, expect, it } from "vitest";
import { BufferRecycler } from "../../../../main/hub/recording/buffer-recycler.js";
import { CHUNK_BYTES, pairClosures, StateCopy, type PackedBuffer } from "../../../../main/hub/recording/state-copy.js";

class Ring {
  readonly buffer = new ArrayBuffer(64 * 1024);
  readonly a = new Float64Array(this.buffer, 0, 4096);
  readonly b = new Uint32Array(this.buffer, 32 * 1024, 8192);
  readonly byKey = new Map<string, { n: number; ring?: Ring }>();
  readonly seen = new Set<string>();
  count = 0;
  readonly onChange = () => this.count++;
  total(): number {
    return this.a.reduce((s, x) => s + x, 0) + this.b.reduce((s, x) => s + x, 0);
  }
}

function filled(): Ring {
  const r = new Ring();
  for (let i = 0; i < 4096; i++) r.a[i] = i % 7;
  for (let i = 0; i < 8192; i++) r.b[i] = i % 5;
  r.byKey.set("x", { n: 1, ring: r });
  r.seen.add("x");
  return r;
}

describe("state copy", () => {
  it("copies classes, maps, sets, cycles and views over one buffer, independent of the original", () => {
    const r = filled();
    const copy = new StateCopy().copy(r);
    expect(copy).toBeInstanceOf(Ring);
    expect(copy.total()).toBe(r.total());
    expect(copy.byKey.get("x")?.ring).toBe(copy);
    // The two views still share one (new) buffer.
    expect(copy.a.buffer).toBe(copy.buffer);
    expect(copy.b.buffer).toBe(copy.buffer);
    expect(copy.buffer).not.toBe(r.buffer);
    copy.a[0] = 100;
    copy.byKey.set("y", { n: 2 });
    copy.seen.add("y");
    expect(r.a[0]).toBe(0);
    expect([...r.byKey.keys()]).toEqual(["x"]);
    expect([...r.seen]).toEqual(["x"]);
  });

  it("packs its buffers in chunks shared with an earlier copy's where unchanged, and unpacks them to the same values", () => {
    const r = filled();
    const base = new WeakMap<ArrayBufferLike, PackedBuffer>();
    const first = new StateCopy(undefined, true, base);
    const kept = first.copy(r);
    expect(first.packs).toHaveLength(1);
    r.a[1] = 999;
    const second = new StateCopy(undefined, true, base);
    const later = second.copy(r);
    // One chunk changed: the second copy holds that one alone and shares the rest.
    expect(second.packs[0].fresh).toBe(CHUNK_BYTES);
    expect(second.packs[0].chunks.filter((c, i) => c !== first.packs[0].chunks[i])).toHaveLength(1);
    r.a[2] = 5;
    const back = new StateCopy().copy(kept);
    expect(back.a[1]).toBe(1);
    expect(back.b.buffer).toBe(back.buffer);
    expect(back.total()).toBe(filled().total());
    const backLater = new StateCopy().copy(later);
    expect(backLater.a[1]).toBe(999);
    expect(backLater.a[2]).toBe(filled().a[2]);
    // Zeros are held as nothing, and come back as zeros.
    const empty = new StateCopy(undefined, true);
    const blank = empty.copy(new Ring());
    expect(empty.packs[0].fresh).toBe(0);
    expect(empty.packs[0].chunks.every((c) => c === null)).toBe(true);
    expect(new StateCopy().copy(blank).total()).toBe(0);
  });

  it("points a copy's closures at the object it is copied into, and refuses what it cannot copy", () => {
    const saved = filled();
    const fresh = new Ring();
    const restored = new StateCopy(pairClosures(saved, fresh)).into(fresh, saved);
    restored.onChange();
    expect(restored.count).toBe(1);
    expect(saved.count).toBe(0);
    expect(() => new StateCopy().copy({ w: new WeakMap() })).toThrow(/cannot copy a WeakMap/);
  });

  it("writes a copy over the buffers of a copy done with, to exactly the saved values, zeros included", () => {
    const r = filled();
    r.a.fill(0, 0, 1024);
    const kept = new StateCopy(undefined, true).copy(r);
    const recycler = new BufferRecycler();
    const first = new StateCopy(undefined, false, undefined, recycler);
    const used = first.copy(filled());
    recycler.own(used, first.made);
    // Its buffer (every byte non-zero somewhere) is done with: the next copy is written over it.
    recycler.give(used);
    expect(recycler.bytes).toBe(64 * 1024);
    const again = new StateCopy(undefined, false, undefined, recycler);
    const back = again.copy(kept);
    expect(back.buffer).toBe(used.buffer);
    expect(recycler.bytes).toBe(0);
    expect([...back.a]).toEqual([...r.a]);
    expect([...back.b]).toEqual([...r.b]);
    // Without a list of its own, a core's buffers are found through it; frozen parts are passed over.
    const loose = new BufferRecycler();
    loose.give({ rings: [filled(), filled()], frozen: Object.freeze({ r: filled() }) });
    expect(loose.bytes).toBe(2 * 64 * 1024);
  });

  it("writes a copy's class instances over those of a core done with that have the same fields, as a fresh copy would be", () => {
    const saved = new StateCopy(undefined, true).copy(filled());
    const recycler = new BufferRecycler();
    const done = filled();
    done.count = 7;
    const nested = filled();
    done.byKey.set("z", { n: 3, ring: nested });
    const odd = Object.assign(filled(), { extra: 1 });
    // Found through the cores given (their roots aside), each held once however often given.
    recycler.give({ rings: [done, done, odd] });
    recycler.give({ ring: done });
    expect(recycler.objects).toBe(3);
    const copy = new StateCopy(undefined, false, undefined, recycler);
    const back = copy.copy(saved);
    expect(back).toBeInstanceOf(Ring);
    expect(back.byKey.get("x")?.ring).toBe(back);
    expect(back.count).toBe(0);
    expect(back.total()).toBe(filled().total());
    expect(back).toEqual(new StateCopy().copy(saved));
    // An instance with other fields is not written over: its extra field would stay.
    expect(Object.keys(back)).toEqual(Object.keys(new Ring()));
    expect([done, nested]).toContain(back);
    expect(copy.instances).toContain(back);
    // The copy's instances, given back with it, serve the next copy.
    recycler.own(back, copy.made, copy.instances);
    recycler.give(back);
    const again = new StateCopy(undefined, false, undefined, recycler).copy(saved);
    expect(again).toBe(back);
    expect(again).toEqual(new StateCopy().copy(saved));
  });
});
