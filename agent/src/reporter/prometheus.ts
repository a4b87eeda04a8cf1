// The same numbers the hub gets, as Prometheus text. The state is folded from the collected
// interval samples (so adapters are covered too, and nothing calls sample() a second time).
// Rendering happens only on demand: nothing here runs per interval beyond the fold.
//
// prom-client renders through its own Registry (never the global one, so nothing can clash with
// the host's metrics, and a host can Registry.merge() ours into its own). Its render is
// async-only, so prometheus(), which the API promises as a plain string, renders the same
// families with the small synchronous formatter below; a test holds the two outputs equal.
// prom-client is an optional peer dependency, loaded the first time `registry` is read: the text
// exposition needs none of it.
import { createRequire } from "node:module";
import type { Metric, Registry } from "prom-client";
import { BUCKETS, bucketMidMs, type SparseHist } from "../../../shared/histogram.js";
import { SAMPLE_COUNTERS, type SampleCounter } from "../../../shared/protocol/sample-layout.js";
import type { Sample } from "../../../shared/protocol/types.js";
import { zeroCounters, type SemaphoreCounters } from "../counters.js";

/** Bucket bounds (seconds) for wait and hold: 100 µs to 5 min, the range semaphores live in. */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

// Each of the 256 wire buckets lands in the first Prometheus bucket its geometric middle fits,
// the value the wire's percentiles use too, so both views agree within the layout's ~9 %.
const PROM_INDEX_OF_WIRE_BUCKET: Uint8Array = (() => {
  const map = new Uint8Array(BUCKETS);
  for (let b = 0; b < BUCKETS; b++) {
    const s = bucketMidMs(b) / 1000;
    let i = 0;
    while (i < DURATION_BUCKETS_SECONDS.length && s > DURATION_BUCKETS_SECONDS[i]) i++;
    map[b] = i;
  }
  return map;
})();

type MetricKind = "gauge" | "counter" | "histogram";
type Labels = Record<string, string>;

export interface Point {
  /** Appended to the family name: "" or "_bucket", "_sum", "_count". */
  suffix: string;
  labels: Labels;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: MetricKind;
  points: Point[];
}

/** Agent-wide numbers, read live at render time. */
export interface AgentNumbers {
  connected: boolean;
  bufferedBatches: number;
  dropped: number;
  droppedEvents: number;
  rejected: number;
}


class DurationHist {
  /** Non-cumulative counts per Prometheus bucket; the last slot is +Inf. */
  readonly counts = new Float64Array(DURATION_BUCKETS_SECONDS.length + 1);
  sum = 0;
  count = 0;

  add(hist: SparseHist): void {
    for (const [b, c] of hist) {
      this.counts[PROM_INDEX_OF_WIRE_BUCKET[b]] += c;
      // The wire keeps no exact sum; the bucket middles give one within the same ~9 %.
      this.sum += (c * bucketMidMs(b)) / 1000;
      this.count += c;
    }
  }
}

interface Series {
  labels: Labels;
  last: Sample;
  totals: SemaphoreCounters;
  wait: DurationHist;
  hold: DurationHist;
}

const GAUGES: readonly { name: string; help: string; value: (s: Sample) => number }[] = [
  { name: "semscope_semaphore_cap", help: "Permits of the semaphore (N).", value: (s) => s.cap },
  { name: "semscope_semaphore_in_use", help: "Permits held at the last sample.", value: (s) => s.inUse },
  { name: "semscope_semaphore_available", help: "Permits free at the last sample (negative while a lowered cap is over-subscribed).", value: (s) => s.available },
  { name: "semscope_semaphore_waiters", help: "Callers queued for a permit at the last sample.", value: (s) => s.waiters },
  { name: "semscope_semaphore_oldest_wait_seconds", help: "Age of the oldest waiter at the last sample.", value: (s) => s.oldestWaitMs / 1000 },
  { name: "semscope_semaphore_longest_hold_seconds", help: "Age of the oldest current holder at the last sample.", value: (s) => s.longestHoldMs / 1000 },
];

/** Each counter's family, listed in SAMPLE_COUNTERS order. */
const COUNTER_FAMILIES: Record<SampleCounter, { name: string; help: string }> = {
  acquired: { name: "semscope_semaphore_acquired_total", help: "Permits granted." },
  released: { name: "semscope_semaphore_released_total", help: "Permits released." },
  timeouts: { name: "semscope_semaphore_timeouts_total", help: "Acquires that timed out." },
  rejections: { name: "semscope_semaphore_rejections_total", help: "Acquires refused at once (maxWaiters reached, tryAcquire refused)." },
  aborts: { name: "semscope_semaphore_aborts_total", help: "Acquires aborted by their signal." },
  doubleReleases: { name: "semscope_semaphore_double_releases_total", help: "Second release() calls on one permit." },
  leaseExpiries: { name: "semscope_semaphore_lease_expiries_total", help: "Permits taken back after their lease expired." },
};

export class PrometheusExporter {
  private readonly series = new Map<string, Series>();
  private promRegistry: Registry | undefined;

  constructor(
    private readonly service: string,
    private readonly instance: string,
    private readonly agentNumbers: () => AgentNumbers,
  ) {}

  /** prom-client's own Registry holding the same families; never the global default one. Throws if prom-client is not installed. */
  get registry(): Registry {
    return (this.promRegistry ??= this.makeRegistry());
  }

