import type { Alert } from "../../../shared/protocol/types.js";
import { makeAlert as alertOf, T0 } from "../../fixtures/protocol.js";

let next = 0;

/** An active alert with an id and raise time of its own per call (tests keep several apart). */
export function makeAlert(over: Partial<Alert> = {}): Alert {
  next++;
  return alertOf({ id: `alert-${next}`, raisedAt: T0 + next, ...over });
}
