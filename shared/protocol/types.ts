// The wire protocol v1 as TypeScript types (docs/protocol.md is the contract).
// The zod schemas in schemas.ts are checked against these, so the two cannot drift apart.
import type { Summary } from "../histogram.js";
import type { GlobalView } from "./global-view.js";

export type { Summary, SparseHist } from "../histogram.js";

export const PROTOCOL_VERSION = 1;

export type QueueMode = "fifo" | "lifo" | "priority" | "adaptive";
export type WireQueueMode = QueueMode | "unknown";
export type Scope = "process" | "global";

export interface HandshakeAuth {
  protocol: number;
  token?: string;
}

export interface Hello {
  agentId: string;
  service: string;
  instance: string;
  pid: number;
  host: string;
  runtime: string;
  agentVersion: string;
  startedAt: number;
  /**
   * Optional addition: protocol features the agent can use, for the hub to accept in its ack
   * (HUB_FEATURES). Unknown names are ignored; an older hub drops the field.
   */
  features?: string[];
}

/**
 * Optional features negotiated in hello (docs/protocol.md, "Changed entries only"): the agent
 * lists what it can do, the hub's ack lists what of it the hub accepts, and only that is used.
 */
export const FEATURE_CHANGED_ONLY = "changed_only";
/**
 * Up to MANY_SEMAPHORES_PER_AGENT semaphores per agent (services with one per tenant), with
 * `register` sent in parts of at most LIMITS.maxSemaphoresPerAgent.
 */
export const FEATURE_MANY_SEMAPHORES = "many_semaphores";
export const MANY_SEMAPHORES_PER_AGENT = 10_000;
/** What this hub accepts. */
export const HUB_FEATURES: readonly string[] = [FEATURE_CHANGED_ONLY, FEATURE_MANY_SEMAPHORES];

/** How many semaphores an agent may report on a connection with these accepted features. */
export function semaphoreLimit(features: readonly string[] | undefined): number {
  return features?.includes(FEATURE_MANY_SEMAPHORES) === true ? MANY_SEMAPHORES_PER_AGENT : LIMITS.maxSemaphoresPerAgent;
}

export interface HelloAck {
  hubVersion: string;
  serverTime: number;
  /** Optional addition: the features of the hello this hub accepts (absent: none). */
  features?: string[];
}

export interface SemaphoreInfo {
  id: string;
  name: string;
  kind: string;
  cap: number;
  queue: WireQueueMode;
  maxWaiters: number | null;
  acquireTimeoutMs: number | null;
  leaseTimeoutMs: number | null;
  leakThresholdMs: number | null;
  scope: Scope;
  budget?: number;
  /** Optional addition: "replicas" when the cap is this replica's share of `budget` (Sample.share). */
  share?: "replicas";
}

export interface Register {
  semaphores: SemaphoreInfo[];
  /**
   * Optional addition (feature "many_semaphores"): a list too long for one message is sent in
   * parts, `"more"` on all but the last, `"end"` on the last; the hub applies the whole list at
   * `"end"`. Absent: the message is the whole list.
   */
  partial?: "more" | "end";
}

export interface Sample {
  id: string;
  cap: number;
  inUse: number;
  available: number;
  waiters: number;
  oldestWaitMs: number;
  acquired: number;
  released: number;
  timeouts: number;
  rejections: number;
  aborts: number;
  doubleReleases: number;
  leaseExpiries: number;
  waitMs: Summary;
  holdMs: Summary;
  longestHoldMs: number;
  /** Optional (added in v1, older agents omit it): a global semaphore's shared store, read by this replica. */
  global?: SampleGlobal;
  /** Optional (added in v1, older agents omit it): this replica's share of a budget split across live replicas. */
  share?: SampleShare;
  /** Optional (added in v1, older agents and older hubs ignore it): an adaptive cap's bounds and its last change, with the reason. */
  limit?: SampleLimit;
  /** Optional (added in v1, older agents and older hubs ignore it): connections the pool is opening for waiters (knex/tarn's pending creates), present only while above 0. */
  opening?: number;
}

/**
 * A semaphore made with `permits: { adaptive }`: the bounds its cap moves within, and the last
 * change of its limit with why (docs/protocol.md). Carried on the sample, not as an event, so a
 * hub that predates it drops the field and keeps the sample.
 */
