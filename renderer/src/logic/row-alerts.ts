// Which active alerts a row carries: every rule firing on a semaphore badges its row (a double
// release or an order inversion too, which the hub's four statuses do not show), a fleet row
// carries its replicas' alerts and its own over_budget, and the worst severity decides the colour.
import { fleetKey, type Alert, type AlertRule, type Severity } from "../../../shared/protocol/types.js";
import { alertTarget, RULE_LABEL } from "./alert-target.js";

export interface RowAlerts {
  /** Active rules, worst severity first (then as RULE_ORDER ranks them). */
  rules: AlertRule[];
  worst: Severity;
}

/** Rank within a severity: what the eye should see first. */
const RULE_ORDER: readonly AlertRule[] = ["leak", "double_release", "convoy", "starvation", "over_budget", "order_inversion", "timeouts", "agent_down"];
const SEV_RANK: Record<Severity, number> = { critical: 1, warning: 0 };

function add(map: Map<string, Map<AlertRule, Severity>>, key: string, a: Alert): void {
  let rules = map.get(key);
  if (rules === undefined) map.set(key, (rules = new Map()));
  const had = rules.get(a.rule);
  if (had === undefined || SEV_RANK[a.severity] > SEV_RANK[had]) rules.set(a.rule, a.severity);
}

/**
 * Active alerts by row key: a semaphore's (`service/instance/id`) and its fleet's
 * (`service/name`, with `nameOf` telling a semaphore key's name; over_budget lands there alone).
 */
export function rowAlertIndex(alerts: readonly Alert[], nameOf: (key: string) => string | undefined): Map<string, RowAlerts> {
  const acc = new Map<string, Map<AlertRule, Severity>>();
  for (const a of alerts) {
    if (a.resolvedAt !== null) continue;
    const t = alertTarget(a);
    if (t.kind === "fleet") add(acc, fleetKey(t.service, t.name), a);
    else if (t.kind === "semaphore") {
      add(acc, t.key, a);
      const name = nameOf(t.key);
      if (name !== undefined) add(acc, fleetKey(a.service, name), a);
    }
  }
  const out = new Map<string, RowAlerts>();
  for (const [key, rules] of acc) {
    const list = [...rules.keys()].sort((x, y) => SEV_RANK[rules.get(y) as Severity] - SEV_RANK[rules.get(x) as Severity] || RULE_ORDER.indexOf(x) - RULE_ORDER.indexOf(y));
    out.set(key, { rules: list, worst: rules.get(list[0]) as Severity });
  }
  return out;
}

/** `is:double_release`, `is:double-release`, `is:double` all name the rule. */
export function ruleMatches(rule: AlertRule, value: string): boolean {
  const v = value.replace(/-/g, "_");
  return rule.startsWith(v) || RULE_LABEL[rule].toLowerCase().replace(/ /g, "_").startsWith(v);
}
