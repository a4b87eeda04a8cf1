// p-limit's and p-queue's concurrency moved by an adaptive limit, as a Semaphore's cap is: set to
// `initial` at instrument(), probed up while the work it runs answers fast, cut when that work
// slows, each change with its reason on the sample's limit block and on the handle.
import pLimit from "p-limit";
import PQueue from "p-queue";
import { describe, expect, it } from "vitest";
import { instrument, type InstrumentHandle } from "../../../agent/src/index.js";
import { sleep, tracked, uniqueName, until } from "../adapters/helpers.js";

interface Subject {
  handle: InstrumentHandle;
  concurrency(): number;
  /** Runs `task` through the instrumented path (p-limit: handle.limit; p-queue: queue.add). */
  run(task: () => Promise<void>): Promise<unknown>;
  /** Running now, as the library counts. */
  active(): number;
}

const subjects: Record<"p-limit" | "p-queue", (name: string) => Subject> = {
  "p-limit": (name) => {
    const limit = pLimit(3);
    const handle = tracked(instrument(limit, { name, permits: { adaptive: { min: 2, max: 30, initial: 4 } } }));
    return { handle, concurrency: () => limit.concurrency, run: (t) => handle.limit(t), active: () => limit.activeCount };
  },
  "p-queue": (name) => {
    const queue = new PQueue({ concurrency: 3 });
    const handle = tracked(instrument(queue, { name, permits: { adaptive: { min: 2, max: 30, initial: 4 } } }));
    return { handle, concurrency: () => queue.concurrency, run: (t) => queue.add(t), active: () => queue.pending };
  },
};

describe.each(["p-limit", "p-queue"] as const)("%s with permits: { adaptive }", (kind) => {
  it("starts at initial, probes up on fast work, is cut when the work slows, and reports each change with its reason", async () => {
    const s = subjects[kind](uniqueName(kind));
    expect(s.concurrency()).toBe(4);
    let holdMs = 2;
    let on = true;
    const caller = async (): Promise<void> => {
      while (on) {
        await s.run(() => sleep(holdMs));
      }
    };
    const callers = Array.from({ length: 40 }, () => caller());
    try {
      const up = await until(() => (s.concurrency() >= 8 ? s.concurrency() : false), "the limit probing up", 15_000);
      expect(up).toBeGreaterThanOrEqual(8);
      expect(s.handle.adaptiveLimit?.reason).toMatch(/probing up$/);
      const probed = s.handle.sample(Date.now());
      expect(probed.cap).toBe(s.concurrency());
      expect(probed.limit).toMatchObject({ min: 2, max: 30 });
      expect(probed.limit?.reason).toMatch(/^latency flat at/);

      // The work slows fifteen-fold: the limit is cut, and says why.
      const before = s.concurrency();
      holdMs = 30;
      await until(() => (s.handle.adaptiveLimit?.reason ?? "").startsWith("latency rose"), "a cut on rising latency", 15_000);
      const cut = s.handle.adaptiveLimit;
      expect(cut?.reason).toMatch(/^latency rose from [\d.]+ ms to [\d.]+ ms at in-flight \d+$/);
      expect(cut?.limit).toBeLessThan(cut?.from ?? 0);
      expect(s.concurrency()).toBeLessThan(before);
      expect(s.handle.sample(Date.now()).limit).toEqual(cut);
      // The library applies the cut: a lower concurrency starts nothing new until the running ones are under it.
      await until(() => s.active() <= s.concurrency(), "the running tasks under the cut", 5000);
    } finally {
      on = false;
      await Promise.all(callers);
    }
  }, 40_000);
});
