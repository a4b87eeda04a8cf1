import { describe, expect, it } from "vitest";
import { RecencyTable } from "../../../shared/history/recency-table.js";

describe("RecencyTable", () => {
  it("keeps each index's time and stamp exactly, past the first allocation and past small integers", () => {
    const table = new RecencyTable();
    const at = (i: number) => 1_733_000_000_000.5 + i * 1000;
    // 2^31 and beyond: stamps a hub reaches after days at 10,000 samples a second.
    const stamp = (i: number) => 2 ** 31 + i;
    const ids = Array.from({ length: 300 }, (_, i) => table.take(at(i), stamp(i)));
    expect(new Set(ids).size).toBe(300);
    for (let i = 0; i < 300; i++) expect([table.updatedAt(ids[i]), table.stamp(ids[i])]).toEqual([at(i), stamp(i)]);
    table.set(ids[7], at(1000), stamp(1000));
    expect([table.updatedAt(ids[7]), table.stamp(ids[7])]).toEqual([at(1000), stamp(1000)]);
    expect(table.updatedAt(ids[8])).toBe(at(8));
  });

  it("hands a given-back index out again, with the new entry's numbers, before a new one", () => {
    const table = new RecencyTable();
    const a = table.take(1, 1);
    const b = table.take(2, 2);
    table.give(a);
    const c = table.take(3, 3);
    expect(c).toBe(a);
    expect([table.updatedAt(c), table.stamp(c)]).toEqual([3, 3]);
    expect([table.updatedAt(b), table.stamp(b)]).toEqual([2, 2]);
    expect(table.take(4, 4)).not.toBe(b);
  });
});
