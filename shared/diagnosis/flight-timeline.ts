// Reading an alert's flight recorder ring (FlightRecord) for a person: the seconds before the
// alert as bins of arrivals against grants (where a burst outran the permits and formed the
// queue), and the permits that never came back (granted, not released, with where they were
// taken). Pure: the app draws it, the tests check it.
import type { FlightOp, FlightRecord } from "../protocol/types.js";

export interface TimelineBin {
  from: number;
  to: number;
  /** acquire() calls: queued (request), granted at once, refused at once. */
  arrivals: number;
  grants: number;
  releases: number;
  /** Timed out, rejected or aborted. */
  failed: number;
}

export interface StuckHolder {
  holder: number;
  weight: number;
  /** When it was granted (agent clock), when the ring knows it. */
  grantedAt: number | null;
  /** Held for this long at the ring's `t`. */
  heldMs: number;
  stack: string | null;
}

export interface Burst {
  from: number;
  to: number;
  arrivals: number;
  grants: number;
  /** Arrivals per second in the burst, and before it (the ring's earlier bins). */
  ratePerSec: number;
  baselinePerSec: number;
}

export interface FlightTimeline {
  from: number;
  to: number;
  bins: TimelineBin[];
  /** Permits granted and never released, oldest first. */
  stuck: StuckHolder[];
  /** The stretch where arrivals most outran grants (the queue's growth), if any. */
  burst: Burst | null;
  /** Ops in the ring and how many were overwritten before it was read. */
  ops: number;
  overwritten: number;
}

/** An immediate grant is an arrival too; a queued one arrived at its `request`. */
function isArrival(o: FlightOp): boolean {
  return o.op === "request" || (o.op === "grant" && (o.waitMs ?? 0) === 0) || o.op === "reject" || ((o.op === "timeout" || o.op === "abort") && (o.waitMs ?? 0) === 0);
}

/** `record` as a timeline of `binCount` bins; null when it carries no ring (unavailable). */
export function flightTimeline(record: FlightRecord, binCount = 30): FlightTimeline | null {
  if (record.status === "unavailable") return null;
  const ops = record.ops;
  const to = record.t;
  const from = ops.length > 0 ? Math.min(ops[0].t, to) : to;
  const span = Math.max(1, to - from);
  const n = Math.max(1, Math.min(binCount, ops.length));
  const width = span / n;
  const bins: TimelineBin[] = [];
  for (let i = 0; i < n; i++) bins.push({ from: from + i * width, to: from + (i + 1) * width, arrivals: 0, grants: 0, releases: 0, failed: 0 });
  const grantedAt = new Map<number, number>();
  for (const o of ops) {
    const b = bins[Math.min(n - 1, Math.max(0, Math.floor((o.t - from) / width)))];
    if (isArrival(o)) b.arrivals++;
    if (o.op === "grant") {
      b.grants++;
      if (o.holder !== undefined) grantedAt.set(o.holder, o.t);
    } else if (o.op === "release" || o.op === "expire") b.releases++;
    else if (o.op === "timeout" || o.op === "reject" || o.op === "abort") b.failed++;
  }
  const stuck: StuckHolder[] = record.holders.map((h) => ({
    holder: h.holder,
    weight: h.weight,
    grantedAt: grantedAt.get(h.holder) ?? null,
    heldMs: h.heldMs,
    stack: h.stack !== undefined ? (record.stacks[h.stack] ?? null) : null,
  }));
  return { from, to, bins, stuck, burst: findBurst(bins), ops: ops.length, overwritten: Math.max(0, record.total - ops.length) };
}

/**
 * The run of consecutive bins with the largest excess of arrivals over grants (the queue grew by
 * that much there): maximum-sum subarray of (arrivals − grants). Null when arrivals never outran grants.
 */
function findBurst(bins: readonly TimelineBin[]): Burst | null {
  let best = 0;
  let bestFrom = -1;
  let bestTo = -1;
  let sum = 0;
  let start = 0;
  for (let i = 0; i < bins.length; i++) {
    const d = bins[i].arrivals - bins[i].grants;
    if (sum <= 0) {
      sum = d;
      start = i;
    } else sum += d;
    if (sum > best) {
      best = sum;
      bestFrom = start;
      bestTo = i;
    }
  }
  if (bestFrom < 0) return null;
  let arrivals = 0;
  let grants = 0;
  for (let i = bestFrom; i <= bestTo; i++) {
    arrivals += bins[i].arrivals;
    grants += bins[i].grants;
  }
  const from = bins[bestFrom].from;
  const to = bins[bestTo].to;
  let before = 0;
  for (let i = 0; i < bestFrom; i++) before += bins[i].arrivals;
  const beforeMs = from - bins[0].from;
  return {
    from,
    to,
    arrivals,
    grants,
    ratePerSec: (arrivals * 1000) / Math.max(1, to - from),
    baselinePerSec: beforeMs > 0 ? (before * 1000) / beforeMs : 0,
  };
}
