import { describe, expect, it } from "vitest";
import { toUplotData } from "../../../shared/history/columnar-window.js";
import { SemaphoreHistory } from "../../../shared/history/semaphore-history.js";
import { T0, sample } from "./helpers.js";

const SEC = 1000;
const MIN = 60_000;

describe("toUplotData", () => {
  it("puts one null row in each gap longer than 2 × interval, and none elsewhere", () => {
    const h = new SemaphoreHistory();
    // every second for 5 s, a 2 s step (not a gap), a 5 s hole, then every second again
    for (const s of [0, 1, 2, 3, 4, 6, 11, 12]) h.push(sample({ inUse: s }), T0 + s * SEC, SEC);
    const [xs, inUse, waiters] = toUplotData(h.window("1s", -Infinity, Infinity), ["inUse", "waiters"]);
    expect(xs).toEqual([0, 1, 2, 3, 4, 6, 8.5, 11, 12].map((s) => T0 + s * SEC));
    expect(inUse).toEqual([0, 1, 2, 3, 4, 6, null, 11, 12]);
    expect(waiters).toEqual([0, 0, 0, 0, 0, 0, null, 0, 0]);
  });

  it("judges a gap by the later point's interval, so a slower agent is not broken into dots", () => {
    const h = new SemaphoreHistory();
    h.push(sample(), T0, SEC);
    h.push(sample(), T0 + 10 * SEC, 10 * SEC);
    h.push(sample(), T0 + 20 * SEC, 10 * SEC);
    const [xs] = toUplotData(h.window("1s", -Infinity, Infinity), []);
    expect(xs).toHaveLength(3);
  });

  it("breaks the 1m series where whole minutes are missing", () => {
    const h = new SemaphoreHistory();
    for (const m of [0, 1, 2, 5, 6]) h.push(sample({ inUse: m }), T0 + m * MIN + SEC, SEC);
    const [xs, inUse] = toUplotData(h.window("1m", -Infinity, Infinity), ["inUseMax"]);
    expect(inUse).toEqual([0, 1, 2, null, 5, 6]);
    expect(xs[3]).toBe(T0 + 3.5 * MIN);
  });

  it("gives an empty window as empty series", () => {
    expect(toUplotData(new SemaphoreHistory().window("1s", 0, 1), ["inUse"])).toEqual([[], []]);
  });
});
