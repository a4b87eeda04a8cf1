// The dashboard namespace `/ui` (docs/protocol.md, "Dashboard namespace `/ui`"): what the hub
// sends a dashboard and what a dashboard may ask. Declared here, not in main/, so the renderer
// can import it; the hub validates every request with ./schemas.ts.
import type { AlertChange, AlertThresholds, FleetEntry, ThresholdsPatch } from "../alerts/index.js";
import type { Tier, WindowColumn } from "../history/index.js";
import type { SampleGauge } from "../protocol/sample-layout.js";
import type { AckFn, Alert, AgentState, HubAdmission, HubState, Sample, SampleLimit, SemaphoreInfo, SemaphoreState, Summary } from "../protocol/types.js";

/** Bounds and rates of `/ui` (tunables the hub may lower in tests, never raise past these). */
export const UI_LIMITS = {
  /** Deltas are batched on this timer: at most 4 a second. */
  deltaIntervalMs: 250,
  /** Points per semaphore in the snapshot's sparklines (the last minute at 1 s). */
  sparklinePoints: 60,
  /** Semaphores that get sparklines in a snapshot (the rest get none; ask history:get). */
  maxSparklines: 2000,
  /** Requests a dashboard may make per second (sustained), and in one burst. */
  requestsPerSecond: 50,
  requestBurst: 100,
  /** A snapshot (on connect or snapshot:get) costs one request, plus one per this many semaphores. */
  semaphoresPerSnapshotRequest: 200,
  /** Dashboards connected at once: in all, and from one address. */
  maxClients: 32,
  maxClientsPerAddress: 8,
  /** New dashboard connections a second (sustained) and in one burst: from one address, and in all. */
  handshakesPerSecondPerAddress: 2,
  handshakeBurstPerAddress: 10,
  handshakesPerSecond: 10,
  handshakeBurst: 40,
  /** A dashboard with more than this many bytes (or packets) not yet handed to its transport is dropped. */
  maxBufferedBytes: 4 * 1024 * 1024,
  maxBufferedPackets: 64,
  /** Columns in one history:get (all of them); the tiers bound the points (900 at 1 s, 1 441 at 1 m). */
  maxColumns: 32,
  /** Limit changes in one fleet window (its members' newest). */
  fleetLimitChanges: 256,
} as const;

/**
 * A latency summary without its histogram. The histograms were over a third of every delta and
 * parsing them was a dashboard's largest cost per update; it shows percentiles only, and the
 * hub merges histograms itself wherever a fleet percentile is wanted (UiFleetEntry).
 */
export type UiSummary = Omit<Summary, "hist">;

/** A wire Sample with summaries instead of histograms. */
export type UiSample = Omit<Sample, "waitMs" | "holdMs"> & { waitMs: UiSummary; holdMs: UiSummary };

/** What the agent registered for a semaphore, beyond its name and cap. */
export type UiSemaphoreConfig = Pick<
  SemaphoreInfo,
  "kind" | "queue" | "maxWaiters" | "acquireTimeoutMs" | "leaseTimeoutMs" | "leakThresholdMs" | "scope" | "budget"
>;

/** A semaphore as a dashboard sees it: /api/state's entry plus the latest sample's time. */
export interface UiSemaphore extends Omit<SemaphoreState, "last"> {
  /** `t` of `last` (sample time, agent clock), null before the first sample. */
  t: number | null;
  last: UiSample | null;
  /**
   * Its registration. In a snapshot: on every registered semaphore. In a delta: only when it is
   * new or changed (a register), so a delta entry without it keeps the config the dashboard has.
   * Never present for a semaphore seen in samples but not registered.
   */
  config?: UiSemaphoreConfig;
}

/** The fields of a UiSemaphore that only a hello or a register changes. */
export type UiIdentityField = "agentId" | "service" | "instance" | "id" | "name" | "kind";
/** The gauges a UiSemaphore repeats from its `last` sample: the sample's, but the longest hold (the list's own). */
export type UiGaugeField = Exclude<SampleGauge, "longestHoldMs">;

/**
 * A semaphore in a delta: what a sample changes, not the whole UiSemaphore (semaphore-patch.ts).
 * The identity fields come all together, and only when dashboards may not have them yet (the
 * first delta to mention the key, or one after they changed); a gauge comes only when `last` is
 * null or differs from its field of the same name. Together they were a third of a delta's
 * values and most of its strings, which a dashboard parses 4 times a second.
 */
export type UiSemaphorePatch = Pick<UiSemaphore, "key" | "status" | "t" | "last" | "config"> &
  Partial<Pick<UiSemaphore, UiIdentityField | UiGaugeField>>;

/** A fleet entry with merged percentiles (UiSummary) rather than merged histograms. */
export type UiFleetEntry = Omit<FleetEntry, "waitMs" | "holdMs"> & { readonly waitMs: UiSummary; readonly holdMs: UiSummary };

/** The overview sparkline of one semaphore: the last few 1 s points, oldest first. */
export interface Sparkline {
  t: number[];
  inUse: number[];
  waiters: number[];
}

