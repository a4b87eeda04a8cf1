// Several replicas of one semaphore (same service and name, different instances) as one series.
// Replicas sample on their own clocks, so points are aligned first: a 1s point goes to the bucket
// of its t rounded to its interval, a 1m point is already on its minute. Within a bucket:
//   - cap, inUse, available, waiters (and the 1m maxima) add up: the fleet's permits. A sum of
//     per-replica maxima is an upper bound on the fleet's max, which is what a 1m max is for.
//   - oldestWaitMs and longestHoldMs take the max: an age does not add.
//   - rates add; wait and hold histograms MERGE, so the fleet p99 is a real p99 over every grant.
// A replica whose jitter lands two of its points in one bucket gives its counts and histograms
// from both (nothing is lost) but its gauges once, from the later point. `replicas` says how many
// replicas a bucket heard from, so a dip in a sum can be told from a missing replica.

import { SAMPLE_COUNTERS } from "../protocol/sample-layout.js";
import type { Summary } from "../protocol/types.js";
import {
  RATE_COLUMN,
  createWindow,
  readWindow,
  type ColumnarWindow,
  type HistKind,
  type MutableWindow,
  type Tier,
} from "./columnar-window.js";
import { HistAccumulator } from "./hist-accumulator.js";
import type { SemaphoreHistory } from "./semaphore-history.js";

export interface FleetWindow extends ColumnarWindow {
  /** Replicas that contributed to each point. */
  readonly replicas: Float64Array;
}

const SUMMED_GAUGES = ["cap", "inUse", "inUseMax", "available", "waiters", "waitersMax"] as const;
const MAX_GAUGES = ["oldestWaitMs", "longestHoldMs"] as const;

export function fleetWindow(histories: readonly SemaphoreHistory[], tier: Tier, fromT: number, toT: number): FleetWindow {
  const parts = histories.map((h) => {
    const reader = h.reader(tier);
    const lo = fromT <= toT ? reader.range(fromT, toT)[0] : 0;
    return { reader, lo, win: readWindow(reader, fromT, toT) };
  });

  // Every point of every replica, tagged with its aligned time; a stable sort keeps each
  // replica's points in order within a bucket.
  let total = 0;
  for (const p of parts) total += p.win.length;
  const aligned = new Float64Array(total);
  const part = new Uint32Array(total);
  const row = new Uint32Array(total);
  let n = 0;
  parts.forEach((p, r) => {
    const { t, intervalMs } = p.win;
    for (let j = 0; j < p.win.length; j++, n++) {
      aligned[n] = tier === "1m" ? t[j] : Math.round(t[j] / intervalMs[j]) * intervalMs[j];
      part[n] = r;
      row[n] = j;
    }
  });
  const order = Array.from({ length: total }, (_, i) => i).sort((x, y) => aligned[x] - aligned[y]);

  let buckets = 0;
  for (let i = 0; i < total; i++) if (i === 0 || aligned[order[i]] !== aligned[order[i - 1]]) buckets++;

  let partialLast = false;
  const out = createWindow(tier, buckets, false) as MutableWindow<ColumnarWindow> & { replicas: Float64Array };
  out.replicas = new Float64Array(buckets);
  const wait = new HistAccumulator();
  const hold = new HistAccumulator();

  let start = 0;
  for (let b = 0; b < buckets; b++) {
    let end = start + 1;
    while (end < total && aligned[order[end]] === aligned[order[start]]) end++;
    wait.reset();
    hold.reset();
    out.t[b] = aligned[order[start]];
    for (let i = start; i < end; i++) {
      const r = part[order[i]];
      const j = row[order[i]];
      const { win, reader, lo } = parts[r];
      for (const k of SAMPLE_COUNTERS) out[RATE_COLUMN[k]][b] += win[RATE_COLUMN[k]][j];
      reader.addHist(lo + j, "wait", wait);
      reader.addHist(lo + j, "hold", hold);
      if (win.intervalMs[j] > out.intervalMs[b]) out.intervalMs[b] = win.intervalMs[j];
      if (b === buckets - 1 && win.partialLast && j === win.length - 1) partialLast = true;
      const lastOfReplica = i + 1 === end || part[order[i + 1]] !== r;
      if (!lastOfReplica) continue;
      out.replicas[b]++;
      for (const g of SUMMED_GAUGES) out[g][b] += win[g][j];
      for (const g of MAX_GAUGES) if (win[g][j] > out[g][b]) out[g][b] = win[g][j];
    }
    writeSummary(out, b, "wait", wait);
    writeSummary(out, b, "hold", hold);
    start = end;
  }
  out.partialLast = partialLast;
  return out;
}

/** A Summary over [fromT, toT] merged across replicas (see SemaphoreHistory.mergedSummary for the tier). */
export function fleetSummary(histories: readonly SemaphoreHistory[], fromT: number, toT: number, kind: HistKind): Summary {
  const acc = new HistAccumulator();
  for (const h of histories) h.accumulate(acc, fromT, toT, kind);
  return acc.toSummary();
}

function writeSummary(out: MutableWindow<ColumnarWindow>, b: number, kind: HistKind, acc: HistAccumulator): void {
  if (kind === "wait") {
    out.waitCount[b] = acc.count;
    out.waitP50[b] = acc.quantile(0.5);
    out.waitP90[b] = acc.quantile(0.9);
    out.waitP99[b] = acc.quantile(0.99);
    out.waitMax[b] = acc.max;
  } else {
    out.holdCount[b] = acc.count;
    out.holdP50[b] = acc.quantile(0.5);
    out.holdP90[b] = acc.quantile(0.9);
    out.holdP99[b] = acc.quantile(0.99);
    out.holdMax[b] = acc.max;
  }
}
