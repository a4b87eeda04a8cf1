// The alert engine's public face: pure rules over samples and events (docs/protocol.md, "Alert rules").
export { AlertEngine, type AlertEngineOptions, type SampleFeed } from "./engine.js";
export { newRegistryAgent, newRegistryEntry, Registry, RegistryBase, type RegistryAgent, type RegistryEntry } from "./registry.js";
export type { AlertChange, AlertChangeKind, AlertTarget } from "./types.js";
export {
  DEFAULT_THRESHOLDS,
  applyThresholds,
  type AlertThresholds,
  type ThresholdsPatch,
  type WindowThresholds,
  type ConvoyThresholds,
  type StarvationThresholds,
  type TimeoutsThresholds,
  type DoubleReleaseThresholds,
  type AgentDownThresholds,
} from "./thresholds.js";
export {
  fleetCounts,
  fleetEntry,
  fleetFigures,
  fleetKey,
  fleetTotals,
  type FleetCounts,
  type FleetEntry,
  type FleetFigures,
  type FleetMember,
  type FleetTotals,
} from "./fleet.js";
export { agentKey } from "./rules/agent-down-rule.js";
export { leakCheckHolds } from "./rules/leak-rule.js";
export { DEFAULT_MAX_RESOLVED, RULE_BIT } from "./alert-book.js";
