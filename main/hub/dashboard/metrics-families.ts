// /metrics' families with a series per semaphore, fleet group or agent, which metrics.ts renders
// a slice of rows at a time: each has a Registry of its own, and its metric's values are the
// slice's rows. Each is a prom-client Gauge or Counter whose get() gives the Registry the rows'
// values as they are, rather than through set()/inc(), which keep a map of label sets, validated
// and hashed per series. Every value carries `sharedLabels`, which the Registry formats once per
// object and keeps (a WeakMap): without it, each line gets a fresh empty object as a key there, an
// entry per line per scrape, and most of a render's garbage. A semaphore's labels are one object
// for as long as it lives, passed as `sharedLabels` where they end a line's labels, so they are
// escaped and joined once, not on each of its 26 lines of every scrape.
import { Counter, Gauge, Registry } from "prom-client";
import type { SemaphoreTracker } from "../../../shared/alerts/semaphore-tracker.js";
import type { FleetCounts } from "../../../shared/alerts/index.js";
import { SAMPLE_COUNTERS, type SampleCounter } from "../../../shared/protocol/index.js";
import type { Rows, SemaphoreRows } from "./metrics-rows.js";

type Labels = Readonly<Record<string, string>>;
/** A series for the Registry to format: `labels` first, then `shared`. */
type Push = (value: number, labels: Labels, shared: Labels) => void;
/** Pushes the series of rows [from, to). */
type Fill = (rows: Rows, from: number, to: number, push: Push) => void;

type Metric = Awaited<ReturnType<Gauge["get"]>>;
type Value = Metric["values"][number] & { sharedLabels: Labels };

const NONE: Labels = Object.freeze({});

function withRows(metric: Metric, slice: Slice, fill: Fill): Metric {
  const values: Value[] = [];
  if (slice.rows !== undefined) fill(slice.rows, slice.from, slice.to, (value, labels, sharedLabels) => values.push({ value, labels, sharedLabels }));
  metric.values = values;
  return metric;
}

/** The rows a family is being rendered from. */
interface Slice {
  rows: Rows | undefined;
  from: number;
  to: number;
}

interface Family {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly fill: Fill;
}

/** A family with a series per row: its Registry renders rows [from, to) of `rows`. */
export class SlicedFamily implements Slice {
  readonly registry = new Registry();
  rows: Rows | undefined;
  from = 0;
  to = 0;

  constructor(
    f: Family,
    kind: "gauge" | "counter",
    /** How many rows of a render it has. */
    readonly count: (rows: Rows) => number,
  ) {
    const config = { name: f.name, help: f.help, labelNames: f.labelNames, registers: [this.registry] };
    const metric = kind === "gauge" ? new Gauge(config) : new Counter(config);
    // Its own get() gives name, help and type (it holds no series); the values are the slice's.
    const own = metric.get.bind(metric);
    metric.get = async () => withRows(await own(), this, f.fill);
  }
}

const SEM_LABELS = ["service", "instance", "semaphore"] as const;

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
const QUANTILE_LABELS = QUANTILES.map(([q]) => Object.freeze({ quantile: q }));

const STATUSES = ["ok", "saturated", "convoy", "leak"] as const;
const STATUS_LABELS = STATUSES.map((status) => Object.freeze({ status }));

