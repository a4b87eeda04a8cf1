// A double release: checkout's "fx-rates" client, cap 4. fetchRate() releases its permit in the
// catch block so the backoff does not hold a slot, then retries with a fresh permit; the finally
// block releases the first permit again. It only bites when the FX service fails, which it does
// now and then: each failure is one double release (rule `double_release`, with the stack of
// the second release). Our semaphore ignores the extra release (the count stays right; a naive
// one would now admit five); the alert resolves after 60 s without another.
import { Semaphore } from "../../src/index.js";
import { arrivals, DownstreamError, FaultSchedule, latency, type Scenario, type ScenarioContext } from "../runtime.js";

export const DOUBLE_RELEASE = {
  name: "fx-rates",
  permits: 4,
  ratePerSec: 1.5,
  /** The FX service's first failure, then one every periodMs ± 20 % (divided by speed). */
  firstFailureMs: 3000,
  failurePeriodMs: 90_000,
} as const;

export function start(ctx: ScenarioContext): Scenario {
  const { timers, speed } = ctx;
  const fx = new Semaphore({ name: DOUBLE_RELEASE.name, permits: DOUBLE_RELEASE.permits, acquireTimeoutMs: 3000 });
  const fxFails = new FaultSchedule(timers, DOUBLE_RELEASE.firstFailureMs / speed, DOUBLE_RELEASE.failurePeriodMs / speed);

  async function callFx(currency: string): Promise<number> {
    await timers.sleep(latency(35, 0.4, 8, 200));
    if (fxFails.due()) throw new DownstreamError("fx service", `503 for ${currency}`);
    return 1 + (currency.charCodeAt(0) % 7) / 10;
  }

  async function fetchRate(currency: string, attempt = 1): Promise<number> {
    const permit = await fx.acquire();
    try {
      return await callFx(currency);
    } catch (err) {
      if (attempt >= 3) throw err;
      permit.release(); // free the slot while backing off...
      await timers.sleep(50 * attempt);
      return await fetchRate(currency, attempt + 1);
    } finally {
      permit.release(); // BUG: ...and release it again here on the retry path
    }
  }

  const currencies = ["EUR", "GBP", "JPY", "CHF", "SEK", "CAD"];
  arrivals(timers, () => DOUBLE_RELEASE.ratePerSec, async () => {
    const currency = currencies[Math.floor(Math.random() * currencies.length)];
    try {
      await fetchRate(currency);
    } catch (err) {
      ctx.log(`fx ${currency}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return { stop: () => timers.stop() };
}
