// Load shedding: inventory's "shipping-quotes" client, cap 4, acquireTimeoutMs 250. Normally a
// quote takes ~100 ms and the client is mostly idle. Now and then the carrier's API browns out
// for 15 s (~1.4 s a quote): the 4 permits finish ~3 a second against ~5 requests/s, callers
// queue past their 250 ms and are shed (rule `timeouts`: ≥ 5 % of ≥ 20 attempts over 10 s;
// here ~40 % of ~50). The brownout ends, the ratio falls, and the alert resolves 10 s after it is clear.
import { Semaphore, SemaphoreTimeoutError } from "../../src/index.js";
import { arrivals, latency, type Scenario, type ScenarioContext } from "../runtime.js";

export const TIMEOUTS = {
  name: "shipping-quotes",
  permits: 4,
  acquireTimeoutMs: 250,
  ratePerSec: 5,
  normalP50Ms: 100,
  brownoutP50Ms: 1400,
  /** How long a brownout lasts (not divided by speed: the rule measures over 10 s). */
  brownoutMs: 15_000,
  /** The first brownout, then one every periodMs ± 15 % (divided by speed). */
  firstBrownoutMs: 5000,
  brownoutPeriodMs: 60_000,
} as const;

export function start(ctx: ScenarioContext): Scenario {
  const { timers, speed } = ctx;
  const quotes = new Semaphore({ name: TIMEOUTS.name, permits: TIMEOUTS.permits, acquireTimeoutMs: TIMEOUTS.acquireTimeoutMs });
  let brownout = false;
  let shed = 0;

  async function quote(): Promise<void> {
    try {
      await quotes.use(async () => {
        await timers.sleep(latency(brownout ? TIMEOUTS.brownoutP50Ms : TIMEOUTS.normalP50Ms, 0.25));
      });
    } catch (err) {
      // The caller falls back to a flat-rate estimate: the request still succeeds, degraded.
      if (err instanceof SemaphoreTimeoutError) shed++;
      else throw err;
    }
  }

  arrivals(timers, () => TIMEOUTS.ratePerSec, quote);
  timers.every(TIMEOUTS.firstBrownoutMs / speed, TIMEOUTS.brownoutPeriodMs / speed, 0.15, () => {
    if (brownout) return;
    brownout = true;
    shed = 0;
    ctx.log(`carrier API brownout for ${TIMEOUTS.brownoutMs / 1000} s`);
    timers.after(TIMEOUTS.brownoutMs, () => {
      brownout = false;
      ctx.log(`carrier API recovered; ${shed} quote requests shed`);
    });
  });
  return { stop: () => timers.stop() };
}