  private makeRegistry(): Registry {
    let prom: typeof import("prom-client");
    try {
      prom = createRequire(import.meta.url)("prom-client") as typeof import("prom-client");
    } catch (err) {
      throw new Error(`agent.registry needs prom-client, an optional peer dependency of semscope-agent (npm install prom-client): ${(err as Error).message.split("\n")[0]}`);
    }
    const registry = new prom.Registry();
    for (const build of this.familyBuilders()) {
      // prom-client formats any metric whose get() yields { name, help, type, values }; that is
      // how histograms with pre-bucketed counts get in without one observe() per recorded value.
      const probe = build();
      const metric = {
        name: probe.name,
        help: probe.help,
        type: probe.type,
        aggregator: "sum",
        get: () => Promise.resolve(toPromClient(build())),
        reset: () => undefined,
      };
      registry.registerMetric(metric as unknown as Metric);
    }
    return registry;
  }

  /** Folds one interval's samples in; series of semaphores no longer reported disappear. */
  /** The interval's samples; with `live`, a listed id without one is unchanged (changed_only), not gone. */
  update(samples: readonly Sample[], live?: ReadonlySet<string>): void {
    const seen = new Set<string>();
    for (const s of samples) {
      seen.add(s.id);
      let series = this.series.get(s.id);
      if (series === undefined) {
        series = {
          labels: { service: this.service, instance: this.instance, semaphore: s.id },
          last: s,
          totals: zeroCounters(),
          wait: new DurationHist(),
          hold: new DurationHist(),
        };
        this.series.set(s.id, series);
      }
      series.last = s;
      for (const f of SAMPLE_COUNTERS) series.totals[f] += s[f];
      series.wait.add(s.waitMs.hist);
      series.hold.add(s.holdMs.hist);
    }
    for (const id of this.series.keys()) if (!seen.has(id) && live?.has(id) !== true) this.series.delete(id);
  }

  families(): Family[] {
    return this.familyBuilders().map((build) => build());
  }

  /** The Prometheus text exposition (format 0.0.4), byte-for-byte what the prom-client registry renders. */
  text(): string {
    return formatExposition(this.families());
  }

  private familyBuilders(): (() => Family)[] {
    const perSeries = (name: string, help: string, type: MetricKind, value: (s: Series) => number) => (): Family => ({
      name,
      help,
      type,
      points: [...this.series.values()].map((s) => ({ suffix: "", labels: s.labels, value: value(s) })),
    });
    const agent = { service: this.service, instance: this.instance };
    const agentFamily = (name: string, help: string, type: MetricKind, value: (n: AgentNumbers) => number) => (): Family => ({
      name,
      help,
      type,
      points: [{ suffix: "", labels: agent, value: value(this.agentNumbers()) }],
    });
    return [
      ...GAUGES.map((g) => perSeries(g.name, g.help, "gauge", (s) => g.value(s.last))),
      ...SAMPLE_COUNTERS.map((f) => perSeries(COUNTER_FAMILIES[f].name, COUNTER_FAMILIES[f].help, "counter", (s) => s.totals[f])),
      () => this.histogramFamily("semscope_semaphore_wait_duration_seconds", "Time from acquire() to the grant, for grants since the agent connected.", (s) => s.wait),
      () => this.histogramFamily("semscope_semaphore_hold_duration_seconds", "Time from grant to release, for releases since the agent connected.", (s) => s.hold),
      agentFamily("semscope_agent_connected", "1 while the agent streams to the hub.", "gauge", (n) => (n.connected ? 1 : 0)),
      agentFamily("semscope_agent_buffered_batches", "Sample batches waiting for the hub's ack.", "gauge", (n) => n.bufferedBatches),
      agentFamily("semscope_agent_dropped_batches_total", "Sample batches lost (buffer full while the hub was away, or refused for size).", "counter", (n) => n.dropped),
      agentFamily("semscope_agent_dropped_events_total", "Events lost (buffer full, or too big to send).", "counter", (n) => n.droppedEvents),
      agentFamily("semscope_agent_rejected_total", "Messages the hub refused (ok:false).", "counter", (n) => n.rejected),
    ];
  }

  private histogramFamily(name: string, help: string, pick: (s: Series) => DurationHist): Family {
    const points: Point[] = [];
    for (const s of this.series.values()) {
      const h = pick(s);
      let cumulative = 0;
      for (let i = 0; i < DURATION_BUCKETS_SECONDS.length; i++) {
        cumulative += h.counts[i];
        points.push({ suffix: "_bucket", labels: { ...s.labels, le: String(DURATION_BUCKETS_SECONDS[i]) }, value: cumulative });
      }
      points.push({ suffix: "_bucket", labels: { ...s.labels, le: "+Inf" }, value: h.count });
      points.push({ suffix: "_sum", labels: s.labels, value: h.sum });
      points.push({ suffix: "_count", labels: s.labels, value: h.count });
    }
    return { name, help, type: "histogram", points };
  }
}

function toPromClient(f: Family) {
  return {
    name: f.name,
    help: f.help,
    type: f.type,
    aggregator: "sum",
    values: f.points.map((p) => ({ value: p.value, labels: { ...p.labels }, metricName: f.name + p.suffix })),
  };
}

// ---- the text format, written the way prom-client writes it ----

function escapeHelp(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function escapeLabelValue(s: string): string {
  return escapeHelp(s).replace(/"/g, '\\"');
}

export function formatValue(v: number): string {
  // prom-client writes "Nan"; the format (and Prometheus's parser) says "NaN". Never produced here anyway.
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return `${v}`;
}

export function formatExposition(families: readonly Family[]): string {
  const blocks = families.map((f) => {
    const lines = [`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`];
    for (const p of f.points) {
      const labels = Object.entries(p.labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
      lines.push(`${f.name}${p.suffix}${labels.length > 0 ? `{${labels.join(",")}}` : ""} ${formatValue(p.value)}`);
    }
    return lines.join("\n");
  });
  return `${blocks.join("\n\n")}\n`;
}