/** Every per-row family, in the order they are written; `totals` gives a semaphore's counter totals. */
export function rowFamilies(totals: (key: string) => Float64Array | undefined): SlicedFamily[] {
  const out: SlicedFamily[] = [];
  const semaphores = (rows: Rows) => rows.semaphores.length;

  // One labels object per semaphore while it lives: prom-client keeps its formatted text.
  const labelCache = new WeakMap<SemaphoreTracker, Labels>();
  const labelsOf = (s: SemaphoreRows, i: number): Labels => {
    const t = s.trackers[i];
    let l = labelCache.get(t);
    if (l === undefined) labelCache.set(t, (l = Object.freeze({ service: t.service, instance: t.instance, semaphore: t.info.id })));
    return l;
  };

  const sem = (name: string, help: string, value: (s: SemaphoreRows, i: number) => number | undefined): void => {
    const fill: Fill = (rows, from, to, push) => {
      const s = rows.semaphores;
      for (let i = from; i < to; i++) {
        const v = value(s, i);
        if (v !== undefined) push(v, NONE, labelsOf(s, i));
      }
    };
    out.push(new SlicedFamily({ name: `semscope_semaphore_${name}`, help, labelNames: SEM_LABELS, fill }, "gauge", semaphores));
  };
  sem("cap", "Permits (latest sample, else as registered).", (s, i) => s.cap(i));
  sem("in_use", "Permits held at the latest sample.", (s, i) => s.number(i, "inUse", 0));
  sem("available", "Permits free at the latest sample (negative while a lowered cap is over-subscribed).", (s, i) => s.number(i, "available", s.cap(i)));
  sem("waiters", "Callers queued at the latest sample.", (s, i) => s.number(i, "waiters", 0));
  sem("oldest_wait_seconds", "Age of the oldest waiter at the latest sample.", (s, i) => s.number(i, "oldestWaitMs", 0) / 1000);
  sem("longest_hold_seconds", "Age of the oldest current holder at the latest sample.", (s, i) => (s.sampled(i) ? s.number(i, "longestHoldMs", 0) / 1000 : undefined));
  sem("last_sample_timestamp_seconds", "Sample time (agent clock) of the latest sample.", (s, i) => {
    const t = s.lastT(i);
    return t === undefined ? undefined : t / 1000;
  });

  for (const [kind, field] of [["wait", "waitMs"], ["hold", "holdMs"]] as const) {
    const fill: Fill = (rows, from, to, push) => {
      const s = rows.semaphores;
      for (let i = from; i < to; i++) {
        if (s.summary(i, field, "count") === undefined) continue;
        QUANTILES.forEach(([, k], q) => push((s.summary(i, field, k) ?? 0) / 1000, labelsOf(s, i), QUANTILE_LABELS[q]));
      }
    };
    const help = `${kind === "wait" ? "Wait (acquire to grant)" : "Hold (grant to release)"} time quantiles over the latest interval, as the agent measured them.`;
    out.push(new SlicedFamily({ name: `semscope_semaphore_${kind}_seconds`, help, labelNames: [...SEM_LABELS, "quantile"], fill }, "gauge", semaphores));
  }

  out.push(
    new SlicedFamily(
      {
        name: "semscope_semaphore_status",
        help: "1 for the semaphore's current status (ok, saturated, convoy, leak), 0 for the others.",
        labelNames: [...SEM_LABELS, "status"],
        fill: (rows, from, to, push) => {
          const s = rows.semaphores;
          for (let i = from; i < to; i++) STATUSES.forEach((st, k) => push(s.status(i) === st ? 1 : 0, labelsOf(s, i), STATUS_LABELS[k]));
        },
      },
      "gauge",
      semaphores,
    ),
  );

  SAMPLE_COUNTERS.forEach((field, c) => {
    const fill: Fill = (rows, from, to, push) => {
      const s = rows.semaphores;
      for (let i = from; i < to; i++) {
        const tot = totals(s.trackers[i].key);
        if (tot !== undefined) push(tot[c], NONE, labelsOf(s, i));
      }
    };
    out.push(new SlicedFamily({ name: `semscope_semaphore_${COUNTER_NAMES[field]}_total`, help: `Sum of the samples' \`${field}\` since the hub started.`, labelNames: SEM_LABELS, fill }, "counter", semaphores));
  });

  out.push(
    new SlicedFamily(
      {
        name: "semscope_hub_agent_up",
        help: "1 while the agent streams to this hub, 0 once it is gone (kept while the hub remembers it).",
        labelNames: ["service", "instance"],
        fill: (rows, from, to, push) => {
          for (let i = from; i < to; i++) {
            const a = rows.agents[i];
            push(a.connected ? 1 : 0, { service: a.service, instance: a.instance }, NONE);
          }
        },
      },
      "gauge",
      (rows) => rows.agents.length,
    ),
  );

  // The fleet as the over_budget rule sees it (shared/alerts/fleet.ts): replicas of a service
  // sharing a semaphore name, so a Prometheus rule and the hub's own cannot disagree on a sum.
  // A group's labels are one object in a render, for its five families.
  const fleetLabels = new WeakMap<FleetCounts, Labels>();
  const fleet = (name: string, help: string, value: (f: FleetCounts) => number | null): void => {
    const fill: Fill = (rows, from, to, push) => {
      for (let i = from; i < to; i++) {
        const f = rows.fleet[i];
        const v = value(f);
        if (v === null) continue;
        let l = fleetLabels.get(f);
        if (l === undefined) fleetLabels.set(f, (l = Object.freeze({ service: f.service, semaphore: f.name, scope: f.scope })));
        push(v, NONE, l);
      }
    };
    out.push(new SlicedFamily({ name: `semscope_fleet_${name}`, help, labelNames: ["service", "semaphore", "scope"], fill }, "gauge", (rows) => rows.fleet.length));
  };
  fleet("cap", "Permits the fleet admits: the replicas' caps summed (scope process), the global cap (scope global).", (f) => f.cap);
  fleet("in_use", "Permits held across the live replicas.", (f) => f.inUse);
  fleet("waiters", "Callers queued across the live replicas.", (f) => f.waiters);
  fleet("instances", "Live replicas reporting the semaphore.", (f) => f.instances);
  fleet("budget", "The budget the replicas declare (the smallest, if they disagree); absent without one.", (f) => f.budget);
  return out;
}
