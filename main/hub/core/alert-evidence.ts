// Evidence the hub adds to alerts beyond what the rules put there (docs/protocol.md, "Flight
// recorder" and "Diagnosis"): the agent's flight recorder ring, and under convoy and starvation
// alerts a diagnosis computed from the semaphore's 1 s history. Both go through the engine's
// annotate(), so they reach /api/alerts, dashboards and the recording's replay like any alert
// change. Nothing here runs unless an alert is raised or active: with none, a sample costs one
// map-size check.
import { RULE_BIT, type AlertChange, type AlertEngine } from "../../../shared/alerts/index.js";
import { DIAGNOSIS_READ_MS, diagnoseAnchored, resumeDiagnosis, type Diagnosis, type DiagnosisAnchor, type DiagnosisContext } from "../../../shared/diagnosis/index.js";
import { WindowScratch, type HistoryStore } from "../../../shared/history/index.js";
import { semaphoreKey, type Alert, type AlertRule, type FlightRecord } from "../../../shared/protocol/index.js";

const NO_CHANGES: readonly AlertChange[] = Object.freeze([]);

/** Alerts that get a diagnosis. */
export const DIAGNOSED_RULES: ReadonlySet<AlertRule> = new Set(["convoy", "starvation"]);
/** Their bits (RULE_BIT): a semaphore whose alerts have none of them has no diagnosis to refresh. */
export const DIAGNOSED_RULE_BITS = [...DIAGNOSED_RULES].reduce((bits, rule) => bits | RULE_BIT[rule], 0);
/** Per-semaphore alerts whose agent is asked for its ring. */
export const FLIGHT_RULES: ReadonlySet<AlertRule> = new Set(["leak", "convoy", "starvation", "timeouts", "double_release", "order_inversion"]);
/** An active alert's diagnosis is recomputed at most this often (sample time) in its first minute... */
export const DIAGNOSIS_REFRESH_MS = 5_000;
/**
 * ...and then less often as it lasts, down to this (see diagnosisRefreshMs). A long incident's
 * verdict seldom turns, and when each refresh read 3 minutes of 1 s history, a hub with thousands
 * of convoys (a wide incident) spent ~1 µs of every sample it stored refreshing them every 5 s.
 */
export const DIAGNOSIS_REFRESH_MAX_MS = 30_000;
/**
 * A recomputed diagnosis with the same verdict is re-sent at most this often: each update sends
 * the whole alert (its ring included) to every dashboard.
 */
export const DIAGNOSIS_RESEND_MS = 30_000;
/**
 * Alerts that keep their ring's operations in full (the newest ones); an older alert keeps its
 * holders and stacks only. Bounds the hub's memory and its snapshots (a ring is up to ~100 KB).
 */
export const MAX_FULL_RINGS = 16;

/**
 * How long after its last diagnosis an alert raised `ageMs` ago (sample time) gets the next: 5 s
 * in its first minute, then a sixth of its age (10 s at 1 minute), 30 s from 3 minutes on. A
 * verdict that turns shows within that, and an unchanged one is re-sent every 30 s as before.
 */
export function diagnosisRefreshMs(ageMs: number): number {
  return ageMs < 60_000 ? DIAGNOSIS_REFRESH_MS : Math.min(DIAGNOSIS_REFRESH_MAX_MS, ageMs / 6);
}

/** An active diagnosed alert, as AlertEvidence follows it. */
export interface Watched {
  readonly alertId: string;
  readonly raisedAt: number;
  lastT: number;
  /**
   * No refresh is due before this: lastT + diagnosisRefreshMs(lastT - raisedAt), which the
   * refresh interval only lengthens from. So a sample in between reads this number alone.
   */
  nextT: number;
  /** The verdict last annotated (cause and headline), and when. */
  verdict: string;
  sentT: number;
  /** Where the last diagnosis left off: the next reads only the rows since, while the busy run lasts. */
  anchor: DiagnosisAnchor | null;
}

/**
 * A semaphore's active diagnosed alerts. Changed in place and never replaced while it holds one,
 * so a caller may keep it (its registry slot): emptied, it is dropped, and a later alert on that
 * semaphore starts a new list (watchedOf() then finds that one).
 */
/**
 * A starvation alert raised while the pool opens connections (its evidence's cause `opening`) is
 * about connections not opening, not permits held too long: Little's law and the hold trend would
 * name a wrong fix, so it gets no diagnosis. `permits_free` may be a weighted acquire wanting more
 * than is free, where they do apply, so it keeps its diagnosis.
 */
function diagnosable(a: Alert): boolean {
  return a.rule !== "starvation" || a.evidence?.["cause"] !== "opening";
}

export type WatchedList = readonly Watched[];

export class AlertEvidence {
  /** Active diagnosed alerts, by semaphore key: never an empty list. */
  private readonly watched = new Map<string, Watched[]>();
  /** Alerts holding a full ring, oldest first. */
  private readonly fullRings: string[] = [];
  /** The rows each diagnosis reads: diagnose() keeps none of them. */
  private readonly rows = new WindowScratch();

  constructor(
    private readonly engine: AlertEngine,
    private readonly history: HistoryStore,
  ) {}

  /** The engine's changes: diagnoses for raised convoy/starvation alerts. Returns the changes it made. */
  onChanges(changes: readonly AlertChange[]): AlertChange[] {
    let out: AlertChange[] | undefined;
    for (const c of changes) {
      const a = c.alert;
      if (!DIAGNOSED_RULES.has(a.rule)) continue;
      if (c.kind === "raised") {
        if (!diagnosable(a)) continue;
        const w: Watched = { alertId: a.id, raisedAt: a.raisedAt, lastT: a.raisedAt, nextT: a.raisedAt, verdict: "", sentT: -Infinity, anchor: null };
        const list = this.watched.get(a.key);
        if (list === undefined) this.watched.set(a.key, [w]);
        else list.push(w);
        const more = this.refresh(a.key, w, a.raisedAt);
        if (more.length > 0) (out ??= []).push(...more);
      } else if (c.kind === "resolved") {
        this.unwatch(a);
      }
    }
    return out ?? [];
  }

