// The numbers now, above the charts: the latest sample (a semaphore) or the fleet's sums and
// merged percentiles. Re-rendered per delta; a handful of text nodes.
import { useRef } from "react";
import type { UiFleetEntry } from "../../../shared/ui-protocol/types.js";
import { Opening, TurnWait, UtilBar } from "../app/widgets.js";
import { summaryP99 } from "../logic/fleet-rows.js";
import { fmtCount, fmtDuration, fmtRate } from "../logic/format.js";
import { turnTitle, waitingForTurn } from "../logic/share-turn.js";
import { useSemaphore } from "./detail-hooks.js";

function Stat({ label, value, sub, tone }: { label: string; value: string; sub?: string; tone?: "warn" | "bad" }) {
  return (
    <div className={`stat ${tone !== undefined ? `stat-${tone}` : ""}`}>
      <span className="stat-label">{label}</span>
      <span className="stat-value mono">{value}</span>
      {sub !== undefined && <span className="stat-sub muted mono">{sub}</span>}
    </div>
  );
}

/** Seconds between the last two samples seen: counts in a sample are per interval. */
function useSampleSeconds(t: number | null | undefined): number {
  const seen = useRef<{ t: number | null; sec: number }>({ t: null, sec: 1 });
  const cur = seen.current;
  if (t !== null && t !== undefined && t !== cur.t) {
    const d = cur.t === null ? 0 : t - cur.t;
    // Only a plausible interval counts: a gap (a reconnect) would make rates look tiny.
    seen.current = { t, sec: d > 0 && d <= 10_000 ? d / 1000 : cur.sec };
  }
  return seen.current.sec;
}

/** `value` while `frozen` is false; the value it had when it turned true, while it stays true. */
export function useFrozen<T>(value: T, frozen: boolean): T {
  const held = useRef(value);
  if (!frozen) held.current = value;
  return held.current;
}

export interface StatStripProps {
  semKey: string;
  fleet: UiFleetEntry | undefined;
  /** Paused: the numbers stay as they were, like the charts. */
  frozen: boolean;
  /** Its agent is gone: the last numbers it sent, greyed. */
  stale: boolean;
}

export function StatStrip({ semKey, fleet: liveFleet, frozen, stale }: StatStripProps) {
  const sem = useFrozen(useSemaphore(semKey), frozen);
  const fleet = useFrozen(liveFleet, frozen);
  const sec = useSampleSeconds(sem?.t);
  const cls = `stats ${frozen ? "stats-frozen" : ""} ${stale ? "stats-stale" : ""}`;
  if (sem !== undefined) {
    const s = sem.last;
    const share = s?.share;
    const offTurn = share !== undefined && waitingForTurn(share);
    return (
      <div className={cls} data-testid="stats" data-frozen={frozen}>
        <div className="stat stat-wide">
          <span className="stat-label">In use</span>
          <span className="stat-value mono">
            {s === null ? "—" : fmtCount(sem.inUse)} <span className="muted">/ {fmtCount(sem.cap)}</span> <Opening n={s?.opening ?? 0} />
            {offTurn && <TurnWait share={share} />}
          </span>
          {s === null ? (
            <span className="stat-sub muted">waiting for first sample</span>
          ) : offTurn ? (
            <span className="stat-sub muted" title={turnTitle(share)}>
              {share.replicas} replicas take turns with a budget of {share.budget}
            </span>
          ) : (
            <UtilBar inUse={sem.inUse} cap={sem.cap} />
          )}
        </div>
        <Stat label="Waiters" value={fmtCount(sem.waiters)} sub={sem.waiters > 0 ? `oldest ${fmtDuration(sem.oldestWaitMs)}` : "no queue"} tone={sem.waiters > 0 ? "warn" : undefined} />
        <Stat label="Wait p50 / p99" value={s === null ? "—" : `${fmtDuration(s.waitMs.p50)} / ${fmtDuration(s.waitMs.p99)}`} />
        <Stat label="Hold p50 / p99" value={s === null ? "—" : `${fmtDuration(s.holdMs.p50)} / ${fmtDuration(s.holdMs.p99)}`} sub={s === null ? undefined : `longest now ${fmtDuration(s.longestHoldMs)}`} />
        <Stat label="Acquired" value={s === null ? "—" : fmtRate(s.acquired / sec)} sub={s === null ? undefined : `released ${fmtRate(s.released / sec)}`} />
        <Stat
          label="Timeouts + rejections"
          value={s === null ? "—" : fmtRate((s.timeouts + s.rejections) / sec)}
          tone={s !== null && s.timeouts + s.rejections > 0 ? "bad" : undefined}
        />
      </div>
    );
  }
  if (fleet !== undefined) {
    return (
      <div className={cls} data-testid="stats" data-frozen={frozen}>
        <div className="stat stat-wide">
          <span className="stat-label">In use (Σ replicas)</span>
          <span className="stat-value mono">
            {fmtCount(fleet.inUse)} <span className="muted">/ {fmtCount(fleet.cap)}</span>
          </span>
          <UtilBar inUse={fleet.inUse} cap={fleet.cap} budget={fleet.budget} />
        </div>
        <Stat label="Budget" value={fleet.budget === null ? "—" : fmtCount(fleet.budget)} sub={fleet.overBudget ? "caps exceed it" : undefined} tone={fleet.overBudget ? "bad" : undefined} />
        <Stat label="Waiters" value={fmtCount(fleet.waiters)} tone={fleet.waiters > 0 ? "warn" : undefined} />
        <Stat label="Fleet wait p50 / p99" value={`${fmtDuration(Math.min(fleet.waitMs.p50, fleet.waitMs.max))} / ${fmtDuration(summaryP99(fleet.waitMs))}`} sub="merged histograms" />
        <Stat label="Fleet hold p50 / p99" value={`${fmtDuration(Math.min(fleet.holdMs.p50, fleet.holdMs.max))} / ${fmtDuration(summaryP99(fleet.holdMs))}`} />
        <Stat label="Replicas" value={String(fleet.instances)} sub={fleet.scope === "global" ? "global N" : "N per replica"} />
      </div>
    );
  }
  return null;
}
