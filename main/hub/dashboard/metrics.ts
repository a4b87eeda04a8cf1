// GET /metrics: Prometheus text written by prom-client, from Registries of the hub's own (never
// prom-client's global one, which an embedding process may use). Values are read at scrape time
// from the engine and the running totals, so a sample costs nothing here and a gone semaphore's
// series just stop. At the hub's design scale (10,000 semaphores) the text is ~25 MB: a family
// with a series per semaphore, fleet entry or agent has a Registry of its own, rendered a slice of
// rows at a time with the event loop free between slices, and the slices are streamed to the
// scraper as they come. Scrapes within shareMs of a render get the same one.
import type { ServerResponse } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";
import { Counter, Gauge, Registry } from "prom-client";
import type { FleetEntry } from "../../../shared/alerts/index.js";
import type { ForwardingStats } from "../forwarding/alert-forwarder.js";
import type { SinkStats } from "../forwarding/alertmanager-sink.js";
import { SAMPLE_COUNTERS, type AgentState, type SampleCounter, type SemaphoreState } from "../../../shared/protocol/index.js";
import type { HubCore } from "../core/hub-core.js";

const SEM_LABELS = ["service", "instance", "semaphore"] as const;
type SemLabel = (typeof SEM_LABELS)[number];

function labels(s: SemaphoreState): Record<SemLabel, string> {
  return { service: s.service, instance: s.instance, semaphore: s.id };
}

const COUNTER_NAMES: Record<SampleCounter, string> = {
  acquired: "acquired",
  released: "released",
  timeouts: "timeouts",
  rejections: "rejections",
  aborts: "aborts",
  doubleReleases: "double_releases",
  leaseExpiries: "lease_expiries",
};

const QUANTILES = [
  ["0.5", "p50"],
  ["0.9", "p90"],
  ["0.99", "p99"],
  ["1", "max"],
] as const;

const STATUSES = ["ok", "saturated", "convoy", "leak"] as const;

const DEST_LABELS = ["destination", "url"] as const;
type DestLabel = (typeof DEST_LABELS)[number];

/** Rows per slice: a slice of the widest family (4 series a row) is 200 lines, about a ms on an idle core. */
const SLICE_ROWS = 50;
/** How long a finished render serves later scrapes: about a scrape interval's jitter. */
export const DEFAULT_SHARE_MS = 1000;

/** What one render reads, taken at its start so every family agrees on who is there. */
interface Rows {
  readonly semaphores: readonly SemaphoreState[];
  readonly fleet: readonly FleetEntry[];
  readonly agents: readonly AgentState[];
}

/** A family with a series per row: its own Registry, whose metric's collect reads `slice`. */
class SlicedFamily<T> {
  readonly registry = new Registry();
  slice: readonly T[] = [];
  constructor(readonly rows: (r: Rows) => readonly T[]) {}
}

/** Prometheus text without its first two lines (# HELP, # TYPE): a family's later slices. */
function withoutHeader(text: string): string {
  return text.slice(text.indexOf("\n", text.indexOf("\n") + 1) + 1);
}

/** One render as it is written: scrapes that join it read what is there, then wait for the rest. */
class Render {
  private readonly chunks: Buffer[] = [];
  private done = false;
  private failure: unknown;
  private wake: (() => void)[] = [];
  endedAt = Infinity;

  push(text: string): void {
    if (text !== "") this.chunks.push(Buffer.from(text, "utf8"));
    this.notify();
  }

  end(failure?: unknown): void {
    this.done = true;
    this.failure = failure;
    this.endedAt = performance.now();
    this.notify();
  }

  async *read(): AsyncGenerator<Buffer> {
    for (let i = 0; ; ) {
      while (i < this.chunks.length) yield this.chunks[i++];
      if (this.done) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      await new Promise<void>((r) => this.wake.push(r));
    }
  }

  private notify(): void {
    for (const w of this.wake.splice(0)) w();
  }
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
  private readonly sliced: SlicedFamily<never>[] = [];
  private readonly shareMs: number;
  private last: Render | undefined;

