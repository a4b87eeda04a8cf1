// Changed entries only (feature "changed_only", docs/protocol.md): an agent that negotiated it
// leaves out of its batches every semaphore with nothing new, and the hub reads that absence as
// "unchanged", not as silence. Unchanged needs nothing from the hub, except where a rule is still
// counting: an active alert waits for quiet samples to resolve, and the trailing windows
// (timeouts, convoy) would otherwise restart at the next sample instead of sliding. So for a
// while after its last busy sample, and for as long as it has an active alert, a semaphore absent
// from an interval gets the quiet sample its agent would have sent (no counts, no waiter, the
// gauges it last reported, its oldest holder older by the time since), appended to the batch
// that ends the interval (`partial: "end"`). The batch is recorded with them, so a replay
// stores exactly what the live hub did. Past that, an idle semaphore costs the hub nothing.
import type { AlertThresholds, AlertChange } from "../../../shared/alerts/index.js";
import { FEATURE_CHANGED_ONLY, hasActivity, quietSample, type QuietGauges, type Sample, type SamplesBatch } from "../../../shared/protocol/index.js";

/** The gauges its quiet samples carry over, from the last sample the agent sent of it. */
interface Last extends QuietGauges {
  /** Sample time of the last sample the agent sent of it. */
  t: number;
  /** Sample time of its last busy one (counts or waiters). */
  busyT: number;
}

/** Sample time a rule may still need quiet samples for after a busy one (its longest window). */
export function settleMs(th: AlertThresholds, intervalMs: number): number {
  const windows = Math.max(th.timeouts.windowMs, th.convoy.windowMs, th.starvation.clearMs);
  return windows + th.window.maxGapIntervals * intervalMs;
}


export class QuietFill {
  /** Per agent that negotiated the feature: its semaphores that may still need a quiet sample, by id. */
  private readonly agents = new Map<string, Map<string, Last>>();
  /** Keys with an active per-semaphore alert, and how many. */
  private readonly alerting = new Map<string, number>();

  /** A hello: whether this agent sends changed entries only from now on. */
  hello(agentId: string, features: readonly string[] | undefined): void {
    if (features?.includes(FEATURE_CHANGED_ONLY) === true) {
      if (!this.agents.has(agentId)) this.agents.set(agentId, new Map());
    } else this.agents.delete(agentId);
  }

  /** Its semaphores now (a register): one that left the list is never filled in. */
  keepOnly(agentId: string, ids: { has(id: string): boolean }): void {
    const m = this.agents.get(agentId);
    if (m !== undefined) for (const id of m.keys()) if (!ids.has(id)) m.delete(id);
  }

  forget(agentId: string): void {
    this.agents.delete(agentId);
  }

  onAlerts(changes: readonly AlertChange[]): void {
    for (const c of changes) {
      if (c.alert.semaphore === undefined || c.kind === "updated") continue;
      const key = c.alert.key;
      const n = (this.alerting.get(key) ?? 0) + (c.kind === "raised" ? 1 : -1);
      if (n > 0) this.alerting.set(key, n);
      else this.alerting.delete(key);
    }
  }

  /**
   * The batch as the hub stores it: itself, or (the end of a changed-only interval) with the
   * quiet samples of the semaphores that still need one appended.
   */
  complete(agentId: string, batch: SamplesBatch, keyOf: (id: string) => string, th: AlertThresholds): SamplesBatch {
    const m = this.agents.get(agentId);
    if (m === undefined) return batch;
    const t = batch.t;
    for (const s of batch.items) {
      let last = m.get(s.id);
      if (hasActivity(s) || last !== undefined || this.alerting.has(keyOf(s.id))) {
        if (last === undefined) m.set(s.id, (last = { cap: 0, inUse: 0, available: 0, longestHoldMs: 0, t, busyT: -Infinity }));
        last.cap = s.cap;
        last.inUse = s.inUse;
        last.available = s.available;
        last.longestHoldMs = s.longestHoldMs;
        last.t = t;
        if (hasActivity(s)) last.busyT = t;
      }
    }
    if (batch.partial !== "end" || m.size === 0) return batch;
    const settle = settleMs(th, batch.intervalMs);
    const fills: Sample[] = [];
    for (const [id, last] of m) {
      if (last.t >= t) continue;
      if (t - last.busyT > settle && !this.alerting.has(keyOf(id))) {
        m.delete(id);
        continue;
      }
      fills.push(
        quietSample(id, {
          cap: last.cap,
          inUse: last.inUse,
          available: last.available,
          // No release since: the same holder is still the oldest.
          longestHoldMs: last.inUse > 0 ? last.longestHoldMs + (t - last.t) : 0,
        }),
      );
    }
    return fills.length === 0 ? batch : { ...batch, items: [...batch.items, ...fills] };
  }
}
