// createHub's options, checked once at start: a hub that would run insecurely or could never be
// reached refuses to start, with a HubConfigError saying why (the CLI exits 2 on it).
import { isIP } from "node:net";
import { applyThresholds, DEFAULT_THRESHOLDS, type ThresholdsPatch } from "../../shared/alerts/index.js";
import { DEFAULT_MAX_HISTORY_BYTES, DEFAULT_MAX_SEMAPHORES, HISTORY_FULL_BYTES } from "../../shared/history/index.js";
import { DEFAULT_HUB_PORT, LIMITS } from "../../shared/protocol/index.js";
import { UI_LIMITS } from "../../shared/ui-protocol/index.js";
import { DEFAULT_MAX_WAITING, DEFAULT_RESEND_MS, forwardingUrlError, type AlertForwardingOptions } from "./forwarding/alert-forwarder.js";
import type { RecordSink } from "./core/record-line.js";

export interface HubOptions {
  /** TCP port; 0 picks a free one. Default 7420. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. Anything but loopback requires a token. */
  host?: string;
  /** Shared secret for agents, dashboards and the HTTP API (≤ 256 UTF-16 units). */
  token?: string;
  /**
   * A second secret that opens /agent only (not /ui, /replay or the HTTP API), so a token handed to
   * every service cannot read or change the hub. Needs `token`; /agent accepts either.
   */
  agentToken?: string;
  /**
   * Agents held (connected, or disconnected and kept for forgetAfterMs) and semaphores held, in all
   * and per remote address. At a cap the longest-disconnected agents are forgotten to make room;
   * when all are live the newcomer is refused (`agent limit reached`, `semaphore limit reached`).
   * Agent connections not yet past hello, in all and per address (over a cap the /agent handshake
   * is refused), and how long one may take to say hello before it is closed. Dashboards (/ui)
   * connected at once, in all and per address, and new dashboard connections a second (sustained,
   * and in one burst) per address and in all: over any of these the /ui handshake is refused.
   */
  admission?: {
    maxAgents?: number;
    maxAgentsPerAddress?: number;
    maxSemaphores?: number;
    maxSemaphoresPerAddress?: number;
    maxPendingAgents?: number;
    maxPendingAgentsPerAddress?: number;
    helloTimeoutMs?: number;
    maxDashboards?: number;
    maxDashboardsPerAddress?: number;
    dashboardHandshakesPerSecond?: number;
    dashboardHandshakeBurst?: number;
    dashboardHandshakesPerSecondPerAddress?: number;
    dashboardHandshakeBurstPerAddress?: number;
  };
  /** Append every accepted agent message (and every other engine input) to this NDJSON file. */
  record?: string;
  /** Record into this sink instead (the app's rolling recordings, recording-rolling.ts); closed with the hub. */
  recordSink?: RecordSink;
  /** Web mode: serve the built dashboard from this folder at `/`. */
  staticDir?: string;
  /** The hub clock (epoch ms); injectable for tests. Default Date.now. */
  now?: () => number;
  /** Alert thresholds changed from the protocol's defaults at start. */
  thresholds?: ThresholdsPatch;
  /** Each accepted threshold change (a dashboard's thresholds:set, or hub.setThresholds), after it applies: the app persists them. */
  onThresholdsChanged?: (patch: ThresholdsPatch) => void;
  /** An agent disconnected this long is forgotten (its semaphores and alerts resolved); 0 never. Default 6 h. */
  forgetAfterMs?: number;
  /**
   * Semaphore histories kept. Default 10,000. A new semaphore past the bound takes the place of
   * the least recently updated history only once that one has been idle for a minute.
   */
  maxHistories?: number;
  /** Bytes the histories may hold when all are full (bounds maxHistories: 1 GiB ≈ 3,515 histories). Default 1 GiB. */
  maxHistoryBytes?: number;
  /** Messages per second one agent connection may send (sustained), and in one burst. */
  agentRate?: { perSecond?: number; burst?: number };
  /**
   * Work one agent connection may make the hub do: items (samples, events, semaphores in a
   * register, plus one per message) per second sustained, and in one burst. Over it the
   * connection's next message waits (it is not refused).
   */
  agentBudget?: { itemsPerSecond?: number; burst?: number };
  /**
   * The same work budget for all agent connections from one remote address together, so that
   * opening more connections does not multiply it.
   */
  agentAddressBudget?: { itemsPerSecond?: number; burst?: number };
  /** /ui tunables (tests lower them). */
  ui?: { deltaIntervalMs?: number; maxBufferedBytes?: number; maxBufferedPackets?: number; sliceMs?: number };
  /**
   * Browser origins (e.g. "app://semscope") allowed besides the hub's own. A request or handshake
   * with any other Origin header is refused; clients that send none (agents) are unaffected.
   */
  allowedOrigins?: readonly string[];
  /** Where the hub writes its warnings (one line each). Default stderr. */
  log?: (line: string) => void;
  /** Send every alert change to these Alertmanagers and webhooks (forwarding/alert-forwarder.ts). */
  alertForwarding?: AlertForwardingOptions;
  /**
   * How long an idle HTTP keep-alive connection is kept open (ms). Default 65 s: longer than the
   * scrape intervals in use (Prometheus' default is 1 m) and than a load balancer's usual 60 s, so
   * the client, not the hub, lets a reused connection go and a request never meets one being closed.
   */
  keepAliveTimeoutMs?: number;
}