/** Sent once, first, on every connect (and as the answer to `snapshot:get`). */
export interface UiSnapshot {
  /** Hub clock (epoch ms) when it was taken. */
  serverTime: number;
  /** The last delta's seq before this snapshot: deltas with a higher seq follow it. */
  deltaSeq: number;
  state: Omit<HubState, "semaphores"> & { semaphores: UiSemaphore[] };
  /** Active and retained resolved alerts, newest raisedAt first (state.alerts has the active ones). */
  alertLog: Alert[];
  fleet: UiFleetEntry[];
  thresholds: AlertThresholds;
  /** Keyed by semaphore key; bounded by UI_LIMITS.maxSparklines × UI_LIMITS.sparklinePoints. */
  sparklines: Record<string, Sparkline>;
  limits: { deltaIntervalMs: number; sparklinePoints: number };
}

/**
 * What changed since the previous delta. Every field but seq/serverTime/rejected is omitted when
 * nothing of its kind changed. Applying a delta is idempotent (upserts by key / agentId / alert id).
 */
export interface UiDelta {
  /** +1 per delta; a gap means a missed delta: ask `snapshot:get`. */
  seq: number;
  serverTime: number;
  /** hub.rejected as of this delta. */
  rejected: number;
  /** Optional addition: hub.admission (caps and refusals), when it changed since the last delta. */
  admission?: HubAdmission;
  /** Semaphores new or changed (a sample, a register, a status change): patch by key (UiSemaphorePatch). */
  semaphores?: UiSemaphorePatch[];
  /** Keys of semaphores gone (unregistered, or their agent forgotten). */
  removed?: string[];
  /**
   * Optional addition: keys of semaphores whose config is gone (their agent's last register left
   * them out, and it still reports them): drop the config held, after applying `semaphores`.
   * A patch without `config` keeps the one held, so without this a config could not be taken back.
   */
  unconfigured?: string[];
  /** Agents new or changed: upsert by agentId. */
  agents?: AgentState[];
  /** agentIds forgotten by the hub. */
  removedAgents?: string[];
  /** Alert changes in the order they happened (one per alert id: its latest). */
  alerts?: AlertChange[];
  /**
   * Fleet entries new or changed since the last delta: upsert by key. (It was the whole list on
   * every delta: over a quarter of each delta's bytes, for a view most dashboards are not on.)
   */
  fleet?: UiFleetEntry[];
  /** Keys of fleet entries gone (no live replica left). */
  removedFleet?: string[];
  /** The thresholds, when they changed. */
  thresholds?: AlertThresholds;
}

/** A window of history as plain arrays, aligned on `t` (epoch ms): hand `[t, col…]` to uPlot. */
export type UiWindow = {
  tier: Tier;
  length: number;
  /** The last point is the still-open minute (1m tier). */
  partialLast: boolean;
  t: number[];
  /** Fleet windows only: replicas that contributed to each point. */
  replicas?: number[];
  /**
   * Optional addition: the adaptive limit's changes within the window, oldest first, each with its
   * reason (the hub keeps the last 64 per semaphore); absent when there are none. A fleet window
   * has its members' (the newest UI_LIMITS.fleetLimitChanges), each naming its `instance`.
   */
  limitChanges?: UiLimitChange[];
} & { [K in WindowColumn]?: number[] };

/** A change of an adaptive limit in a window: in a fleet's window, with the replica it was made on. */
export type UiLimitChange = SampleLimit & { instance?: string };

export interface UiHistoryRequest {
  key: string;
  /** Default: "1s" when the span fits the 1 s tier, else "1m". */
  tier?: Tier;
  /** Epoch ms, sample time. Default: to = latest sample, from = to − 15 min. */
  from?: number;
  to?: number;
  /** Column names to return (t always comes); default all. */
  columns?: WindowColumn[];
}

export interface UiFleetHistoryRequest extends Omit<UiHistoryRequest, "key"> {
  service: string;
  name: string;
}

/** dashboard → hub (namespace /ui); every request takes an ack. */
export interface UiToHubEvents {
  "snapshot:get": (req: Record<string, never>, ack: AckFn<{ snapshot: UiSnapshot }>) => void;
  "history:get": (req: UiHistoryRequest, ack: AckFn<{ key: string; window: UiWindow }>) => void;
  "fleet:get": (req: Record<string, never>, ack: AckFn<{ fleet: UiFleetEntry[] }>) => void;
  "fleet:history": (req: UiFleetHistoryRequest, ack: AckFn<{ key: string; window: UiWindow }>) => void;
  "alerts:get": (req: Record<string, never>, ack: AckFn<{ alerts: Alert[] }>) => void;
  "alert:ack": (req: { id: string }, ack: AckFn<{ alert: Alert }>) => void;
  "thresholds:set": (req: { patch: ThresholdsPatch }, ack: AckFn<{ thresholds: AlertThresholds }>) => void;
}

/** hub → dashboard. */
export interface HubToUiEvents {
  snapshot: (snapshot: UiSnapshot) => void;
  delta: (delta: UiDelta) => void;
}

/** Every request name a dashboard may send, in one list (the hub refuses any other). */
export const UI_NAMESPACE_EVENTS = [
  "snapshot:get",
  "history:get",
  "fleet:get",
  "fleet:history",
  "alerts:get",
  "alert:ack",
  "thresholds:set",
] as const satisfies readonly (keyof UiToHubEvents)[];
// Compile-time check that the list names every request.
const _allRequestsListed: [Exclude<keyof UiToHubEvents, (typeof UI_NAMESPACE_EVENTS)[number]>] extends [never] ? true : false = true;
