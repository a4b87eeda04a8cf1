import { describe, expect, it } from "vitest";
import { ChangeTracker, type Markable } from "../../../../main/hub/core/change-tracker.js";

const slot = (key: string): Markable => ({ key, changedMark: 0 });

describe("ChangeTracker", () => {
  it("gives each take() the semaphores changed since the one before, each once, however many changed before", () => {
    const tracker = new ChangeTracker();
    const slots = Array.from({ length: 50 }, (_, i) => slot(`k${i}`));
    for (const s of slots) tracker.changed(s);
    tracker.changed(slots[3]);
    tracker.key("registered");
    expect([...tracker.take().keys].sort()).toEqual([...slots.map((s) => s.key), "registered"].sort());
    // Fewer than last time, and some of the same: nothing of the last take's is left over.
    tracker.changed(slots[10]);
    tracker.changed(slots[49]);
    tracker.changed(slots[10]);
    expect([...tracker.take().keys].sort()).toEqual(["k10", "k49"]);
    expect(tracker.empty).toBe(true);
    expect(tracker.take().keys.size).toBe(0);
  });

  it("a take's keys hold while the next changes are marked, and cannot be read once taken again", () => {
    const tracker = new ChangeTracker();
    const [a, b, c] = ["a", "b", "c"].map(slot);
    tracker.changed(a);
    tracker.changed(b);
    const first = tracker.take();
    tracker.changed(c);
    tracker.changed(a);
    expect([...first.keys].sort()).toEqual(["a", "b"]);
    const second = tracker.take();
    tracker.changed(b);
    const third = tracker.take();
    expect(() => second.keys).toThrow(/after the next take/);
    expect([...third.keys]).toEqual(["b"]);
  });
});
