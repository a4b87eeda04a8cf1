// A replica that drops off the network now and then: its connection to the hub goes away for
// ~8 s (rule `agent_down`: raised at once on the disconnect, resolved when it is back). The
// service keeps running. The intervals it could not report are lost, as they are when an
// outage outlasts the agent's buffer: the hub shows a gap, not one interval holding 8 s of counts.
import { trackedAll } from "../../src/index.js";
import type { Scenario, ScenarioContext } from "../runtime.js";

export const NETWORK_BLIP = {
  /** The first blip, then one every periodMs ± 20 % (divided by speed). */
  firstBlipMs: 12_000,
  blipPeriodMs: 120_000,
  /** How long the replica stays away (not divided by speed). */
  downMs: 8000,
} as const;

export function start(ctx: ScenarioContext): Scenario {
  const { timers, speed, hub } = ctx;
  let away = false;

  // While away nobody samples: take the intervals off the semaphores and drop them.
  const discard = (): void => {
    if (!away) return;
    const now = Date.now();
    for (const t of trackedAll()) t.sample(now);
    timers.after(1000, discard);
  };

  timers.every(NETWORK_BLIP.firstBlipMs / speed, NETWORK_BLIP.blipPeriodMs / speed, 0.2, () => {
    if (away) return;
    away = true;
    ctx.log(`network blip: away from the hub for ${NETWORK_BLIP.downMs / 1000} s`);
    void hub.disconnect().then(() => {
      discard();
      timers.after(NETWORK_BLIP.downMs, () => {
        away = false;
        hub.reconnect();
      });
    });
  });
  return { stop: () => timers.stop() };
}
