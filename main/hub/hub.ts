// createHub: the hub in one call, headless (plain Node) or inside the app. One HTTP server
// carries socket.io (/agent, /ui) and the HTTP API; the alert engine and history live in HubCore.
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import type { AlertEngine, AlertThresholds, ThresholdsPatch } from "../../shared/alerts/index.js";
import type { HistoryStore } from "../../shared/history/index.js";
import { LIMITS, type HubState } from "../../shared/protocol/index.js";
import pkg from "../../package.json" with { type: "json" };
import { attachAgentNamespace } from "./ingest/agent-namespace.js";
import { contained } from "./socket/listener.js";
import { ConnectionCap } from "./socket/connection-cap.js";
import { AgentScheduler } from "./ingest/agent-scheduler.js";
import { TokenCheck } from "./auth.js";
import { createHttpHandler } from "./dashboard/http-api.js";
import { HubCore } from "./core/hub-core.js";
import { HubMetrics } from "./dashboard/metrics.js";
import { HubConfigError, isLoopback, resolveHubOptions, STORE_DELAY_MS, TICK_MS, urlHost, type HubOptions } from "./options.js";
import type { RecordSink } from "./core/record-line.js";
import { Recorder } from "./recording/recorder.js";
import { GzipRecorder } from "./recording/recording-writer.js";
import { RequestGuard } from "./request-guard.js";
import { StaticFiles } from "./dashboard/static-files.js";
import { UiNamespace } from "./dashboard/ui-namespace.js";
import { AlertForwarder } from "./forwarding/alert-forwarder.js";

export const HUB_VERSION: string = pkg.version;
/** How long closing waits for the last alert changes to be delivered. */
const FORWARD_CLOSE_MS = 2000;

export interface Hub {
  /** `http://<host>:<port>`, the port the OS gave when asked for 0. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Reading engine, history or state() first stores what was acknowledged and waits to be (StorePipeline.defer). */
  readonly engine: AlertEngine;
  readonly history: HistoryStore;
  /** hub.rejected as /api/state reports it. */
  readonly rejected: number;
  state(): HubState;
  /**
   * Changes the alert rules' numbers as a person would from a dashboard: recorded (a replay
   * applies it at the same point) and pushed to every dashboard in the next delta. Use this, not
   * engine.setThresholds, which does neither. Throws TypeError/RangeError for a bad patch, and
   * then changes nothing.
   */
  setThresholds(patch: ThresholdsPatch): AlertThresholds;
  /** Disconnects everyone, stops the HTTP server and closes the recording (every line already on disk). */
  close(): Promise<void>;
}

function listen(http: HttpServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    http.once("error", onError);
    http.listen(port, host, () => {
      http.off("error", onError);
      resolve((http.address() as AddressInfo).port);
    });
  });
}

