// The HTTP side of the hub's port (docs/protocol.md, "Hub HTTP API"): health, state, alerts,
// history, fleet, thresholds, Prometheus metrics, and in web mode the dashboard's files. With a
// token, everything but /healthz and the dashboard's static files needs `Authorization: Bearer`.
import type { ForwardingStats } from "../forwarding/alert-forwarder.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { apiState, parsePayload } from "../../../shared/protocol/index.js";
import { thresholdsPatchSchema, uiFleetHistoryRequestSchema, uiHistoryRequestSchema } from "../../../shared/ui-protocol/index.js";
import type { TokenCheck } from "../auth.js";
import type { HubCore } from "../core/hub-core.js";
import type { HubMetrics } from "./metrics.js";
import type { RequestGuard } from "../request-guard.js";
import type { StaticFiles } from "./static-files.js";
import { fleetHistoryView, historyView, type ViewResult } from "./views.js";

/** Request bodies (PUT /api/thresholds, POST …/ack) are tiny; anything bigger is refused unread. */
export const MAX_BODY_BYTES = 64 * 1024;

export interface HttpDeps {
  core: HubCore;
  metrics: HubMetrics;
  tokens: TokenCheck;
  guard: RequestGuard;
  staticFiles: StaticFiles | undefined;
  uiClients: () => number;
  /** Where forwarded alerts stand (sent, failed, waiting, dropped) per destination. */
  forwarding: () => ForwardingStats;
  log: (line: string) => void;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function json(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    ...extra,
  });
  res.end(text);
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_BODY_BYTES) return reject(new HttpError(413, `body over ${MAX_BODY_BYTES} bytes`));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, `body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", reject);
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      if (text.trim() === "") return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new HttpError(400, "body is not valid JSON"));
      }
    });
  });
}

/** Query parameters for a history window: numbers parsed, columns split on commas. */
function windowQuery(params: URLSearchParams, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = params.get(f);
    if (v !== null) out[f] = v;
  }
  for (const f of ["from", "to"]) {
    const v = params.get(f);
    if (v !== null) out[f] = v.trim() === "" ? NaN : Number(v);
  }
  const tier = params.get("tier");
  if (tier !== null) out.tier = tier;
  const columns = params.get("columns");
  if (columns !== null) out.columns = columns.split(",").filter((c) => c !== "");
  return out;
}

function view<T>(res: ServerResponse, r: ViewResult<T>): void {
  if (r.ok) json(res, 200, r.value);
  else json(res, r.status, { error: r.error });
}

function allow(res: ServerResponse, method: string | undefined, allowed: string): boolean {
  if (allowed.split(", ").includes(method ?? "")) return true;
  json(res, 405, { error: "method not allowed" }, { Allow: allowed });
  return false;
}

export function createHttpHandler(deps: HttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { core, tokens } = deps;

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = deps.guard.refuse(req);
    if (refusal !== null) return json(res, 403, { error: refusal });
    const url = new URL(req.url ?? "/", "http://hub.invalid");
    const path = url.pathname;
    if (path === "/healthz") return allow(res, req.method, "GET, HEAD") ? json(res, 200, { ok: true }) : undefined;
    const isApi = path === "/metrics" || path === "/api" || path.startsWith("/api/");
    if (!isApi) {
      if (deps.staticFiles !== undefined) return deps.staticFiles.serve(req, res, path);
      return json(res, 404, { error: "not found" });
    }
    if (!tokens.acceptsHeader(req.headers.authorization)) {
      return json(res, 401, { error: "unauthorized" }, { "WWW-Authenticate": 'Bearer realm="semscope"' });
    }

    if (path === "/metrics") {
      if (!allow(res, req.method, "GET")) return;
      return deps.metrics.serve(res, req.headers["accept-encoding"]);
    }
    if (path === "/api/state") return allow(res, req.method, "GET") ? json(res, 200, apiState(core.state())) : undefined;
    if (path === "/api/alerts") return allow(res, req.method, "GET") ? json(res, 200, { alerts: core.engine.allAlerts() }) : undefined;
    if (path === "/api/fleet") return allow(res, req.method, "GET") ? json(res, 200, { fleet: core.engine.fleet() }) : undefined;
    if (path === "/api/stats") {
      if (!allow(res, req.method, "GET")) return;
      return json(res, 200, {
        rejected: core.rejected,
        ...core.stats,
        agents: core.agentCount,
        uiClients: deps.uiClients(),
        histories: core.history.size,
        historyBytes: core.history.bytes(),
        historyEvicted: core.history.evicted,
        historyRefused: core.history.refused,
        windowBytes: core.engine.windowBytes(),
        recording: core.recording,
        alertForwarding: deps.forwarding(),
        // What the caps hold and refused (agents, semaphores, identity takeovers); none in a replay.
        ...(core.admission !== undefined ? { admission: core.admission() } : {}),
      });
    }
    if (path === "/api/history") {
      if (!allow(res, req.method, "GET")) return;
      const p = parsePayload(uiHistoryRequestSchema, windowQuery(url.searchParams, ["key"]));
      if (!p.ok) return json(res, 400, { error: p.error });
      return view(res, historyView(core, p.value.key, p.value));
    }
    if (path === "/api/fleet/history") {
      if (!allow(res, req.method, "GET")) return;
      const p = parsePayload(uiFleetHistoryRequestSchema, windowQuery(url.searchParams, ["service", "name"]));
      if (!p.ok) return json(res, 400, { error: p.error });
      return view(res, fleetHistoryView(core, p.value.service, p.value.name, p.value));
    }
    if (path === "/api/thresholds") {
      if (!allow(res, req.method, "GET, PUT")) return;
      if (req.method === "GET") return json(res, 200, { thresholds: core.engine.thresholds });
      const p = parsePayload(thresholdsPatchSchema, await readJson(req));
      if (!p.ok) return json(res, 400, { error: p.error });
      try {
        return json(res, 200, { thresholds: core.setThresholds(p.value) });
      } catch (err) {
        return json(res, 400, { error: err instanceof Error ? err.message : String(err) });
      }
    }
    const ack = /^\/api\/alerts\/([^/]+)\/ack$/.exec(path);
    if (ack !== null) {
      if (!allow(res, req.method, "POST")) return;
      let id: string;
      try {
        id = decodeURIComponent(ack[1]);
      } catch {
        return json(res, 400, { error: "bad alert id" });
      }
      const alert = core.acknowledge(id);
      return alert === undefined ? json(res, 404, { error: "no such alert" }) : json(res, 200, { alert });
    }
    return json(res, 404, { error: "not found" });
  }

  return (req, res) => {
    route(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) {
        if (!res.headersSent) json(res, err.status, { error: err.message }, err.status === 413 ? { Connection: "close" } : {});
        return;
      }
      deps.log(`semscope hub: ${req.method ?? "?"} ${req.url ?? "?"} failed: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) json(res, 500, { error: "internal error" });
      else res.destroy();
    });
  };
}
