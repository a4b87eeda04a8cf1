// GET /metrics: Prometheus text from a Registry of the hub's own (never prom-client's global
// one, which an embedding process may use). Values are read at scrape time from the engine and
// the running totals, so a sample costs nothing here and a gone semaphore's series just stop.
import { Counter, Gauge, Registry } from "prom-client";
import type { FleetEntry } from "../../../shared/alerts/index.js";
import type { ForwardingStats } from "../forwarding/alert-forwarder.js";
import type { SinkStats } from "../forwarding/alertmanager-sink.js";
import { SAMPLE_COUNTERS, type SampleCounter, type SemaphoreState } from "../../../shared/protocol/index.js";
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

export class HubMetrics {
  readonly registry = new Registry();
  private current: SemaphoreState[] = [];
  private fleet: FleetEntry[] = [];

  constructor(
    private readonly core: HubCore,
    private readonly uiClients: () => number,
    forwarding: () => ForwardingStats = () => ({ alertmanager: [], webhooks: [] }),
  ) {
    const r = this.registry;
    const sem = (name: string, help: string, value: (s: SemaphoreState) => number | undefined): void => {
      const g: Gauge<SemLabel> = new Gauge({
        name: `semscope_semaphore_${name}`,
        help,
        labelNames: SEM_LABELS,
        registers: [r],
        collect: () => {
          g.reset();
          for (const s of this.current) {
            const v = value(s);
            if (v !== undefined) g.set(labels(s), v);
          }
        },
      });
    };
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
      const g: Gauge<SemLabel | "quantile"> = new Gauge({
        name: `semscope_semaphore_${kind}_seconds`,
        help: `${kind === "wait" ? "Wait (acquire to grant)" : "Hold (grant to release)"} time quantiles over the latest interval, as the agent measured them.`,
        labelNames: [...SEM_LABELS, "quantile"],
        registers: [r],
        collect: () => {
          g.reset();
          for (const s of this.current) {
            const summary = s.last?.[field];
            if (summary === undefined || summary.count === 0) continue;
            for (const [q, k] of QUANTILES) g.set({ ...labels(s), quantile: q }, summary[k] / 1000);
          }
        },
      });
    }

    const status: Gauge<SemLabel | "status"> = new Gauge({
      name: "semscope_semaphore_status",
      help: "1 for the semaphore's current status (ok, saturated, convoy, leak), 0 for the others.",
      labelNames: [...SEM_LABELS, "status"],
      registers: [r],
      collect: () => {
        status.reset();
        for (const s of this.current) for (const st of STATUSES) status.set({ ...labels(s), status: st }, s.status === st ? 1 : 0);
      },
    });

    SAMPLE_COUNTERS.forEach((field, i) => {
      const c: Counter<SemLabel> = new Counter({
        name: `semscope_semaphore_${COUNTER_NAMES[field]}_total`,
        help: `Sum of the samples' \`${field}\` since the hub started.`,
        labelNames: SEM_LABELS,
        registers: [r],
        collect: () => {
          c.reset();
          for (const s of this.current) {
            const tot = this.core.totals.get(s.key);
            if (tot !== undefined) c.inc(labels(s), tot[i]);
          }
        },
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
    const refused: Counter<"what"> = new Counter({
      name: "semscope_hub_admission_refused_total",
      help: "Refused for a cap or an identity: agents (a hello over an agent cap), semaphores (a message over a semaphore cap), identity (a hello taking over a live agentId or service/instance).",
      labelNames: ["what"],
      registers: [r],
      collect: () => {
        refused.reset();
        const a = core.admission?.();
        for (const what of ["agents", "semaphores", "identity"] as const) refused.inc({ what }, a?.refused[what] ?? 0);
      },
    });

    const agentUp: Gauge<"service" | "instance"> = new Gauge({
      name: "semscope_hub_agent_up",
      help: "1 while the agent streams to this hub, 0 once it is gone (kept while the hub remembers it).",
      labelNames: ["service", "instance"],
      registers: [r],
      collect: () => {
        agentUp.reset();
        for (const a of core.registry.agents()) agentUp.set({ service: a.service, instance: a.instance }, a.connected ? 1 : 0);
      },
    });

    // The fleet as the over_budget rule sees it (shared/alerts/fleet.ts): replicas of a service
    // sharing a semaphore name, so a Prometheus rule and the hub's own cannot disagree on a sum.
    const fleet = (name: string, help: string, value: (f: FleetEntry) => number | null): void => {
      const g: Gauge<"service" | "semaphore" | "scope"> = new Gauge({
        name: `semscope_fleet_${name}`,
        help,
        labelNames: ["service", "semaphore", "scope"],
        registers: [r],
        collect: () => {
          g.reset();
          for (const f of this.fleet) {
            const v = value(f);
            if (v !== null) g.set({ service: f.service, semaphore: f.name, scope: f.scope }, v);
          }
        },
      });
    };
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

  async render(): Promise<string> {
    this.current = this.core.registry.semaphores();
    this.fleet = this.core.engine.fleet();
    // Totals of semaphores that are gone stop being exported, and are dropped.
    const live = new Set(this.current.map((s) => s.key));
    for (const key of this.core.totals.keys()) if (!live.has(key)) this.core.totals.delete(key);
    try {
      return await this.registry.metrics();
    } finally {
      this.current = [];
      this.fleet = [];
    }
  }
}