export interface SampleLimit {
  min: number;
  max: number;
  /** The adaptive limit after the last change (the cap, unless a replica budget's share is lower). */
  limit: number;
  /** When the last change was made (epoch ms; creation time before the first). */
  t: number;
  /** One line: "latency rose from 12 ms to 30 ms at in-flight 8". */
  reason: string;
  /** The figures behind the last change (absent before the first). */
  from?: number;
  shortMs?: number;
  longMs?: number;
  inFlight?: number;
  /**
   * Optional addition: the changes made since the previous sample before this one, oldest first
   * (at most LIMITS.maxLimitChanges, the newest kept), so that every change reaches the hub with its
   * reason however many one interval holds. Absent when the interval made at most one.
   */
  earlier?: SampleLimitChange[];
}

/** One change of an adaptive limit, as SampleLimit carries its last one. */
export type SampleLimitChange = Omit<SampleLimit, "earlier">;

/**
 * A semaphore made with `share: "replicas"`: its cap is its share of `budget` among the live
 * replicas of its service and name (docs/agent-api.md). `cap` may sit below `target` for up to a
 * lease period (a larger share waits for the others to shrink first), never above it for longer
 * than one heartbeat.
 */
export interface SampleShare {
  /** The budget the live replicas divide. */
  budget: number;
  /** Live replicas (members with an unexpired lease) at the last heartbeat answered. */
  replicas: number;
  /** This replica's share at that heartbeat. */
  target: number;
  /** False while heartbeats fail: the cap stays where it was and does not grow. */
  reachable: boolean;
}

/**
 * What a replica of a `scope: "global"` semaphore read from the shared store (Redis) during the
 * interval, so the hub can show the fleet-wide figure even for holders without an agent.
 */
export interface SampleGlobal {
  /** Permits held fleet-wide (live leases), read from the store. */
  inUse: number;
  /** Identifiers of those holders, at most PAYLOAD_LIMITS.maxGlobalHolders (inUse may be more). */
  holders: string[];
  /** Identifiers of the holders in this process, at most PAYLOAD_LIMITS.maxGlobalHolders. */
  own: string[];
}

export interface SamplesBatch {
  seq: number;
  t: number;
  intervalMs: number;
  items: Sample[];
  /** Batches lost (buffer overflow) since the last one sent. */
  dropped?: number;
  /**
   * Optional addition (feature "changed_only"): present when `items` holds only the semaphores
   * that changed since the agent's previous batch; a registered one absent from every batch of
   * the interval (same `t`) is unchanged. "more": another batch of this interval follows; "end":
   * the interval's last. Absent: every tracked semaphore is in the interval's batches (v1).
   */
  partial?: "more" | "end";
}

export type AgentEventType =
  | "leak_suspected"
  | "leak_resolved"
  | "double_release"
  | "invariant_violation"
  | "lease_expired"
  | "order_inversion";

export interface AgentEvent {
  t: number;
  id: string;
  type: AgentEventType;
  holderId?: string;
  heldMs?: number;
  stack?: string;
  detail?: Record<string, unknown>;
}

export interface EventsBatch {
  items: AgentEvent[];
}

/** The one answer on every namespace (agents, dashboards, replay): ok with the event's fields, or a refusal saying why. */
export type Ack<T extends object = Record<string, unknown>> = ({ ok: true } & T) | { ok: false; error: string };
export type AckFn<T extends object = Record<string, unknown>> = (ack: Ack<T>) => void;

/** socket.io typed events, agent → hub (namespace /agent). Every event carries an ack. */
export interface AgentToHubEvents {
  hello: (payload: Hello, ack: AckFn<HelloAck>) => void;
  register: (payload: Register, ack: AckFn) => void;
  samples: (payload: SamplesBatch, ack: AckFn<{ seq: number }>) => void;
  events: (payload: EventsBatch, ack: AckFn) => void;
  /** Optional (flight recorder): the answer to a flight_request. */
  flight: (payload: FlightRecord, ack: AckFn) => void;
}

// ---- the flight recorder (optional addition; docs/protocol.md, "Flight recorder") ----

