// The healthy baseline: checkout's "db" pool, cap 10, under steady load well below its cap.
// ~8 queries/s swelling ±40 % over a minute, each holding a connection for a log-normal
// 4–40 ms with the odd slow query: a few permits in use, no waiters, nothing to alert on.
import { Semaphore } from "../../src/index.js";
import { arrivals, latency, swell, type Scenario, type ScenarioContext } from "../runtime.js";

export const HEALTHY_POOL = { name: "db", permits: 10, ratePerSec: 8, swellMs: 60_000 } as const;

export function start(ctx: ScenarioContext): Scenario {
  const db = new Semaphore({ name: HEALTHY_POOL.name, permits: HEALTHY_POOL.permits, acquireTimeoutMs: 2000 });
  const { timers } = ctx;

  async function query(): Promise<void> {
    try {
      await db.use(async () => {
        // One query in fifty is a slow report query.
        await timers.sleep(Math.random() < 0.02 ? latency(120, 0.3) : latency(12, 0.5, 2, 60));
      });
    } catch {
      // An acquire timeout: the request fails, as it would in a service; it never happens here.
    }
  }

  arrivals(timers, () => HEALTHY_POOL.ratePerSec * swell(HEALTHY_POOL.swellMs, 0.4), query);
  return { stop: () => timers.stop() };
}
