// The history store's public surface: what the hub and the renderer import.
export {
  MINUTE_MS,
  addCounters,
  perSecond,
  sampleRow,
  WINDOW_COLUMNS,
  toUplotData,
  type ColumnarWindow,
  type HistKind,
  type NumericColumn,
  type Tier,
  type TierReader,
  type UplotData,
  type WindowColumn,
} from "./columnar-window.js";
export { HistAccumulator } from "./hist-accumulator.js";
export { fleetSummary, fleetWindow, type FleetWindow } from "./fleet-window.js";
export {
  HISTORY_DEFAULTS,
  HISTORY_FULL_BYTES,
  historyFullBytes,
  pickTier,
  type SemaphoreHistoryOptions,
} from "./history-options.js";
export { DEFAULT_MAX_HISTORY_BYTES, DEFAULT_MAX_SEMAPHORES, DEFAULT_MIN_IDLE_MS, HistoryEntry, HistoryStore, type HistoryStoreOptions } from "./history-store.js";
export { SemaphoreHistory } from "./semaphore-history.js";
export { WindowScratch } from "./window-scratch.js";
