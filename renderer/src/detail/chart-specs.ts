// The detail view's four charts, as data. Colours are CSS variables (app/theme.css). Frozen
// module constants: a chart is re-created only when its spec object changes, which is never.
import type { ChartSpec } from "../charts/chart-spec.js";

export const PERMITS: ChartSpec = {
  id: "permits",
  title: "Permits in use",
  subtitle: "against the cap N",
  y: "count",
  yLabel: "permits",
  height: 190,
  series: [
    { label: "in use", column: "inUse", color: "--c-inuse", width: 2, fill: true },
    { label: "cap N", column: "cap", color: "--c-cap", width: 1.5, dash: [6, 4] },
  ],
};

export const QUEUE: ChartSpec = {
  id: "queue",
  title: "Queue",
  subtitle: "waiters and the age of the oldest",
  y: "count",
  y2: "ms",
  yLabel: "waiters",
  y2Label: "oldest wait",
  height: 190,
  series: [
    { label: "waiters", column: "waiters", color: "--c-waiters", width: 2, fill: true },
    { label: "oldest wait", column: "oldestWaitMs", color: "--c-oldest", width: 1.5, scale: "y2" },
  ],
};

export const LATENCY: ChartSpec = {
  id: "latency",
  title: "Wait vs hold",
  subtitle: "a queue shows in the wait, a slow downstream in the hold",
  y: "ms",
  yLabel: "duration",
  height: 190,
  // Wait warm, hold cool; a p50 dashed under its p99, so a pair reads as a pair.
  series: [
    { label: "wait p50", column: "waitP50", color: "--c-wait50", width: 1.25, dash: [5, 3] },
    { label: "wait p99", column: "waitP99", color: "--c-wait99", width: 2 },
    { label: "hold p50", column: "holdP50", color: "--c-hold50", width: 1.25, dash: [5, 3] },
    { label: "hold p99", column: "holdP99", color: "--c-hold99", width: 2 },
  ],
};

export const THROUGHPUT: ChartSpec = {
  id: "throughput",
  title: "Throughput",
  subtitle: "per second",
  y: "rate",
  yLabel: "per second",
  height: 190,
  series: [
    // Acquired under released, wider: the two track each other, and both should stay visible.
    { label: "acquired", column: "acquiredPerSec", color: "--c-acq", width: 2.5 },
    { label: "released", column: "releasedPerSec", color: "--c-rel", width: 1.25, dash: [5, 3] },
    { label: "timeouts", column: "timeoutsPerSec", color: "--c-timeout", width: 1.5 },
    { label: "rejections", column: "rejectionsPerSec", color: "--c-reject", width: 1.5 },
  ],
};

export const DETAIL_CHARTS: readonly ChartSpec[] = [PERMITS, QUEUE, LATENCY, THROUGHPUT];
