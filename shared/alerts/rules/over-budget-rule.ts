// Rule `over_budget` (fleet): the caps of all live instances sharing (service, name) add up to
// more than `budget` (a global semaphore's cap is not summed: see fleet.ts). Resolved when the sum
// is within budget, or no live member declares a budget any more. Keyed `<service>/<name>`,
// dated on the hub clock (see engine.ts: replicas' agent clocks differ).
import type { AlertBook } from "../alert-book.js";
import { fleetKey, fleetTotals, type FleetMember } from "../fleet.js";
import { plural } from "../format.js";

/** Members copied into evidence, enough to see who holds the budget. */
export const MAX_MEMBERS_IN_EVIDENCE = 50;

/**
 * Re-evaluate one (service, name) group at `at`. Emits a change only when the verdict, the sum,
 * the budget or the set of live members changed, so calling it often is cheap and quiet.
 */
export function evaluateOverBudget(book: AlertBook, service: string, name: string, members: readonly FleetMember[], at: number): void {
  const key = fleetKey(service, name);
  const tot = fleetTotals(members);
  const active = book.get("over_budget", key);
  if (!tot.overBudget || tot.budget === null) {
    if (active !== undefined) {
      book.resolve("over_budget", key, at, { resolution: tot.budget === null ? "no budget declared" : "within budget", resolvedWith: { capTotal: tot.cap, budget: tot.budget, instances: tot.instances } });
    }
    return;
  }
  const evidence: Record<string, unknown> = {
    name,
    scope: tot.scope,
    capTotal: tot.cap,
    budget: tot.budget,
    instances: tot.instances,
    members: members.slice(0, MAX_MEMBERS_IN_EVIDENCE).map((m) => ({
      instance: m.instance,
      cap: m.cap,
      ...(m.budget !== undefined ? { budget: m.budget } : {}),
      // A split budget: how many replicas it counted, and whether it reaches the coordinator.
      ...(m.share !== undefined ? { replicas: m.share.replicas, reachable: m.share.reachable } : {}),
    })),
  };
  const message =
    tot.scope === "global"
      ? `${name} in ${service}: the global cap ${tot.cap} is over the budget of ${tot.budget}`
      : `${name} in ${service}: the caps of ${plural(tot.instances, "live instance")} sum to ${tot.cap}, over the budget of ${tot.budget}`;
  if (active === undefined) {
    book.raise({ key, service, semaphore: name }, { rule: "over_budget", severity: "warning", message, evidence }, at);
    return;
  }
  const before = active.evidence ?? {};
  if (before.capTotal !== tot.cap || before.budget !== tot.budget || JSON.stringify(before.members) !== JSON.stringify(evidence.members)) {
    book.update("over_budget", key, { message, evidence });
  }
}