  /**
   * After samples for `key` at sample time `t` were stored and evaluated: refresh its diagnoses.
   * Called for every sample while any alert is watched, and almost always with nothing to do: that
   * answer is one shared empty list, not a new one each time.
   */
  afterSample(key: string, t: number): readonly AlertChange[] {
    if (this.watched.size === 0) return NO_CHANGES;
    const list = this.watched.get(key);
    return list === undefined ? NO_CHANGES : this.afterSampleOf(key, list, t);
  }

  /** The list afterSample() would find for `key` (kept by the caller, see WatchedList). */
  watchedOf(key: string): WatchedList | undefined {
    return this.watched.get(key);
  }

  /** afterSample() with `key`'s list as watchedOf() gave it (an emptied one has nothing to refresh). */
  afterSampleOf(key: string, list: WatchedList, t: number): readonly AlertChange[] {
    let out: AlertChange[] | undefined;
    for (const w of list) {
      if (t < w.nextT || t - w.lastT < diagnosisRefreshMs(t - w.raisedAt)) continue;
      const more = this.refresh(key, w, t);
      if (more.length > 0) (out ??= []).push(...more);
    }
    return out ?? NO_CHANGES;
  }

  get watching(): boolean {
    return this.watched.size !== 0;
  }

  /**
   * The diagnosis of `key` as of sample time `t` (null without history). With the `watched` alert it
   * is for, resumed where that alert's last one left off: while the busy run goes on, only the
   * rows since are read (about 20 at a 5 s refresh, where a full read is up to 180), and the
   * baseline from before the run is kept.
   */
  diagnosis(key: string, t: number, watched?: Watched): Diagnosis | null {
    const h = this.history.get(key);
    if (h === undefined) return null;
    const reader = h.reader("1s");
    // Why its cap moved, if it did: an adaptive limit's changes, a replica budget's share.
    const sem = this.engine.registry.tracker(key);
    const ctx: DiagnosisContext | undefined = sem === undefined ? undefined : { limitChanges: sem.limitChanges, share: sem.share };
    if (watched?.anchor != null) {
      const resumed = resumeDiagnosis(this.rows.read(reader, watched.anchor.incidentFromT, t), watched.anchor, ctx);
      if (resumed !== undefined) {
        watched.anchor = resumed.anchor;
        return resumed.diagnosis;
      }
    }
    const d = diagnoseAnchored(this.rows.read(reader, t - DIAGNOSIS_READ_MS, t), ctx);
    if (watched !== undefined) watched.anchor = d?.anchor ?? null;
    return d?.diagnosis ?? null;
  }

  /**
   * An agent's answer, already checked (schema; that it answers a request for this agent), from
   * the agent known as `service`/`instance`. Attached to its alert as `evidence.flight`; a
   * rate-limited answer shares the ring already attached to the alert it names (`sameAs`).
   */
  flight(service: string, instance: string, record: FlightRecord): { ok: true; changes: AlertChange[] } | { ok: false; error: string } {
    const key = semaphoreKey(service, instance, record.id);
    const alert = this.engine.alert(record.alertId);
    if (alert === undefined || alert.key !== key) return { ok: false, error: "no such alert for this semaphore" };
    let flight: Record<string, unknown> = { ...record };
    if (record.status === "rate_limited" && record.sameAs !== undefined) {
      const earlier = this.engine.alert(record.sameAs);
      const ring = earlier?.key === key ? (earlier.evidence?.flight as Record<string, unknown> | undefined) : undefined;
      if (ring !== undefined && ring.status === undefined) flight = { ...ring, alertId: record.alertId, sharedFrom: record.sameAs };
    }
    const changes = this.engine.annotate(record.alertId, { flight });
    if (Array.isArray(flight.ops) && flight.ops.length > 0) {
      this.fullRings.push(record.alertId);
      while (this.fullRings.length > MAX_FULL_RINGS) changes.push(...this.trim(this.fullRings.shift() as string));
    }
    return { ok: true, changes };
  }

  /** An older alert's ring without its operations: the holders and their stacks stay. */
  private trim(alertId: string): AlertChange[] {
    const ring = this.engine.alert(alertId)?.evidence?.flight as Record<string, unknown> | undefined;
    if (ring === undefined || !Array.isArray(ring.ops)) return [];
    return this.engine.annotate(alertId, { flight: { ...ring, ops: [], trimmedOps: ring.ops.length } });
  }

  private refresh(key: string, w: Watched, t: number): AlertChange[] {
    w.lastT = t;
    w.nextT = t + diagnosisRefreshMs(t - w.raisedAt);
    const d = this.diagnosis(key, t, w);
    if (d === null) return [];
    const verdict = `${d.cause}\u0000${d.headline}`;
    if (verdict === w.verdict && t - w.sentT < DIAGNOSIS_RESEND_MS) return [];
    w.verdict = verdict;
    w.sentT = t;
    return this.engine.annotate(w.alertId, { diagnosis: d });
  }

  private unwatch(a: Alert): void {
    const list = this.watched.get(a.key);
    if (list === undefined) return;
    // In place: a kept list must see its alerts go (see WatchedList).
    const at = list.findIndex((w) => w.alertId === a.id);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.watched.delete(a.key);
  }
}
