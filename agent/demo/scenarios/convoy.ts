// A convoy: inventory's "inventory-api" client, cap 2, in front of a slow downstream (~400 ms a
// call). A trickle of lookups keeps it well under its cap. Then a cache flush: for 8 s every
// page view misses and looks up stock, ~50 lookups against a client that completes 5 a second.
// Two run, the rest queue: for ~10 s the pool is full, callers are waiting, and each waits many
// times what a call takes (rule `convoy`: inUse ≥ cap, waiters ≥ 1 and wait p99 ≥ 2 × hold p50
// for ≥ 5 s; raised ~7 s into the surge). The queue drains, `waiters = 0` for 5 s resolves it,
// and the next flush starts it again.
//
// The surge is spread over 8 s rather than fired at once on purpose: 50 callers at once would
// leave the last ones waiting 10 s, which is also `starvation` (oldest wait ≥ 5 s), and a FIFO
// queue that merely is long is not starving anyone. Spread, the oldest waiter stays under ~4 s
// (a simulation of this scenario against both rules: convoy in 100 %, starvation in 0.2 % of runs).
import { Semaphore } from "../../src/index.js";
import { arrivals, latency, type Scenario, type ScenarioContext } from "../runtime.js";

export const CONVOY = {
  name: "inventory-api",
  permits: 2,
  trickleRatePerSec: 1,
  /** Median call time of the downstream. */
  callP50Ms: 400,
  /** Lookups in one surge, and how long the surge lasts (not divided by speed: the rule wants ≥ 5 s). */
  surgeSize: 48,
  surgeMs: 8000,
  /** The first surge, then one every periodMs ± 15 % (divided by speed). */
  firstSurgeMs: 2000,
  surgePeriodMs: 30_000,
} as const;

export function start(ctx: ScenarioContext): Scenario {
  const { timers, speed } = ctx;
  const api = new Semaphore({ name: CONVOY.name, permits: CONVOY.permits });

  async function stockLevel(sku: number): Promise<number> {
    return api.use(async () => {
      await timers.sleep(latency(CONVOY.callP50Ms, 0.12, 250, 900));
      return sku % 97;
    });
  }

  arrivals(timers, () => CONVOY.trickleRatePerSec, async () => {
    await stockLevel(Math.floor(Math.random() * 10_000));
  });

  // Never closer than the surge and its drain take, or a sped-up demo would pile surges up.
  const period = Math.max(CONVOY.surgePeriodMs / speed, 2.5 * CONVOY.surgeMs);
  timers.every(CONVOY.firstSurgeMs / speed, period, 0.15, () => {
    ctx.log(`cache flush: ${CONVOY.surgeSize} stock lookups within ${CONVOY.surgeMs / 1000} s`);
    const gap = CONVOY.surgeMs / CONVOY.surgeSize;
    for (let i = 0; i < CONVOY.surgeSize; i++) timers.after((i + Math.random()) * gap, () => void stockLevel(i));
  });
  return { stop: () => timers.stop() };
}