export async function createHub(options: HubOptions = {}): Promise<Hub> {
  const o = resolveHubOptions(options);
  let staticFiles: StaticFiles | undefined;
  if (o.staticDir !== undefined) {
    try {
      staticFiles = await StaticFiles.open(o.staticDir);
    } catch (err) {
      throw new HubConfigError(`cannot serve ${o.staticDir}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  let recorder: RecordSink | undefined = options.recordSink;
  if (recorder !== undefined && o.record !== undefined) throw new HubConfigError("record and recordSink cannot both be given");
  if (o.record !== undefined) {
    try {
      // A name ending in .gz asks for the compact recording (recording-writer.ts).
      recorder = o.record.endsWith(".gz") ? new GzipRecorder(o.record, o.log) : new Recorder(o.record, o.log);
    } catch (err) {
      throw new HubConfigError(`cannot record to ${o.record}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  // Deferred stores (StorePipeline.defer): flushed by a timer, out of any scheduler turn, and before
  // anything reads the hub (HTTP, the getters below; ui-namespace.ts for dashboards).
  let storeTimer: ReturnType<typeof setTimeout> | undefined;
  const storeDeferred = () => contained("deferred stores", o.log, undefined, () => core.ingest.flush());
  const flushStores = () => {
    storeTimer = undefined;
    storeDeferred();
  };
  // Links in forwarded alerts point at this hub's dashboard when it serves one (web mode), or at
  // the dashboard URL given; known once the hub listens, before any agent can raise an alert.
  const links: { url: string | null } = { url: o.alertForwarding.dashboardUrl ?? null };
  const forwarder = new AlertForwarder(o.alertForwarding, o.now, () => links.url);
  const core = new HubCore({
    onAlertChanges: forwarder.enabled ? (changes) => forwarder.onChanges(changes) : undefined,
    deferStores: (urgent) => {
      if (storeTimer !== undefined && !urgent) return;
      clearTimeout(storeTimer);
      storeTimer = setTimeout(flushStores, urgent ? 0 : STORE_DELAY_MS);
      storeTimer.unref();
    },
    now: o.now,
    version: HUB_VERSION,
    thresholds: o.thresholds,
    onThresholdsChanged: options.onThresholdsChanged,
    maxHistories: o.maxHistories,
    maxHistoryBytes: o.maxHistoryBytes,
    // Kept until the hub closes (the app makes another only when its settings change); a replay's
    // cores are made again at each backward seek.
    longLived: true,
    forgetAfterMs: o.forgetAfterMs,
    recorder,
  });
  const tokens = new TokenCheck(o.token);
  const agentTokens = new TokenCheck(o.token, o.agentToken);
  core.agentToken = o.agentToken !== undefined;
  const guard = new RequestGuard(isLoopback(o.host), o.allowedOrigins);
  // The /ui namespace needs the server, the HTTP handler (made first) needs its client count.
  const uiRef: { current?: UiNamespace } = {};
  const uiClients = () => uiRef.current?.clients ?? 0;
  const metrics = new HubMetrics(core, uiClients, () => forwarder.stats());

  // The HTTP handler goes on first: socket.io wraps the listeners it finds and passes on what is not its own.
  const handle = createHttpHandler({ core, metrics, tokens, guard, staticFiles, uiClients, forwarding: () => forwarder.stats(), log: o.log });
  const http = createServer((req, res) => {
    storeDeferred();
    handle(req, res);
  });
  // Node's 5 s default closes a scraper's connection between scrapes, and a scrape sent as it closes
  // fails (ECONNRESET). Node times headersTimeout and requestTimeout from a request's first byte,
  // not over the idle wait, so their defaults (60 s, 300 s) need not exceed this.
  http.keepAliveTimeout = o.keepAliveTimeoutMs;
  const a = o.admission;
  const d = o.dashboards;
  const connectionCap = new ConnectionCap({
    total: a.maxAgents + a.maxPendingAgents + d.maxDashboards,
    perAddress: a.maxAgentsPerAddress + a.maxPendingAgentsPerAddress + d.maxDashboardsPerAddress,
  });
  const io = new Server(http, {
    maxHttpBufferSize: LIMITS.maxPacketBytes,
    serveClient: false,
    // A connection that joins no namespace is closed as one on /agent that says no hello.
    connectTimeout: o.admission.helloTimeoutMs,
    allowRequest: (req, callback) => {
      const refusal = guard.refuse(req) ?? connectionCap.refuse(req);
      if (refusal !== null) core.reject();
      callback(refusal, refusal === null);
    },
  });
  io.engine.on("connection", (conn: Parameters<ConnectionCap["opened"]>[0]) => connectionCap.opened(conn));
  // Only /agent and /ui exist; the main namespace lets no one in.
  io.of("/").use((_socket, next) => {
    core.reject();
    next(new Error("unknown namespace: use /agent or /ui"));
  });
  const scheduler = new AgentScheduler({
    busy: (service) => core.ingest.busy(service),
    guard: (what, fallback, fn) => contained(what, o.log, fallback, fn),
  }, core.turns);
  attachAgentNamespace(io, core, agentTokens, { rate: o.agentRate, budget: o.agentBudget, addressBudget: o.agentAddressBudget, admission: o.admission }, scheduler, o.log);
  const ui = new UiNamespace(io, core, tokens, {
    ...o.ui,
    maxClients: d.maxDashboards,
    maxClientsPerAddress: d.maxDashboardsPerAddress,
    handshakes: {
      perSecond: d.dashboardHandshakesPerSecond,
      burst: d.dashboardHandshakeBurst,
      perSecondPerAddress: d.dashboardHandshakesPerSecondPerAddress,
      burstPerAddress: d.dashboardHandshakeBurstPerAddress,
    },
    log: o.log,
  });
  uiRef.current = ui;
  // hub.admission counts the dashboards refused over a /ui cap beside the agents' refusals.
  const agentAdmission = core.admission;
  if (agentAdmission !== undefined) core.admission = () => ui.admission(agentAdmission());

  let port: number;
  try {
    port = await listen(http, o.port, o.host);
  } catch (err) {
    ui.close();
    await io.close().catch(() => undefined);
    scheduler.close();
    core.close();
    await forwarder.close(0);
    throw err;
  }
  if (links.url === null && staticFiles !== undefined) links.url = `http://${urlHost(o.host)}:${port}`;

  // Through the scheduler, so a tick never lands between two slices of a batch being stored.
  const ticker = setInterval(() => scheduler.system(() => core.tick()), TICK_MS);
  ticker.unref();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      clearInterval(ticker);
      clearTimeout(storeTimer);
      ui.close();
      // Sockets' disconnect handlers run here (and are recorded) before the recording closes.
      const closed = io.close();
      http.closeAllConnections();
      await closed.catch(() => undefined);
      // What the agents sent before they were disconnected, then their disconnects.
      scheduler.drain();
      scheduler.close();
      core.close();
      // What the last inputs changed goes out, within a bound: a down Alertmanager cannot hold the close.
      await forwarder.close(FORWARD_CLOSE_MS);
      // A compressed recording finishes writing after close() (its last flush).
      await recorder?.closed;
    })());

  return {
    url: `http://${urlHost(o.host)}:${port}`,
    host: o.host,
    port,
    get engine() {
      storeDeferred();
      return core.engine;
    },
    get history() {
      storeDeferred();
      return core.history;
    },
    get rejected() {
      return core.rejected;
    },
    state: () => {
      storeDeferred();
      return core.state();
    },
    setThresholds: (patch) => core.setThresholds(patch),
    close,
  };
}