/**
 * How an error names an option: by its HubOptions field ("agentToken", "admission.maxAgents"), or
 * as a command line set it ("--agent-token", SEMSCOPE_AGENT_TOKEN: main/hub/hub-flags.ts).
 */
export type OptionNamer = (field: string) => string;

/** A bad option: the hub refuses to start. Its message names options by field. */
export class HubConfigError extends Error {
  override readonly name = "HubConfigError";
  private readonly text: (name: OptionNamer) => string;

  /** `text`: the message, or the message with each option it names by `name`. */
  constructor(text: string | ((name: OptionNamer) => string)) {
    const withNames = typeof text === "string" ? () => text : text;
    super(withNames((field) => field));
    this.text = withNames;
  }

  /** The message with each option it names by `name` instead. */
  naming(name: OptionNamer): string {
    return this.text(name);
  }
}

export interface ResolvedHubOptions {
  readonly port: number;
  readonly host: string;
  readonly token: string | undefined;
  readonly agentToken: string | undefined;
  readonly admission: { readonly [K in keyof typeof DEFAULT_ADMISSION]: number };
  /** The /ui caps of HubOptions.admission (not in hub.admission.limits, which are the agents'). */
  readonly dashboards: { readonly [K in keyof typeof DEFAULT_DASHBOARD_ADMISSION]: number };
  readonly record: string | undefined;
  readonly staticDir: string | undefined;
  readonly now: () => number;
  readonly thresholds: ThresholdsPatch;
  readonly forgetAfterMs: number;
  readonly maxHistories: number;
  readonly maxHistoryBytes: number;
  readonly agentRate: { readonly perSecond: number; readonly burst: number };
  readonly agentBudget: { readonly itemsPerSecond: number; readonly burst: number };
  readonly agentAddressBudget: { readonly itemsPerSecond: number; readonly burst: number };
  readonly ui: { readonly deltaIntervalMs: number; readonly maxBufferedBytes: number; readonly maxBufferedPackets: number; readonly sliceMs?: number };
  readonly allowedOrigins: readonly string[];
  readonly log: (line: string) => void;
  readonly alertForwarding: AlertForwardingOptions;
  readonly keepAliveTimeoutMs: number;
}

export const DEFAULT_HOST = "127.0.0.1";
/** Enough for a hostile agent not to starve the event loop, and for an honest one to replay its backlog. */
export const DEFAULT_AGENT_RATE = { perSecond: 200, burst: 2000 } as const;
/**
 * Twice what the biggest agent (1,000 semaphores at 1 s: ~1,001 items a second) needs, and a full
 * register and batch at once. A backlog replay is paced, never refused: a 10-semaphore agent's
 * whole 600-batch backlog (6,600 items) takes ~3 s, a 1,000-semaphore agent's drains at about a
 * batch a second net. Each item costs the hub its parse, its history, its rules and the garbage
 * their windows keep; back-to-back full junk batches are what stall the hub's garbage collector
 * (test/e2e/stream/fairness.test.ts), hence the modest burst.
 */
export const DEFAULT_AGENT_BUDGET = { itemsPerSecond: 2000, burst: 2000 } as const;
/** Ten connections' worth of DEFAULT_AGENT_BUDGET from one address: 1,000 agents of 10 semaphores at 1 s on one host. */
export const DEFAULT_AGENT_ADDRESS_BUDGET = { itemsPerSecond: 20_000, burst: 20_000 } as const;
/**
 * Twice the hub's design scale (10,000 semaphores) in all, the design scale from one address (a
 * fleet behind one NAT fits); agents: 1,000 of 10 semaphores on one host, as the address budget.
 */
