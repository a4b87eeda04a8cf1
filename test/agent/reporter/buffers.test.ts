// The bounded structures the agent's memory bound rests on, and the packet splitter.
import { describe, expect, it } from "vitest";
import { BatchBuffer, Ring } from "../../../agent/src/reporter/batch-buffer.js";
import { PACKET_BUDGET_BYTES, splitIntoGroups } from "../../../agent/src/reporter/packet-split.js";

describe("BatchBuffer", () => {
  it("drops the oldest when over its count, and returns what it dropped", () => {
    const b = new BatchBuffer<string>(3, 1_000_000);
    for (let i = 0; i < 3; i++) expect(b.push(i, `p${i}`, 10)).toEqual([]);
    const evicted = b.push(3, "p3", 10);
    expect(evicted.map((e) => e.key)).toEqual([0]);
    expect([...b.values()].map((e) => e.key)).toEqual([1, 2, 3]);
    expect(b.bytes).toBe(30);
  });

  it("drops the oldest when over its bytes, but always keeps the newest", () => {
    const b = new BatchBuffer<string>(100, 100);
    b.push(0, "a", 40);
    b.push(1, "b", 40);
    expect(b.push(2, "c", 40).map((e) => e.key)).toEqual([0]);
    expect(b.push(3, "huge", 500).map((e) => e.key)).toEqual([1, 2]);
    expect(b.size).toBe(1);
    expect(b.bytes).toBe(500);
  });

  it("removes acked messages by key, once", () => {
    const b = new BatchBuffer<string>(10, 1000);
    b.push(5, "x", 10);
    b.push(6, "y", 10);
    expect(b.remove(5)?.payload).toBe("x");
    expect(b.remove(5)).toBeUndefined();
    expect(b.size).toBe(1);
    expect(b.bytes).toBe(10);
  });
});

describe("Ring", () => {
  it("keeps the newest `capacity` items, oldest first, and says when it overwrote one", () => {
    const r = new Ring<number>(3);
    expect([1, 2, 3].map((n) => r.push(n))).toEqual([false, false, false]);
    expect(r.push(4)).toBe(true);
    expect(r.drain()).toEqual([2, 3, 4]);
    expect(r.size).toBe(0);
    r.push(9);
    expect(r.drain()).toEqual([9]);
  });
});

describe("splitIntoGroups", () => {
  it("keeps order and fits each group to the budget and the item cap", () => {
    const items = Array.from({ length: 25 }, (_, i) => i);
    const sizes = items.map(() => 10);
    const { groups, oversize } = splitIntoGroups(items, sizes, 20, 4, 100);
    expect(oversize).toEqual([]);
    expect(groups.flatMap((g) => g.items)).toEqual(items);
    for (const g of groups) {
      expect(g.items.length).toBeLessThanOrEqual(4);
      expect(g.bytes).toBe(20 + g.items.length * 10 + (g.items.length - 1));
      expect(g.bytes).toBeLessThanOrEqual(100);
    }
  });

  it("sets apart an item too big for any packet, and gives one empty group for no items", () => {
    const { groups, oversize } = splitIntoGroups(["a", "big", "b"], [5, 1000, 5], 20, 10, 100);
    expect(oversize).toEqual(["big"]);
    expect(groups.map((g) => g.items)).toEqual([["a", "b"]]);
    expect(splitIntoGroups([], [], 20, 10).groups).toEqual([{ items: [], bytes: 20 }]);
  });

  it("budgets under both 1 MiB and socket.io's default 10^6 bytes", () => {
    expect(PACKET_BUDGET_BYTES).toBeLessThan(1_000_000);
    expect(PACKET_BUDGET_BYTES).toBeGreaterThan(900_000);
  });
});
