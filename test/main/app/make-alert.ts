import type { Alert } from "../../../shared/protocol/types.js";

let next = 0;

/** An active alert as the engine hands them out; fields overridable. */
export function makeAlert(over: Partial<Alert> = {}): Alert {
  next++;
  return {
    id: `alert-${next}`,
    rule: "leak",
    severity: "critical",
    key: "checkout/web-1/db",
    service: "checkout",
    instance: "web-1",
    semaphore: "db",
    message: "db on checkout/web-1: 1 permit held > 10 s and not released",
    raisedAt: 1_700_000_000_000 + next,
    resolvedAt: null,
    acknowledged: false,
    ...over,
  };
}
