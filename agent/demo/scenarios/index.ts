// The scenarios a demo process can run, by the name `--scenarios` takes.
import type { ScenarioStart } from "../runtime.js";
import { start as convoy } from "./convoy.js";
import { start as doubleRelease } from "./double-release.js";
import { start as healthyPool } from "./healthy-pool.js";
import { start as leakingPool } from "./leaking-pool.js";
import { start as networkBlip } from "./network-blip.js";
import { start as orderInversion } from "./order-inversion.js";
import { start as overBudget } from "./over-budget.js";
import { start as starvation } from "./starvation.js";
import { start as timeouts } from "./timeouts.js";

export const SCENARIOS: Readonly<Record<string, ScenarioStart>> = Object.freeze({
  "healthy-pool": healthyPool,
  "leaking-pool": leakingPool,
  convoy,
  "double-release": doubleRelease,
  "order-inversion": orderInversion,
  timeouts,
  starvation,
  "over-budget": overBudget,
  "network-blip": networkBlip,
});

export function isScenario(name: string): boolean {
  return Object.hasOwn(SCENARIOS, name);
}