/** What one recorded operation was. */
export type FlightOpKind = "request" | "grant" | "release" | "timeout" | "reject" | "abort" | "double_release" | "expire";

export interface FlightOp {
  /** Epoch ms (agent clock). */
  t: number;
  op: FlightOpKind;
  /** The grant's sequence number within the semaphore (holder id `<id>#<holder>`); absent for waiters. */
  holder?: number;
  weight: number;
  /** grant: time since acquire() was called; timeout, abort: time spent waiting. */
  waitMs?: number;
  /** release, expire: time the permit was held. */
  holdMs?: number;
  /** Index into FlightRecord.stacks: where the permit was acquired (grant) or released twice. */
  stack?: number;
}

/** A permit held at the time of the answer. */
export interface FlightHolder {
  holder: number;
  weight: number;
  heldMs: number;
  stack?: number;
}

/** hub → agent: send the ring of semaphore `id`, for alert `alertId`. */
export interface FlightRequest {
  id: string;
  alertId: string;
}

/** agent → hub: the answer to one FlightRequest. */
export interface FlightRecord {
  id: string;
  alertId: string;
  /** Epoch ms (agent clock) when the ring was read. */
  t: number;
  /** The ring's size in operations. */
  capacity: number;
  /** Operations recorded since the semaphore was made (total − ops.length were overwritten). */
  total: number;
  /** Oldest first. */
  ops: FlightOp[];
  /** Permits held at `t`, oldest first. */
  holders: FlightHolder[];
  /** Distinct stacks the ops and holders refer to by index. */
  stacks: string[];
  /**
   * Absent when `ops` is the ring. "rate_limited": a ring of this semaphore went out less than
   * the agent's interval ago (for alert `sameAs`); "unavailable": no flight recorder for `id`.
   */
  status?: "rate_limited" | "unavailable";
  sameAs?: string;
}

/** hub → agent: nothing in v1's required core; optional additions are declared where they are built. */
export interface HubToAgentEvents {
  /** Optional (flight recorder): an agent without it ignores the event. */
  flight_request: (payload: FlightRequest) => void;
}

export type AlertRule =
  | "leak"
  | "convoy"
  | "starvation"
  | "timeouts"
  | "double_release"
  | "agent_down"
  | "over_budget"
  | "order_inversion";

export type Severity = "warning" | "critical";

export interface Alert {
  id: string;
  rule: AlertRule;
  severity: Severity;
  key: string;
  service: string;
  instance?: string;
  semaphore?: string;
  message: string;
  raisedAt: number;
  resolvedAt: number | null;
  acknowledged: boolean;
  evidence?: Record<string, unknown>;
}

export type SemaphoreStatus = "ok" | "saturated" | "convoy" | "leak";

export interface AgentState {
  agentId: string;
  service: string;
  instance: string;
  connected: boolean;
  lastSeen: number;
}

export interface SemaphoreState {
  key: string;
  agentId: string;
  service: string;
  instance: string;
  id: string;
  name: string;
  kind: string;
  cap: number;
  inUse: number;
  available: number;
  waiters: number;
  oldestWaitMs: number;
  status: SemaphoreStatus;
  last: Sample | null;
}

/**
 * Optional addition to `hub` in /api/state: what the hub holds against its caps, and what it
 * refused (main/hub/ingest/admission.ts). Absent from a hub without caps (a replay).
 */
/** Which cap refused a newcomer: its address's own, or the hub's in all. */
export type CapScope = "address" | "total";

export interface HubAdmission {
  /** Agents held, connected or not (a disconnected one is kept for hours unless room is needed). */
  agents: number;
  semaphores: number;
  /** The pending caps and the hello deadline are optional additions. */
  limits: {
    maxAgents: number;
    maxAgentsPerAddress: number;
    maxSemaphores: number;
    maxSemaphoresPerAddress: number;
    maxPendingAgents?: number;
    maxPendingAgentsPerAddress?: number;
    helloTimeoutMs?: number;
  };
  /**
   * Refused hellos over an agent cap, messages over a semaphore cap, hellos taking over a live
   * identity, and (optional additions) dashboard handshakes over a /ui cap and /agent handshakes
   * over a cap on connections not yet past hello.
   */
  refused: { agents: number; semaphores: number; identity: number; dashboards?: number; connections?: number };
  /**
   * Optional addition: refused.agents, refused.semaphores (and refused.dashboards,
   * refused.connections, themselves optional) split by the cap that refused them: `address` (the
   * newcomer's address was at its own cap: one address flooding) or `total` (the hub was full).
   * Each pair sums to its count in `refused`.
   */
  refusedScope?: Record<"agents" | "semaphores", Record<CapScope, number>> & { dashboards?: Record<CapScope, number>; connections?: Record<CapScope, number> };
  /** Optional addition: agent connections closed for saying no hello the hub took within helloTimeoutMs. */
  helloTimeouts?: number;
  /** Disconnected agents forgotten early to make room. */
  evictedAgents: number;
}

