// Case 1: uncontended acquire+release, ns per pair. Nobody ever waits, so this is the fast path a
// service pays on every guarded call when the semaphore is not the bottleneck.

import type { BenchCase } from "./case.js";
import { collectGarbage } from "./case.js";
import type { Contender } from "../contenders.js";

/**
 * A sequential loop holds at most one permit, so 10 (the contended case's cap, a typical pool size)
 * means nobody waits even if a release lands a tick late (p-limit frees its slot after the caller's
 * promise settles). Not larger: async-mutex's release scans every weight up to its current value
 * when nobody waits, so at 1024 permits it costs ~3 us and we would be measuring that quirk.
 */
const PERMITS = 10;

/** Per-contender iteration counts found at warm-up: a fast contender needs more ops to fill the target time. */
const iterationsFor = new Map<string, number>();

async function timeCycles(contender: Contender, iterations: number): Promise<number> {
  const lim = contender.make(PERMITS);
  try {
    collectGarbage();
    const t0 = process.hrtime.bigint();
    await lim.cycle(iterations);
    return Number(process.hrtime.bigint() - t0);
  } finally {
    await lim.close();
  }
}

export const uncontended: BenchCase = {
  id: "uncontended_ns",
  label: "uncontended ns/op",
  title: "uncontended acquire+release (ns/op, lower is better)",
  unit: "ns/op",
  better: "lower",
  timed: true,

  async warmup(contender, config) {
    // Grow the run until it lasts a quarter of the target; by then the loop has been optimized
    // (hundreds of thousands of iterations), and the rate from it sizes the timed runs.
    const targetNs = config.uncontendedTargetMs * 1e6;
    let n = 10_000;
    let ns = await timeCycles(contender, n);
    while (ns < targetNs / 4) {
      n *= 4;
      ns = await timeCycles(contender, n);
    }
    // 20% over the target so that a slightly faster round still lasts at least the target.
    iterationsFor.set(contender.name, Math.ceil((n * targetNs * 1.2) / ns));
  },

  async measure(contender) {
    const n = iterationsFor.get(contender.name);
    if (n === undefined) throw new Error(`uncontended: ${contender.name} was not warmed up`);
    return (await timeCycles(contender, n)) / n;
  },
};
