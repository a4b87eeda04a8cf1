// GET /metrics: Prometheus text written by prom-client, from Registries of the hub's own (never
// prom-client's global one, which an embedding process may use). Values are read at scrape time
// from the engine and the running totals, so a sample costs nothing here and a gone semaphore's
// series just stop. At the hub's design scale (10,000 semaphores) the text is ~25 MB: what a
// render reads is taken a slice at a time (metrics-rows.ts), a family with a series per
// semaphore, fleet entry or agent has a Registry of its own, rendered a slice of rows at a time
// with the event loop free between slices, and the slices are streamed to the scraper as they
// come, a few hundred KB per turn, gzip'd for scrapers that take it (metrics-gzip.ts). Scrapes
// within shareMs of a render get the same one.
import type { ServerResponse } from "node:http";
import { Counter, Gauge, Registry } from "prom-client";
import type { ForwardingStats } from "../forwarding/alert-forwarder.js";
import type { SinkStats } from "../forwarding/alertmanager-sink.js";
import type { HubCore } from "../core/hub-core.js";
import { rowFamilies, type SlicedFamily } from "./metrics-families.js";
import { acceptsGzip } from "./metrics-gzip.js";
import { BlockPool, Render } from "./metrics-render.js";
import { readRows } from "./metrics-rows.js";

const DEST_LABELS = ["destination", "url"] as const;
type DestLabel = (typeof DEST_LABELS)[number];

/** Rows per slice: a slice of the widest family (4 series a row) is 200 lines, about a ms on an idle core. */
const SLICE_ROWS = 50;
/**
 * Bytes written to one scraper before the event loop is let go: a socket that takes all it is
 * given (loopback, a fast scraper) would otherwise take a whole finished render in one turn.
 * Gzip'd, these are compressed bytes: what the loop's write costs goes by them.
 */
const WRITE_TURN_BYTES = 256 * 1024;
/** How long a finished render serves later scrapes: about a scrape interval's jitter. */
export const DEFAULT_SHARE_MS = 1000;

/** Prometheus text without its first two lines (# HELP, # TYPE): a family's later slices. */
function withoutHeader(text: string): string {
  return text.slice(text.indexOf("\n", text.indexOf("\n") + 1) + 1);
}

/** Resolves once `res` can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

export interface HubMetricsOptions {
  /** A render serves the scrapes that arrive while it is written and this long after (ms). */
  readonly shareMs?: number;
}

export class HubMetrics {
  /** The hub's own series (one each, or a few): rendered in one piece, first. */
  readonly registry = new Registry();
  private readonly sliced: SlicedFamily[];
  private readonly shareMs: number;
  private readonly pool = new BlockPool();
  private last: Render | undefined;