export const DEFAULT_ADMISSION = {
  maxAgents: 2000,
  maxAgentsPerAddress: 1000,
  maxSemaphores: 20_000,
  maxSemaphoresPerAddress: 10_000,
  // An agent is past hello a round trip after it connects: as many pending as agents held lets a
  // whole fleet behind one address reconnect at once after a hub restart.
  maxPendingAgents: 2000,
  maxPendingAgentsPerAddress: 1000,
  helloTimeoutMs: 10_000,
} as const;
/** The /ui caps (docs/protocol.md, "Dashboard namespace `/ui`"): UI_LIMITS' numbers. */
export const DEFAULT_DASHBOARD_ADMISSION = {
  maxDashboards: UI_LIMITS.maxClients,
  maxDashboardsPerAddress: UI_LIMITS.maxClientsPerAddress,
  dashboardHandshakesPerSecond: UI_LIMITS.handshakesPerSecond,
  dashboardHandshakeBurst: UI_LIMITS.handshakeBurst,
  dashboardHandshakesPerSecondPerAddress: UI_LIMITS.handshakesPerSecondPerAddress,
  dashboardHandshakeBurstPerAddress: UI_LIMITS.handshakeBurstPerAddress,
} as const;
/** Each dashboard costs the hub its snapshots and deltas: a cap past this is a mistake, not a plan. */
const MAX_DASHBOARD_CAP = 10_000;
export const DEFAULT_FORGET_AFTER_MS = 6 * 60 * 60 * 1000;
/** HubOptions.keepAliveTimeoutMs: above a 1-minute scrape interval and a 60 s proxy idle timeout. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** How often the hub ticks the engine (agent_down) and looks for agents to forget. */
export const TICK_MS = 1000;
/**
 * How long an acknowledged small samples batch may wait to be stored with the others that arrive
 * meanwhile (StorePipeline.defer). Anything that reads the hub (HTTP, a dashboard, the embedding API),
 * the tick, and any agent input but another small batch store what waits first, so none sees it late.
 * Longer lets more batches be stored together; past ~200 ms it gains nothing and blocks acks longer.
 */
export const STORE_DELAY_MS = 200;

export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost" || h === "::1" || h === "[::1]") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}

function int(name: string, v: number | undefined, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new HubConfigError((n) => `${n(name)} must be an integer in ${min}..${max}, got ${String(v)}`);
  }
  return v;
}

