// Small presentational pieces shared by the views: status badges, utilization bars, icons.
import type { ReactNode } from "react";
import { RULE_LABEL } from "../logic/alert-target.js";
import { fmtCount, fmtPct } from "../logic/format.js";
import type { RowAlerts } from "../logic/row-alerts.js";
import { turnTitle } from "../logic/share-turn.js";
import type { SampleShare } from "../../../shared/protocol/types.js";
import { STATUS_LABEL, utilizationLevel, type DisplayStatus } from "../logic/status.js";

export function StatusBadge({ status, title }: { status: DisplayStatus; title?: string }) {
  return (
    <span className={`badge status-${status}`} title={title}>
      <span className="dot" />
      {STATUS_LABEL[status]}
    </span>
  );
}

/**
 * A row's status with every alert firing on it: the worst alert leads, coloured by its severity,
 * the others follow as tags; a status no alert explains (saturated, stale) stays beside them.
 */
export function RowStatus({ status, alerts }: { status: DisplayStatus; alerts: RowAlerts | undefined }) {
  if (alerts === undefined) return <StatusBadge status={status} />;
  const [lead, ...rest] = alerts.rules;
  const shown = new Set<string>(alerts.rules);
  return (
    <span className="row-status" data-alerts={alerts.rules.join(" ")} data-severity={alerts.worst}>
      <span className={`badge sev-badge sev-${alerts.worst}`} title={alerts.rules.map((r) => RULE_LABEL[r]).join(", ")}>
        <span className="dot" />
        {RULE_LABEL[lead]}
      </span>
      {rest.map((r) => (
        <span key={r} className="tag rule-tag">
          {RULE_LABEL[r]}
        </span>
      ))}
      {status !== "ok" && !shown.has(status) && <span className={`tag rule-tag status-${status}`}>{STATUS_LABEL[status]}</span>}
    </span>
  );
}

export function StatusDot({ status }: { status: DisplayStatus }) {
  return <span className={`dot status-${status}`} title={STATUS_LABEL[status]} />;
}

/** "2 opening": connections a pool is opening for its waiters (Sample.opening); nothing at 0. */
export function Opening({ n }: { n: number }) {
  if (!(n > 0)) return null;
  return (
    <span className="opening small" data-testid="opening" title="Connections the pool is opening for its waiters: counted in neither in use nor waiters">
      {fmtCount(n)} opening
    </span>
  );
}

/** A replica on its rotation's off turn (logic/share-turn.ts). */
export function TurnWait({ share }: { share: SampleShare }) {
  return (
    <span className="tag tag-muted turn-wait" data-testid="turn-wait" title={turnTitle(share)}>
      waiting for its turn
    </span>
  );
}

/** inUse against cap (and a budget mark when one applies). */
export function UtilBar({ inUse, cap, budget }: { inUse: number; cap: number; budget?: number | null }) {
  const u = cap > 0 ? inUse / cap : inUse > 0 ? 1 : 0;
  const level = utilizationLevel(u);
  const width = `${Math.min(100, Math.max(0, u * 100))}%`;
  const budgetAt = budget !== null && budget !== undefined && cap > 0 ? Math.min(100, (budget / cap) * 100) : null;
  return (
    <span className="util" title={`${inUse} of ${cap} in use (${fmtPct(u)})`}>
      <span className="util-track">
        <span className={`util-fill util-${level}`} style={{ width }} />
        {budgetAt !== null && <span className="util-budget" style={{ left: `${budgetAt}%` }} />}
      </span>
      <span className="util-pct">{fmtPct(u)}</span>
    </span>
  );
}

export function Icon({ name }: { name: "back" | "pause" | "play" | "download" | "chevron" | "bell" | "search" | "check" | "mute" | "link" }) {
  const paths: Record<string, ReactNode> = {
    back: <path d="M10 3 5 8l5 5" />,
    pause: (
      <>
        <path d="M5.5 3.5v9" />
        <path d="M10.5 3.5v9" />
      </>
    ),
    play: <path d="M5 3.5v9l7-4.5z" />,
    download: (
      <>
        <path d="M8 2.5v8" />
        <path d="m4.5 7.5 3.5 3.5 3.5-3.5" />
        <path d="M3 13.5h10" />
      </>
    ),
    chevron: <path d="m6 4 4 4-4 4" />,
    bell: (
      <>
        <path d="M4 11V7a4 4 0 0 1 8 0v4l1 1.5H3z" />
        <path d="M6.5 14a1.5 1.5 0 0 0 3 0" />
      </>
    ),
    search: (
      <>
        <circle cx="7" cy="7" r="4" />
        <path d="m10 10 3.5 3.5" />
      </>
    ),
    check: <path d="m3.5 8.5 3 3 6-7" />,
    mute: (
      <>
        <path d="M4 11V7a4 4 0 0 1 6.5-3.1" />
        <path d="M12 7v4l1 1.5H5.5" />
        <path d="m2.5 2.5 11 11" />
      </>
    ),
    link: (
      <>
        <path d="M9 3h4v4" />
        <path d="M13 3 7.5 8.5" />
        <path d="M11 9.5V13H3V5h3.5" />
      </>
    ),
  };
  return (
    <svg className={`icon icon-${name}`} viewBox="0 0 16 16" width="14" height="14" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      {paths[name]}
    </svg>
  );
}

export function Kbd({ children }: { children: ReactNode }) {
  return <kbd className="kbd">{children}</kbd>;
}
