// A replica set over its budget: every "search" replica has a "search-backend" client of cap 10,
// and the backend team gave the whole service a budget of 25 concurrent requests. One or two
// replicas are fine; from the third on the caps add up past 25 (rule `over_budget`: 4 × 10 = 40
// > 25). Now and then a config rollback takes each replica to cap 6 (4 × 6 = 24, within budget:
// resolved) and the next deploy puts 10 back.
import { Semaphore } from "../../src/index.js";
import { arrivals, latency, swell, type Scenario, type ScenarioContext } from "../runtime.js";

export const OVER_BUDGET = {
  name: "search-backend",
  permits: 10,
  budget: 25,
  rolledBackPermits: 6,
  ratePerSec: 4,
  /** Cap 10 for overMs, then 6 for rolledBackMs, and again (both divided by speed). */
  overMs: 150_000,
  rolledBackMs: 45_000,
} as const;

export function start(ctx: ScenarioContext): Scenario {
  const { timers, speed } = ctx;
  const backend = new Semaphore({ name: OVER_BUDGET.name, permits: OVER_BUDGET.permits, budget: OVER_BUDGET.budget, acquireTimeoutMs: 1000 });

  async function search(): Promise<void> {
    try {
      await backend.use(async () => {
        await timers.sleep(latency(35, 0.5, 5, 400));
      });
    } catch {
      // A timed-out search answers from the cache; it does not happen at this load.
    }
  }
  // Replicas see the same daily swell, each a little out of step.
  const phase = Math.random();
  arrivals(timers, () => OVER_BUDGET.ratePerSec * swell(90_000, 0.3, phase), search);

  const deploy = (): void => {
    backend.resize(OVER_BUDGET.permits);
    timers.after(OVER_BUDGET.overMs / speed, rollback);
  };
  const rollback = (): void => {
    ctx.log(`config rollback: ${OVER_BUDGET.name} cap ${OVER_BUDGET.rolledBackPermits}`);
    backend.resize(OVER_BUDGET.rolledBackPermits);
    timers.after(OVER_BUDGET.rolledBackMs / speed, deploy);
  };
  timers.after(OVER_BUDGET.overMs / speed, rollback);
  return { stop: () => timers.stop() };
}