export function resolveHubOptions(opts: HubOptions = {}): ResolvedHubOptions {
  const port = int("port", opts.port, DEFAULT_HUB_PORT, 0, 65535);
  const host = opts.host ?? DEFAULT_HOST;
  if (typeof host !== "string" || host.length === 0) throw new HubConfigError((n) => `${n("host")} must be a non-empty string`);
  const token = opts.token;
  const agentToken = opts.agentToken;
  for (const [name, t] of [["token", token], ["agentToken", agentToken]] as const) {
    if (t === undefined) continue;
    if (typeof t !== "string" || t.length === 0) throw new HubConfigError((n) => `${n(name)} must be a non-empty string`);
    // A handshake string over the protocol's limit is refused by the schema: such a token could never be presented.
    if (t.length > LIMITS.maxString) throw new HubConfigError((n) => `${n(name)} must be at most ${LIMITS.maxString} characters, got ${t.length}`);
  }
  if (agentToken !== undefined && token === undefined) {
    throw new HubConfigError((n) => `${n("agentToken")} needs ${n("token")}: without it the dashboard and the API would be open while agents need a token`);
  }
  if (agentToken !== undefined && agentToken === token) throw new HubConfigError((n) => `${n("agentToken")} must differ from ${n("token")}, or it would open the dashboard too`);
  if (!isLoopback(host) && token === undefined) {
    throw new HubConfigError((n) => `refusing to listen on ${host} without a token: anything but loopback needs ${n("token")}`);
  }
  const thresholds = opts.thresholds ?? {};
  try {
    applyThresholds(DEFAULT_THRESHOLDS, thresholds);
  } catch (err) {
    throw new HubConfigError(err instanceof Error ? err.message : String(err));
  }
  const forwarding = opts.alertForwarding ?? {};
  const urls = [
    ...(forwarding.alertmanager ?? []).map((url) => ["alertmanager", url] as const),
    ...(forwarding.webhooks ?? []).map((url) => ["webhook", url] as const),
    ...(forwarding.dashboardUrl === undefined ? [] : [["dashboardUrl", forwarding.dashboardUrl] as const]),
  ];
  for (const [option, url] of urls) {
    if (forwardingUrlError(option, url) !== null) throw new HubConfigError((n) => forwardingUrlError(n(option), url) ?? "");
  }
  const ui = opts.ui ?? {};
  const rate = opts.agentRate ?? {};
  const budget = opts.agentBudget ?? {};
  const addressBudget = opts.agentAddressBudget ?? {};
  const admission = opts.admission ?? {};
  const cap = (name: keyof typeof DEFAULT_ADMISSION) => int(`admission.${name}`, admission[name], DEFAULT_ADMISSION[name], 1, 100_000_000);
  const dashboardCap = (name: keyof typeof DEFAULT_DASHBOARD_ADMISSION) => int(`admission.${name}`, admission[name], DEFAULT_DASHBOARD_ADMISSION[name], 1, MAX_DASHBOARD_CAP);
  return {
    port,
    host,
    token,
    agentToken,
    admission: Object.fromEntries(Object.keys(DEFAULT_ADMISSION).map((k) => [k, cap(k as keyof typeof DEFAULT_ADMISSION)])) as ResolvedHubOptions["admission"],
    dashboards: Object.fromEntries(Object.keys(DEFAULT_DASHBOARD_ADMISSION).map((k) => [k, dashboardCap(k as keyof typeof DEFAULT_DASHBOARD_ADMISSION)])) as ResolvedHubOptions["dashboards"],
    record: opts.record,
    staticDir: opts.staticDir,
    now: opts.now ?? Date.now,
    thresholds,
    forgetAfterMs: int("forgetAfterMs", opts.forgetAfterMs, DEFAULT_FORGET_AFTER_MS, 0, Number.MAX_SAFE_INTEGER),
    maxHistories: int("maxHistories", opts.maxHistories, DEFAULT_MAX_SEMAPHORES, 1, 1_000_000),
    maxHistoryBytes: int("maxHistoryBytes", opts.maxHistoryBytes, DEFAULT_MAX_HISTORY_BYTES, HISTORY_FULL_BYTES, Number.MAX_SAFE_INTEGER),
    agentRate: {
      perSecond: int("agentRate.perSecond", rate.perSecond, DEFAULT_AGENT_RATE.perSecond, 1, 1_000_000),
      burst: int("agentRate.burst", rate.burst, DEFAULT_AGENT_RATE.burst, 1, 1_000_000),
    },
    agentBudget: {
      itemsPerSecond: int("agentBudget.itemsPerSecond", budget.itemsPerSecond, DEFAULT_AGENT_BUDGET.itemsPerSecond, 1, 100_000_000),
      burst: int("agentBudget.burst", budget.burst, DEFAULT_AGENT_BUDGET.burst, 1, 100_000_000),
    },
    agentAddressBudget: {
      itemsPerSecond: int("agentAddressBudget.itemsPerSecond", addressBudget.itemsPerSecond, DEFAULT_AGENT_ADDRESS_BUDGET.itemsPerSecond, 1, 100_000_000),
      burst: int("agentAddressBudget.burst", addressBudget.burst, DEFAULT_AGENT_ADDRESS_BUDGET.burst, 1, 100_000_000),
    },
    ui: {
      deltaIntervalMs: int("ui.deltaIntervalMs", ui.deltaIntervalMs, UI_LIMITS.deltaIntervalMs, UI_LIMITS.deltaIntervalMs, 60_000),
      maxBufferedBytes: int("ui.maxBufferedBytes", ui.maxBufferedBytes, UI_LIMITS.maxBufferedBytes, 1, UI_LIMITS.maxBufferedBytes),
      maxBufferedPackets: int("ui.maxBufferedPackets", ui.maxBufferedPackets, UI_LIMITS.maxBufferedPackets, 1, UI_LIMITS.maxBufferedPackets),
      ...(ui.sliceMs === undefined ? {} : { sliceMs: int("ui.sliceMs", ui.sliceMs, 0, 0, 50) }),
    },
    allowedOrigins: [...(opts.allowedOrigins ?? [])],
    log: opts.log ?? ((line) => process.stderr.write(`${line}\n`)),
    alertForwarding: {
      ...forwarding,
      resendMs: int("alertForwarding.resendMs", forwarding.resendMs, DEFAULT_RESEND_MS, 100, 24 * 3600_000),
      maxWaiting: int("alertForwarding.maxWaiting", forwarding.maxWaiting, DEFAULT_MAX_WAITING, 1, 10_000_000),
    },
    keepAliveTimeoutMs: int("keepAliveTimeoutMs", opts.keepAliveTimeoutMs, DEFAULT_KEEP_ALIVE_TIMEOUT_MS, 1000, 3_600_000),
  };
}

/** `host` as it goes in a URL (IPv6 in brackets). */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
