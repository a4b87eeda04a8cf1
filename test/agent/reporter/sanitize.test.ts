// What an adapter hands the agent is made valid before it leaves: checked against the very
// schemas the hub parses with.
import { describe, expect, it } from "vitest";
import { sanitizeEvent, sanitizeInfo, sanitizeSample, truncate } from "../../../agent/src/reporter/sanitize.js";
import { agentEventSchema, sampleSchema, semaphoreInfoSchema, type AgentEvent, type Sample, type SemaphoreInfo } from "../../../shared/protocol/index.js";

describe("sanitize", () => {
  it("cuts strings without splitting a surrogate pair", () => {
    expect(truncate("abc", 2)).toBe("ab");
    expect(truncate("a😀b", 2)).toBe("a");
    expect(truncate("short")).toBe("short");
  });

  it("makes a broken adapter's sample and description valid", () => {
    const sample = sanitizeSample(
      {
        id: "x", cap: NaN, inUse: -1, available: -2, waiters: 1.6, oldestWaitMs: Infinity, acquired: 3, released: 2, timeouts: -4,
        rejections: 0, aborts: 0, doubleReleases: 0, leaseExpiries: 0,
        waitMs: { count: 2, p50: 1, p90: 1, p99: 1, max: 1, hist: [[300, 1], [5, 2], [5, 1], [3, -1]] },
        holdMs: undefined as unknown as Sample["holdMs"],
        longestHoldMs: 5,
      } as Sample,
      "x",
    );
    expect(sampleSchema.safeParse(sample).success).toBe(true);
    expect(sample.available).toBe(-2);
    expect(sample.waitMs.hist).toEqual([[3, 0], [5, 3]]);
    const info = sanitizeInfo({ id: "i".repeat(400), name: "n", kind: "k", cap: 2, queue: "weird", maxWaiters: Infinity, acquireTimeoutMs: -1, leaseTimeoutMs: null, leakThresholdMs: 5, scope: "galaxy" } as unknown as SemaphoreInfo);
    expect(semaphoreInfoSchema.safeParse(info).success).toBe(true);
    expect(info).toMatchObject({ queue: "unknown", maxWaiters: null, acquireTimeoutMs: null, scope: "process" });
  });

  it("passes our own valid histograms through without copying", () => {
    const hist: [number, number][] = [[1, 2], [9, 4]];
    const s = sanitizeSample({ waitMs: { count: 6, p50: 0, p90: 0, p99: 0, max: 0, hist } } as Sample, "id");
    expect(s.waitMs.hist).toBe(hist);
  });

  it("makes any event detail JSON within the hub's limits", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const event = sanitizeEvent({
      t: Date.now(), id: "x", type: "invariant_violation", stack: "s".repeat(30_000),
      detail: { cyclic, when: new Date(0), big: 10n, fn: () => 1, sym: Symbol("s"), inf: -Infinity, available: -3, ["__proto__"]: 1 } as Record<string, unknown>,
    });
    expect(event).toBeDefined();
    expect(agentEventSchema.safeParse(event).success).toBe(true);
    expect(event?.stack?.length).toBe(16_384);
    expect(event?.detail).toMatchObject({ when: "1970-01-01T00:00:00.000Z", big: "10", fn: null, inf: null, available: -3 });
    expect(sanitizeEvent({ t: 1, id: "x", type: "nonsense" } as unknown as AgentEvent)).toBeUndefined();
  });
});