export interface HubState {
  /**
   * `agentToken` (optional addition): true when the hub was started with an agent token, so the
   * token a dashboard connects with is not the one to give services.
   */
  hub: { version: string; startedAt: number; rejected: number; admission?: HubAdmission; agentToken?: true };
  agents: AgentState[];
  semaphores: SemaphoreState[];
  alerts: Alert[];
  /** Optional addition: global semaphores' fleet-wide in-use and orphaned leases (global-view.ts). */
  globals?: GlobalView[];
}

/** The gauges GET /api/state reports as null until a semaphore's first sample (unknown is not zero). */
export type SampledGauge = "inUse" | "available" | "waiters" | "oldestWaitMs";
export type ApiSemaphoreState = Omit<SemaphoreState, SampledGauge> & { [K in SampledGauge]: number | null };
/** GET /api/state: HubState with each semaphore's gauges null while its `last` is. */
export type ApiHubState = Omit<HubState, "semaphores"> & { semaphores: ApiSemaphoreState[] };

/** HubState as GET /api/state serves it: a semaphore registered but not yet sampled has null gauges. */
export function apiState(state: HubState): ApiHubState {
  const semaphores = state.semaphores.map((s): ApiSemaphoreState => (s.last !== null ? s : { ...s, inUse: null, available: null, waiters: null, oldestWaitMs: null }));
  return { ...state, semaphores };
}

export const DEFAULT_HUB_PORT = 7420;
export const DEFAULT_HUB_URL = `http://127.0.0.1:${DEFAULT_HUB_PORT}`;
export const AGENT_NAMESPACE = "/agent";
export const UI_NAMESPACE = "/ui";

/** Limits the hub enforces (docs/protocol.md, "Transport"). */
export const LIMITS = {
  maxPacketBytes: 1024 * 1024,
  maxString: 256,
  maxStack: 16384,
  maxSemaphoresPerAgent: 1000,
  histBuckets: 256,
  /** SampleLimit.earlier: changes of one interval carried besides its last (the limit decides at most every 100 ms). */
  maxLimitChanges: 16,
} as const;

/**
 * One part of a key as it goes between `/`: `%` and `/` written `%25` and `%2F`, so a name holding
 * a `/` cannot make one agent's key another's (`a/b` + `c` vs `a` + `b/c`). A name without either
 * is its own key part, so everyday keys read as before.
 */
export function keyPart(s: string): string {
  return s.includes("%") || s.includes("/") ? s.replace(/%/g, "%25").replace(/\//g, "%2F") : s;
}

/** The parts of a key made by semaphoreKey, fleetKey or instanceKey, unescaped. */
export function splitKey(key: string): string[] {
  return key.split("/").map((p) => (p.includes("%") ? p.replace(/%2F/g, "/").replace(/%25/g, "%") : p));
}

/** `<service>/<instance>/<id>`, each part escaped (keyPart). */
export function semaphoreKey(service: string, instance: string, id: string): string {
  return `${keyPart(service)}/${keyPart(instance)}/${keyPart(id)}`;
}

/** `<service>/<instance>`, each part escaped: the key of an agent_down alert. */
export function instanceKey(service: string, instance: string): string {
  return `${keyPart(service)}/${keyPart(instance)}`;
}

/** `<service>/<name>`, each part escaped: a fleet's key (replicas sharing a semaphore name). */
export function fleetKey(service: string, name: string): string {
  return `${keyPart(service)}/${keyPart(name)}`;
}
