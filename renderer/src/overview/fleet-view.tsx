// Replicas merged: one row per service and semaphore name, in-use summed against the summed
// caps and the budget, the fleet's wait and hold p99 from merged histograms (the hub's
// FleetEntry). Opens the fleet detail, whose charts are the replicas as one series.
import { memo, useCallback, useEffect, useMemo, useState } from "react";
import { useApp, useChannel } from "../app/context.js";
import { stepOf, useKeyHandler } from "../app/keyboard.js";
import { StatusBadge, UtilBar } from "../app/widgets.js";
import { matchesChip, matchesFilter, parseFilter, type StatusChip } from "../logic/filter.js";
import { fleetRows, sortFleetRows, type FleetRow } from "../logic/fleet-rows.js";
import { fmtCount, fmtDuration } from "../logic/format.js";
import { nextSort, SORT_LABEL, type SortKey, type SortSpec } from "../logic/sorting.js";
import { countStatuses } from "../logic/status.js";
import { ListToolbar } from "./list-toolbar.js";
import { fleetMemory as memory } from "./overview-memory.js";
import { ROW_HEIGHT } from "./overview-rows.js";
import { useFilterRef } from "./overview-view.js";
import { VirtualList } from "./virtual-list.js";

function Head({ sort, onSort }: { sort: SortSpec; onSort: (k: SortKey) => void }) {
  const h = (key: SortKey, label: string, cls: string) => (
    <button className={`${cls} sortable ${sort.key === key ? "sorted" : ""}`} onClick={() => onSort(key)} title={`Sort by ${SORT_LABEL[key]}`}>
      {label}
      {sort.key === key && <span className="sort-arrow">{sort.dir === "asc" ? "▲" : "▼"}</span>}
    </button>
  );
  return (
    <div className="grid-row grid-head" role="row">
      {h("name", "Service / semaphore", "c-name")}
      {h("status", "Status", "c-status")}
      {h("util", "In use vs N", "c-util")}
      <span className="c-num">In use / ΣN</span>
      <span className="c-num">Budget</span>
      {h("waiters", "Waiters", "c-num")}
      {h("wait", "Wait p99", "c-num")}
      <span className="c-num" title="Merged from every replica's histogram: a real fleet p99">
        Hold p99
      </span>
      <span className="c-replicas">Replicas</span>
    </div>
  );
}

const FleetRowView = memo(function FleetRowView({ row, selected, onOpen }: { row: FleetRow; selected: boolean; onOpen: (r: FleetRow) => void }) {
  const f = row.entry;
  return (
    <div className={`grid-row sem-row ${selected ? "selected" : ""}`} role="row" aria-selected={selected} data-key={row.key} onClick={() => onOpen(row)}>
      <span className="c-name">
        <span className="muted">{f.service} /</span>
        <span className="sem-name">{f.name}</span>
        {f.scope === "global" && <span className="tag">global</span>}
      </span>
      <span className="c-status">
        <StatusBadge status={row.status} />
        {f.overBudget && <span className="tag tag-leak">over budget</span>}
      </span>
      <span className="c-util">
        <UtilBar inUse={f.inUse} cap={f.cap} budget={f.budget} />
      </span>
      <span className="c-num mono">
        {fmtCount(f.inUse)}
        <span className="muted"> / {fmtCount(f.cap)}</span>
      </span>
      <span className={`c-num mono ${f.overBudget ? "bad-text" : f.budget === null ? "muted" : ""}`}>{f.budget === null ? "—" : fmtCount(f.budget)}</span>
      <span className={`c-num mono ${f.waiters > 0 ? "warn-text" : "muted"}`}>{fmtCount(f.waiters)}</span>
      <span className="c-num mono">{fmtDuration(f.waitMs.p99)}</span>
      <span className="c-num mono">{fmtDuration(f.holdMs.p99)}</span>
      <span className="c-replicas">
        {row.troubled > 0 && <span className="muted small">{row.troubled} not ok ·&nbsp;</span>}
        {row.replicas}
      </span>
    </div>
  );
});

export function FleetView() {
  const { store, navigate } = useApp();
  const fv = useChannel("fleet");
  const sv = useChannel("semaphores");
  const [query, setQuery] = useState(memory.query);
  const [chip, setChip] = useState<StatusChip>(memory.chip);
  const [sort, setSort] = useState<SortSpec>(memory.sort);
  const [selectedId, setSelectedId] = useState<string | null>(memory.selectedId);
  const inputRef = useFilterRef();
  useEffect(() => {
    Object.assign(memory, { query, chip, sort, selectedId });
  }, [query, chip, sort, selectedId]);

  const parsed = useMemo(() => parseFilter(query), [query]);
  // fv and sv are the store versions the rows derive from.
  const all = useMemo(() => fleetRows(store.fleet, store.itemList()).filter((r) => matchesFilter(r, parsed)), [store, fv, sv, parsed]);
  const counts = useMemo(() => countStatuses(all.map((r) => r.status)), [all]);
  const rows = useMemo(() => sortFleetRows(all.filter((r) => matchesChip(r.status, chip)), sort), [all, chip, sort]);
  const selected = selectedId === null ? -1 : rows.findIndex((r) => r.key === selectedId);

  const open = useCallback((r: FleetRow) => {
    setSelectedId(r.key);
    navigate({ view: "fleet", service: r.service, name: r.name });
  }, [navigate]);

  useKeyHandler((e) => {
    const step = stepOf(e);
    if (step !== null) {
      if (rows.length === 0) return true;
      const from = selected < 0 ? (step > 0 ? -1 : rows.length) : selected;
      setSelectedId(rows[Math.max(0, Math.min(rows.length - 1, from + step))].key);
      if (document.activeElement === inputRef.current) inputRef.current?.blur();
      return true;
    }
    if (e.key === "Enter" && selected >= 0) {
      open(rows[selected]);
      return true;
    }
    return false;
  });

  return (
    <section className="view overview" data-testid="fleet">
      <ListToolbar inputRef={inputRef} query={query} onQuery={setQuery} chip={chip} onChip={setChip} counts={counts} placeholder="Filter: service, semaphore name, is:saturated">
        <span className="muted small">Replicas sharing a semaphore name, as one limiter · percentiles merged from every replica’s histogram</span>
      </ListToolbar>
      <div className="table fleet-table">
        <Head sort={sort} onSort={(k) => setSort((s) => nextSort(s, k))} />
        {rows.length === 0 ? (
          <div className="list-empty">No fleet matches this filter.</div>
        ) : (
          <VirtualList
            rows={rows}
            rowHeight={ROW_HEIGHT}
            selected={selected}
            renderRow={(r, _i, sel) => <FleetRowView row={r} selected={sel} onOpen={open} />}
            initialScrollTop={memory.scrollTop}
            onScrollTop={(top) => (memory.scrollTop = top)}
            label="Fleets"
          />
        )}
      </div>
      <footer className="list-foot muted small">
        {rows.length} of {store.fleet.length} fleets · in use and N summed over live replicas (a global semaphore's N counted once)
      </footer>
    </section>
  );
}