  constructor(
    private readonly core: HubCore,
    private readonly uiClients: () => number,
    forwarding: () => ForwardingStats = () => ({ alertmanager: [], webhooks: [] }),
    options: HubMetricsOptions = {},
  ) {
    this.shareMs = options.shareMs ?? DEFAULT_SHARE_MS;
    const r = this.registry;
    /** A family over `rows`; `define` makes its metric in the given registry, reading the slice. */
    const perRow = <T>(rows: (r: Rows) => readonly T[], define: (registry: Registry, slice: () => readonly T[]) => void): void => {
      const fam = new SlicedFamily<T>(rows);
      define(fam.registry, () => fam.slice);
      this.sliced.push(fam as unknown as SlicedFamily<never>);
    };
    const semaphores = (rows: Rows) => rows.semaphores;

    const sem = (name: string, help: string, value: (s: SemaphoreState) => number | undefined): void =>
      perRow(semaphores, (registry, slice) => {
        const g: Gauge<SemLabel> = new Gauge({
          name: `semscope_semaphore_${name}`,
          help,
          labelNames: SEM_LABELS,
          registers: [registry],
          collect: () => {
            g.reset();
            for (const s of slice()) {
              const v = value(s);
              if (v !== undefined) g.set(labels(s), v);
            }
          },
        });
      });
    sem("cap", "Permits (latest sample, else as registered).", (s) => s.cap);
    sem("in_use", "Permits held at the latest sample.", (s) => s.inUse);
    sem("available", "Permits free at the latest sample (negative while a lowered cap is over-subscribed).", (s) => s.available);
    sem("waiters", "Callers queued at the latest sample.", (s) => s.waiters);
    sem("oldest_wait_seconds", "Age of the oldest waiter at the latest sample.", (s) => s.oldestWaitMs / 1000);
    sem("longest_hold_seconds", "Age of the oldest current holder at the latest sample.", (s) => (s.last === null ? undefined : s.last.longestHoldMs / 1000));
    sem("last_sample_timestamp_seconds", "Sample time (agent clock) of the latest sample.", (s) => {
      const t = this.core.history.get(s.key)?.latestT() ?? null;
      return t === null ? undefined : t / 1000;
    });

    for (const [kind, field] of [["wait", "waitMs"], ["hold", "holdMs"]] as const) {
      perRow(semaphores, (registry, slice) => {
        const g: Gauge<SemLabel | "quantile"> = new Gauge({
          name: `semscope_semaphore_${kind}_seconds`,
          help: `${kind === "wait" ? "Wait (acquire to grant)" : "Hold (grant to release)"} time quantiles over the latest interval, as the agent measured them.`,
          labelNames: [...SEM_LABELS, "quantile"],
          registers: [registry],
          collect: () => {
            g.reset();
            for (const s of slice()) {
              const summary = s.last?.[field];
              if (summary === undefined || summary.count === 0) continue;
              for (const [q, k] of QUANTILES) g.set({ ...labels(s), quantile: q }, summary[k] / 1000);
            }
          },
        });
      });
    }

    perRow(semaphores, (registry, slice) => {
      const status: Gauge<SemLabel | "status"> = new Gauge({
        name: "semscope_semaphore_status",
        help: "1 for the semaphore's current status (ok, saturated, convoy, leak), 0 for the others.",
        labelNames: [...SEM_LABELS, "status"],
        registers: [registry],
        collect: () => {
          status.reset();
          for (const s of slice()) for (const st of STATUSES) status.set({ ...labels(s), status: st }, s.status === st ? 1 : 0);
        },
      });
    });

    SAMPLE_COUNTERS.forEach((field, i) => {
      perRow(semaphores, (registry, slice) => {
        const c: Counter<SemLabel> = new Counter({
          name: `semscope_semaphore_${COUNTER_NAMES[field]}_total`,
          help: `Sum of the samples' \`${field}\` since the hub started.`,
          labelNames: SEM_LABELS,
          registers: [registry],
          collect: () => {
            c.reset();
            for (const s of slice()) {
              const tot = this.core.totals.get(s.key);
              if (tot !== undefined) c.inc(labels(s), tot[i]);
            }
          },
        });
      });
    });

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
    hubCounter("handshakes_refused", "Handshakes refused (unauthorized, unsupported_protocol).", () => st.handshakesRefused);
    hubCounter("ui_dropped", "Dashboards dropped for falling behind.", () => st.uiDropped);
    hubCounter("recorded_lines", "Lines written to the recording.", () => core.recording?.lines ?? 0);
    hubGauge("agents_connected", "Agents connected now.", () => core.registry.agents().filter((a) => a.connected).length);
    hubGauge("agents", "Agents the hub remembers.", () => core.agentCount);
    hubGauge("ui_clients", "Dashboards connected now.", () => this.uiClients());
    hubGauge("histories", "Semaphore histories held.", () => core.history.size);
    hubGauge("history_bytes", "Typed-array bytes the histories hold.", () => core.history.bytes());
    hubGauge("start_time_seconds", "When the hub started (epoch seconds).", () => core.startedAt / 1000);
    hubGauge("semaphores", "Semaphores the hub holds for its agents (against admission.maxSemaphores).", () => core.admission?.().semaphores ?? 0);
    hubCounter("agents_evicted", "Disconnected agents forgotten early to make room for a new one.", () => core.admission?.().evictedAgents ?? 0);
    const refused: Counter<"what" | "scope"> = new Counter({
      name: "semscope_hub_admission_refused_total",
      help: "Refused for a cap or an identity: agents (a hello over an agent cap), semaphores (a message over a semaphore cap), identity (a hello taking over a live agentId or service/instance); scope: the cap's, address (one address at its own) or total (the hub full).",
      labelNames: ["what", "scope"],
      registers: [r],
      collect: () => {
        refused.reset();
        const a = core.admission?.();
        for (const what of ["agents", "semaphores"] as const) for (const scope of ["address", "total"] as const) refused.inc({ what, scope }, a?.refusedScope?.[what][scope] ?? 0);
        refused.inc({ what: "identity" }, a?.refused.identity ?? 0);
      },
    });

    perRow(
      (rows) => rows.agents,
      (registry, slice) => {
        const agentUp: Gauge<"service" | "instance"> = new Gauge({
          name: "semscope_hub_agent_up",
          help: "1 while the agent streams to this hub, 0 once it is gone (kept while the hub remembers it).",
          labelNames: ["service", "instance"],
          registers: [registry],
          collect: () => {
            agentUp.reset();
            for (const a of slice()) agentUp.set({ service: a.service, instance: a.instance }, a.connected ? 1 : 0);
          },
        });
      },
    );

    // The fleet as the over_budget rule sees it (shared/alerts/fleet.ts): replicas of a service
    // sharing a semaphore name, so a Prometheus rule and the hub's own cannot disagree on a sum.
    const fleet = (name: string, help: string, value: (f: FleetEntry) => number | null): void =>
      perRow(
        (rows) => rows.fleet,
        (registry, slice) => {
          const g: Gauge<"service" | "semaphore" | "scope"> = new Gauge({
            name: `semscope_fleet_${name}`,
            help,
            labelNames: ["service", "semaphore", "scope"],
            registers: [registry],
            collect: () => {
              g.reset();
              for (const f of slice()) {
                const v = value(f);
                if (v !== null) g.set({ service: f.service, semaphore: f.name, scope: f.scope }, v);
              }
            },
          });
        },
      );
    fleet("cap", "Permits the fleet admits: the replicas' caps summed (scope process), the global cap (scope global).", (f) => f.cap);
    fleet("in_use", "Permits held across the live replicas.", (f) => f.inUse);
    fleet("waiters", "Callers queued across the live replicas.", (f) => f.waiters);
    fleet("instances", "Live replicas reporting the semaphore.", (f) => f.instances);
    fleet("budget", "The budget the replicas declare (the smallest, if they disagree); absent without one.", (f) => f.budget);

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

  /** Writes the exposition to `res` (headers and body) as it is rendered, keeping to res's pace. */
  async serve(res: ServerResponse): Promise<void> {
    res.writeHead(200, { "Content-Type": this.contentType, "Cache-Control": "no-store" });
    for await (const chunk of this.current().read()) {
      if (res.destroyed) return;
      if (!res.write(chunk)) await drained(res);
    }
    res.end();
  }

  /** The whole exposition as one string (tests, embedders). */
  async render(): Promise<string> {
    const parts: Buffer[] = [];
    for await (const chunk of this.current().read()) parts.push(chunk);
    return Buffer.concat(parts).toString("utf8");
  }

  /** The render in progress or finished within shareMs, else a new one. */
  private current(): Render {
    const last = this.last;
    if (last !== undefined && performance.now() - last.endedAt < this.shareMs) return last;
    const render = new Render();
    this.last = render;
    // Once shared long enough, its text is let go (a scrape every 15 s would otherwise keep ~25 MB).
    const finish = (err?: unknown) => {
      render.end(err);
      setTimeout(() => {
        if (this.last === render) this.last = undefined;
      }, this.shareMs).unref();
    };
    void this.write(render).then(() => finish(), finish);
    return render;
  }

  private async write(out: Render): Promise<void> {
    const rows = await this.rows();
    out.push(await this.registry.metrics());
    for (const fam of this.sliced) {
      const all = fam.rows(rows);
      for (let i = 0; i === 0 || i < all.length; i += SLICE_ROWS) {
        await nextTurn();
        fam.slice = all.slice(i, i + SLICE_ROWS);
        try {
          const text = await fam.registry.metrics();
          out.push(i === 0 ? text : withoutHeader(text));
        } finally {
          fam.slice = [];
        }
      }
    }
  }

  /** Every semaphore's state, taken a slice at a time; the fleet; the agents. */
  private async rows(): Promise<Rows> {
    const trackers = [...this.core.registry.trackers()];
    const semaphores: SemaphoreState[] = [];
    for (let i = 0; i < trackers.length; i += SLICE_ROWS) {
      for (const t of trackers.slice(i, i + SLICE_ROWS)) semaphores.push(t.state());
      await nextTurn();
    }
    // Totals of semaphores that are gone stop being exported, and are dropped.
    const live = new Set(semaphores.map((s) => s.key));
    for (const key of this.core.totals.keys()) if (!live.has(key)) this.core.totals.delete(key);
    return { semaphores, fleet: this.core.engine.fleet(), agents: this.core.registry.agents() };
  }
}
