// The overview's rows: a service, an instance, a semaphore. A semaphore row reads its own item
// from the store (the store replaces an item only when its semaphore changed), so a delta
// re-renders the visible rows that changed and nothing else: the list around them re-sorts
// only when its structure does (logic/tree.ts, DashboardStore's "structure" channel).
import { memo, useCallback, useSyncExternalStore } from "react";
import { useApp } from "../app/context.js";
import { Icon, Opening, RowStatus, StatusDot, TurnWait, UtilBar } from "../app/widgets.js";
import type { AgentState } from "../../../shared/protocol/types.js";
import { fmtClock, fmtCount, fmtDuration } from "../logic/format.js";
import type { SemaphoreItem } from "../logic/overview-item.js";
import { waitingForTurn } from "../logic/share-turn.js";
import { SORT_LABEL, type SortKey, type SortSpec } from "../logic/sorting.js";
import type { InstanceRow, ServiceRow } from "../logic/tree.js";
import type { SparklinePainter } from "./sparkline-painter.js";
import { useRowAlerts } from "./use-row-alerts.js";

export const ROW_HEIGHT = 34;

/** A column heading that sorts by its key, showing the direction when it is the sorted one (overview and fleet). */
export function sortButton(sort: SortSpec, onSort: (k: SortKey) => void, key: SortKey, label: string, cls: string) {
  return (
    <button className={`${cls} sortable ${sort.key === key ? "sorted" : ""}`} onClick={() => onSort(key)} title={`Sort by ${SORT_LABEL[key]}`}>
      {label}
      {sort.key === key && <span className="sort-arrow">{sort.dir === "asc" ? "▲" : "▼"}</span>}
    </button>
  );
}

export function ColumnHeader({ sort, onSort }: { sort: SortSpec; onSort: (k: SortKey) => void }) {
  const h = (key: SortKey, label: string, cls: string) => sortButton(sort, onSort, key, label, cls);
  return (
    <div className="grid-row grid-head" role="row">
      {h("name", "Semaphore", "c-name")}
      {h("status", "Status", "c-status")}
      {h("util", "Utilization", "c-util")}
      <span className="c-num">In use / N</span>
      {h("waiters", "Waiters", "c-num")}
      <span className="c-num">Oldest wait</span>
      {h("wait", "Wait p99", "c-num")}
      <span className="c-num">Hold p99</span>
      <span className="c-spark">Last 60 s</span>
    </div>
  );
}

export function ServiceRowView({ row, selected, onToggle }: { row: ServiceRow; selected: boolean; onToggle: (id: string) => void }) {
  return (
    <div className={`grid-row group-row service-row ${selected ? "selected" : ""}`} role="row" aria-selected={selected} onClick={() => onToggle(row.id)}>
      <span className="c-name">
        <span className={`twisty ${row.collapsed ? "" : "open"}`}>
          <Icon name="chevron" />
        </span>
        <StatusDot status={row.status} />
        <strong>{row.service}</strong>
        <span className="muted small">
          {row.instances} {row.instances === 1 ? "instance" : "instances"} · {row.semaphores} {row.semaphores === 1 ? "semaphore" : "semaphores"}
        </span>
      </span>
      <span className="c-status">{row.problems > 0 ? <span className="muted small">{row.problems} {row.problems === 1 ? "needs" : "need"} attention</span> : null}</span>
    </div>
  );
}

/** "since 14:03:27": when the hub last heard from the agent of `service`/`instance`, if it knows. */
export function disconnectedSince(agents: Iterable<AgentState>, service: string, instance: string): string {
  for (const a of agents) if (a.service === service && a.instance === instance && !a.connected) return ` since ${fmtClock(a.lastSeen)}`;
  return "";
}

export function InstanceRowView({ row, selected, onToggle }: { row: InstanceRow; selected: boolean; onToggle: (id: string) => void }) {
  const { store } = useApp();
  return (
    <div className={`grid-row group-row instance-row ${selected ? "selected" : ""}`} role="row" aria-selected={selected} onClick={() => onToggle(row.id)}>
      <span className="c-name indent-1">
        <span className={`twisty ${row.collapsed ? "" : "open"}`}>
          <Icon name="chevron" />
        </span>
        <span className="instance-name">{row.instance}</span>
        {!row.connected && <span className="tag tag-muted">agent disconnected{disconnectedSince(store.agents.values(), row.service, row.instance)}</span>}
        <span className="muted small">{row.semaphores}</span>
      </span>
    </div>
  );
}

interface SemRowProps {
  /** The item when the list was built: shown until the store has a newer one. */
  initial: SemaphoreItem;
  selected: boolean;
  indent: boolean;
  painter: SparklinePainter;
  onOpen: (key: string) => void;
}

function useItem(initial: SemaphoreItem): SemaphoreItem {
  const { store } = useApp();
  const key = initial.key;
  return useSyncExternalStore(
    (fn) => store.subscribe("semaphores", fn),
    () => store.item(key) ?? initial,
  );
}

export const SemaphoreRowView = memo(function SemaphoreRowView({ initial, selected, indent, painter, onOpen }: SemRowProps) {
  const item = useItem(initial);
  const key = item.key;
  const alerts = useRowAlerts(key);
  // The painter puts a (pooled) canvas in this holder: React never owns the canvas itself.
  const sparkRef = useCallback((el: HTMLElement | null) => painter.attach(key, el), [painter, key]);
  return (
    <div
      className={`grid-row sem-row ${selected ? "selected" : ""} row-${item.status} ${item.connected ? "" : "agent-gone"} ${alerts !== undefined ? `row-sev-${alerts.worst}` : ""}`}
      role="row"
      aria-selected={selected}
      data-key={key}
      data-status={item.status}
      title={item.connected ? undefined : "Its agent is disconnected: these are the last numbers it sent"}
      onClick={() => onOpen(key)}
    >
      <span className={`c-name ${indent ? "indent-2" : ""}`}>
        <span className="sem-name">{item.name}</span>
        {indent ? <span className="muted small kind">{item.kind}</span> : <span className="muted small">{item.service}/{item.instance}</span>}
      </span>
      <span className="c-status">
        <RowStatus status={item.status} alerts={alerts} />
      </span>
      {/* Registered but not sampled yet: its gauges are unknown, not zero. Out of its rotation's
          turn, its cap of 0 is by design: said instead of an empty bar. */}
      <span className="c-util">
        {item.t === null ? (
          <span className="muted small">waiting for first sample</span>
        ) : item.share !== undefined && waitingForTurn(item.share) ? (
          <TurnWait share={item.share} />
        ) : (
          <UtilBar inUse={item.inUse} cap={item.cap} />
        )}
        <Opening n={item.opening} />
      </span>
      <span className="c-num mono">
        {item.t === null ? "—" : fmtCount(item.inUse)}
        <span className="muted"> / {fmtCount(item.cap)}</span>
      </span>
      <span className={`c-num mono ${item.waiters > 0 ? "warn-text" : "muted"}`}>{fmtCount(item.waiters)}</span>
      <span className={`c-num mono ${item.oldestWaitMs > 0 ? "" : "muted"}`}>{item.waiters > 0 ? fmtDuration(item.oldestWaitMs) : "—"}</span>
      <span className="c-num mono">{fmtDuration(item.waitP99)}</span>
      <span className="c-num mono">{fmtDuration(item.holdP99)}</span>
      <span className="c-spark" ref={sparkRef} />
    </div>
  );
});