  constructor(
    private readonly core: HubCore,
    private readonly uiClients: () => number,
    forwarding: () => ForwardingStats = () => ({ alertmanager: [], webhooks: [] }),
    options: HubMetricsOptions = {},
  ) {
    this.shareMs = options.shareMs ?? DEFAULT_SHARE_MS;
    this.sliced = rowFamilies((key) => core.totals.get(key));
    const r = this.registry;
    const hubCounter = (name: string, help: string, value: () => number): void => {
      const c: Counter = new Counter({
        name: `semscope_hub_${name}_total`,
        help,
        registers: [r],
        collect: () => {
          c.reset();
          c.inc(value());
        },
      });
    };
    const hubGauge = (name: string, help: string, value: () => number): void => {
      const g: Gauge = new Gauge({
        name: `semscope_hub_${name}`,
        help,
        registers: [r],
        collect: () => {
          g.set(value());
        },
      });
    };
    const st = core.stats;
    hubCounter("rejected", "Refused handshakes and messages, and connections closed for size (hub.rejected).", () => core.rejected);
    hubCounter("accepted_messages", "Agent messages accepted.", () => st.accepted);
    hubCounter("duplicate_batches", "Sample batches acknowledged as already received.", () => st.duplicates);
    hubCounter("rate_limited", "Agent messages refused for rate.", () => st.rateLimited);
    hubCounter("closed_for_size", "Agent connections closed for a packet over 1 MiB.", () => st.closedForSize);
    hubCounter("handshakes_refused", "Handshakes refused (unauthorized, unsupported_protocol, over a /ui dashboard cap).", () => st.handshakesRefused);
    hubCounter("ui_dropped", "Dashboards dropped for falling behind.", () => st.uiDropped);
    hubCounter("recorded_lines", "Lines written to the recording.", () => core.recording?.lines ?? 0);
    hubGauge("agents_connected", "Agents connected now.", () => core.registry.agents().filter((a) => a.connected).length);
    hubGauge("agents", "Agents the hub remembers.", () => core.agentCount);
    hubGauge("ui_clients", "Dashboards connected now.", () => this.uiClients());
    hubGauge("histories", "Semaphore histories held.", () => core.history.size);
    hubGauge("history_bytes", "Typed-array bytes the histories hold.", () => core.history.bytes());
    hubGauge("start_time_seconds", "When the hub started (epoch seconds).", () => core.startedAt / 1000);
    hubGauge("semaphores", "Semaphores the hub holds for its agents (against admission.maxSemaphores).", () => core.admission?.().semaphores ?? 0);
    hubCounter("agent_hello_timeouts", "Agent connections closed for saying no hello within admission.helloTimeoutMs.", () => core.admission?.().helloTimeouts ?? 0);
    hubCounter("agents_evicted", "Disconnected agents forgotten early to make room for a new one.", () => core.admission?.().evictedAgents ?? 0);
    const refused: Counter<"what" | "scope"> = new Counter({
      name: "semscope_hub_admission_refused_total",
      help: "Refused for a cap or an identity: agents (a hello over an agent cap), semaphores (a message over a semaphore cap), identity (a hello taking over a live agentId or service/instance), dashboards (a /ui handshake over a dashboard cap), connections (an /agent handshake over a cap on connections not yet past hello); scope: the cap's, address (one address at its own) or total (the hub full).",
      labelNames: ["what", "scope"],
      registers: [r],
      collect: () => {
        refused.reset();
        const a = core.admission?.();
        for (const what of ["agents", "semaphores", "dashboards", "connections"] as const) for (const scope of ["address", "total"] as const) refused.inc({ what, scope }, a?.refusedScope?.[what]?.[scope] ?? 0);
        refused.inc({ what: "identity" }, a?.refused.identity ?? 0);
      },
    });

    // Where forwarded alerts stand, so a Prometheus rule can page on alerts that cannot get out.
    const destinations = () => {
      const f = forwarding();
      return [
        ...f.alertmanager.map((s) => ({ s, labels: { destination: "alertmanager", url: s.url } })),
        ...f.webhooks.map((s) => ({ s, labels: { destination: "webhook", url: s.url } })),
      ];
    };
    const forwardedCounter = (name: string, help: string, value: (s: SinkStats) => number): void => {
      const c: Counter<DestLabel> = new Counter({
        name: `semscope_hub_alert_forwarding_${name}_total`,
        help,
        labelNames: DEST_LABELS,
        registers: [r],
        collect: () => {
          c.reset();
          for (const d of destinations()) c.inc(d.labels, value(d.s));
        },
      });
    };
    forwardedCounter("sent", "Requests an Alertmanager or webhook accepted.", (s) => s.sent);
    forwardedCounter("failures", "Requests that failed (refused, timed out, unreachable); each is retried.", (s) => s.failures);
    forwardedCounter("dropped", "Alerts or events dropped because too many waited while the destination was away.", (s) => s.dropped);
    const waiting: Gauge<DestLabel> = new Gauge({
      name: "semscope_hub_alert_forwarding_waiting",
      help: "Alerts (Alertmanager) or events (webhook) waiting to be delivered.",
      labelNames: DEST_LABELS,
      registers: [r],
      collect: () => {
        waiting.reset();
        for (const d of destinations()) waiting.set(d.labels, d.s.waiting);
      },
    });

    const alerts: Gauge<"rule" | "severity"> = new Gauge({
      name: "semscope_hub_alerts_active",
      help: "Active alerts by rule and severity.",
      labelNames: ["rule", "severity"],
      registers: [r],
      collect: () => {
        alerts.reset();
        for (const a of core.engine.activeAlerts()) alerts.inc({ rule: a.rule, severity: a.severity });
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * Writes the exposition to `res` (headers and body) as it is rendered, keeping to res's pace:
   * gzip'd when `acceptEncoding` (the request's Accept-Encoding) takes gzip, else plain text.
   */
  async serve(res: ServerResponse, acceptEncoding?: string): Promise<void> {
    const gzip = acceptsGzip(acceptEncoding);
    res.writeHead(200, { "Content-Type": this.contentType, "Cache-Control": "no-store", Vary: "Accept-Encoding", ...(gzip ? { "Content-Encoding": "gzip" } : {}) });
    const render = this.current();
    // Its blocks are reused once every response reading it is done with them (closed).
    render.open();
    res.once("close", () => render.close());
    let turnBytes = 0;
    for await (const chunk of (gzip ? render.gzipped() : render).read()) {
      if (res.destroyed) return;
      // A drain can come within the same turn (a write the socket took at once), so the turn
      // is given up by bytes written, not only by a full buffer.
      if (!res.write(chunk)) await drained(res);
      turnBytes += chunk.length;
      if (turnBytes >= WRITE_TURN_BYTES) {
        turnBytes = 0;
        await this.core.turns.next("scrapes");
      }
    }
    res.end();
  }

  /** The whole exposition as one string (tests, embedders). */
  async render(): Promise<string> {
    const render = this.current();
    render.open();
    try {
      const parts: Buffer[] = [];
      for await (const chunk of render.read()) parts.push(chunk);
      return Buffer.concat(parts).toString("utf8");
    } finally {
      render.close();
    }
  }

  /** The render in progress or finished within shareMs, else a new one. */
  private current(): Render {
    const last = this.last;
    if (last !== undefined && performance.now() - last.endedAt < this.shareMs) return last;
    const render = new Render(this.pool);
    this.last = render;
    // Once shared long enough, its text is let go (back to the pool once its readers are done).
    const finish = (err?: unknown) => {
      render.end(err);
      setTimeout(() => {
        if (this.last === render) this.last = undefined;
        render.retire();
      }, this.shareMs).unref();
    };
    void this.write(render).then(() => finish(), finish);
    return render;
  }

  private async write(out: Render): Promise<void> {
    const rows = await readRows(this.core);
    out.push(await this.registry.metrics());
    for (const fam of this.sliced) {
      const n = fam.count(rows);
      for (let i = 0; i === 0 || i < n; i += SLICE_ROWS) {
        await this.core.turns.next("scrapes");
        fam.rows = rows;
        fam.from = i;
        fam.to = Math.min(i + SLICE_ROWS, n);
        try {
          const text = await fam.registry.metrics();
          out.push(i === 0 ? text : withoutHeader(text));
        } finally {
          fam.rows = undefined;
        }
      }
    }
  }
}
