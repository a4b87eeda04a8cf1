// Starvation: inventory's "export-workers", cap 2, with a LIFO queue (someone's idea of
// "serve the freshest request first"). In a busy spell requests arrive a little faster than
// the two workers finish them; LIFO keeps serving the newest, so the oldest waiter is passed
// over again and again (rule `starvation`: oldestWaitMs ≥ max(5 s, 10 × hold p99)). When the
// spell ends the queue drains, the old waiters finally run, and the alert resolves 5 s later.
// acquireTimeoutMs bounds the queue's age even if a spell were to last.
import { Semaphore, SemaphoreTimeoutError } from "../../src/index.js";
import { arrivals, latency, type Scenario, type ScenarioContext } from "../runtime.js";

export const STARVATION = {
  name: "export-workers",
  permits: 2,
  holdP50Ms: 180,
  idleRatePerSec: 2,
  /** Over the workers' ~11/s: the queue grows by ~4 a second. */
  busyRatePerSec: 15,
  /** How long a busy spell lasts (not divided by speed: the wait must pass 5 s). */
  busyMs: 14_000,
  /** The first spell, then one every periodMs ± 15 % (divided by speed). */
  firstBusyMs: 4000,
  busyPeriodMs: 75_000,
  acquireTimeoutMs: 30_000,
} as const;

export function start(ctx: ScenarioContext): Scenario {
  const { timers, speed } = ctx;
  const workers = new Semaphore({
    name: STARVATION.name,
    permits: STARVATION.permits,
    queue: "lifo",
    acquireTimeoutMs: STARVATION.acquireTimeoutMs,
  });
  let busy = false;

  async function exportCsv(): Promise<void> {
    try {
      await workers.use(async () => {
        await timers.sleep(latency(STARVATION.holdP50Ms, 0.12, 120, 260));
      });
    } catch (err) {
      if (!(err instanceof SemaphoreTimeoutError)) throw err;
      ctx.log("export gave up after 30 s in the queue");
    }
  }

  arrivals(timers, () => (busy ? STARVATION.busyRatePerSec : STARVATION.idleRatePerSec), exportCsv);
  timers.every(STARVATION.firstBusyMs / speed, STARVATION.busyPeriodMs / speed, 0.15, () => {
    if (busy) return;
    busy = true;
    ctx.log(`month-end exports: ${STARVATION.busyRatePerSec}/s for ${STARVATION.busyMs / 1000} s`);
    timers.after(STARVATION.busyMs, () => (busy = false));
  });
  return { stop: () => timers.stop() };
}
