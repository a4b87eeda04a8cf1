// Where an alert leads: most alerts are about one semaphore (key `<service>/<instance>/<id>`),
// over_budget about a fleet (`<service>/<name>`), agent_down about an instance
// (`<service>/<instance>`); each part escaped (keyPart in shared/protocol/types.ts).
import { splitKey, type Alert, type AlertRule } from "../../../shared/protocol/types.js";

export type AlertTarget =
  | { kind: "semaphore"; key: string }
  | { kind: "fleet"; service: string; name: string }
  | { kind: "instance"; service: string; instance: string };

export function alertTarget(alert: Pick<Alert, "rule" | "key" | "service" | "instance" | "semaphore">): AlertTarget {
  if (alert.rule === "over_budget") {
    const name = alert.semaphore ?? splitKey(alert.key)[1] ?? alert.key;
    return { kind: "fleet", service: alert.service, name };
  }
  if (alert.rule === "agent_down") {
    const instance = alert.instance ?? splitKey(alert.key)[1] ?? alert.key;
    return { kind: "instance", service: alert.service, instance };
  }
  return { kind: "semaphore", key: alert.key };
}

export const RULE_LABEL: Record<AlertRule, string> = {
  leak: "Leak",
  convoy: "Convoy",
  starvation: "Starvation",
  timeouts: "Timeouts",
  double_release: "Double release",
  agent_down: "Agent down",
  over_budget: "Over budget",
  order_inversion: "Order inversion",
};

/** Newest raisedAt first; active before resolved at the same instant. */
export function compareAlerts(a: Alert, b: Alert): number {
  return b.raisedAt - a.raisedAt || (a.resolvedAt === null ? 0 : 1) - (b.resolvedAt === null ? 0 : 1) || a.id.localeCompare(b.id);
}
