// Replicas merged: one row per service and semaphore name, in-use summed against the summed
// caps and the budget, the fleet's wait and hold p99 from merged histograms (the hub's
// FleetEntry). Opens the fleet detail, whose charts are the replicas as one series. A global
// semaphore (redis-semaphore) shows the fleet-wide in-use read from Redis against the global cap,
// and flags leases held by no live agent (shared/protocol/global-view.ts).
import { memo, useCallback, useEffect, useMemo, useState } from "react";
import { globalViews, type GlobalView } from "../../../shared/protocol/global-view.js";
import type { UiSemaphore } from "../../../shared/ui-protocol/types.js";
import { useApp, useChannel, useStoreValue } from "../app/context.js";
import { stepOf, useKeyHandler } from "../app/keyboard.js";
import { Opening, RowStatus, UtilBar } from "../app/widgets.js";
import { filterReadsStatus, matchesChip, matchesFilter, parseFilter, type StatusChip } from "../logic/filter.js";
import { fleetRows, sharesTitle, sortFleetRows, type FleetRow } from "../logic/fleet-rows.js";
import { fmtCount, fmtDuration } from "../logic/format.js";
import { nextSort, type SortKey, type SortSpec } from "../logic/sorting.js";
import { countStatuses } from "../logic/status.js";
import { ListToolbar } from "./list-toolbar.js";
import { useHeldOrder } from "./held-order.js";
import { OrderHeldNote } from "./order-held-note.js";
import { fleetMemory as memory } from "./overview-memory.js";
import { ROW_HEIGHT, sortButton } from "./overview-rows.js";
import { useFilterRef } from "./overview-view.js";
import { rowAlertsOf, useRowAlerts } from "./use-row-alerts.js";
import { VirtualList } from "./virtual-list.js";

function Head({ sort, onSort }: { sort: SortSpec; onSort: (k: SortKey) => void }) {
  const h = (key: SortKey, label: string, cls: string) => sortButton(sort, onSort, key, label, cls);
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

function globalTitle(g: GlobalView): string {
  const fleet = g.inUse === null ? "Redis not readable now" : `${g.inUse} of ${g.cap} held fleet-wide (read from Redis by ${g.readBy ?? "?"})`;
  return `${fleet}; the ${g.replicas} live replicas hold ${g.agentsInUse}; ${g.unattributed} held outside any agent or just granted`;
}

function orphanTitle(g: GlobalView): string {
  const list = g.orphans.slice(0, 10).map((o) => `${o.id} (last held by ${o.instance})`);
  return `Leases still live in Redis whose holder's agent is gone; each lapses within the lease time:\n${list.join("\n")}${g.orphans.length > 10 ? "\n…" : ""}`;
}

const FleetRowView = memo(function FleetRowView({ row, global, selected, onOpen }: { row: FleetRow; global: GlobalView | undefined; selected: boolean; onOpen: (r: FleetRow) => void }) {
  const f = row.entry;
  // For a global semaphore, Redis's own count: it includes holders without an agent.
  const inUse = global?.inUse ?? f.inUse;
  const alerts = useRowAlerts(row.key);
  return (
    <div className={`grid-row sem-row ${selected ? "selected" : ""}`} role="row" aria-selected={selected} data-key={row.key} onClick={() => onOpen(row)}>
      <span className="c-name">
        <span className="muted">{f.service} /</span>
        <span className="sem-name">{f.name}</span>
        {f.scope === "global" && <span className="tag">global</span>}
      </span>
      <span className="c-status">
        <RowStatus status={row.status} alerts={alerts} />
        {f.overBudget && !(alerts?.rules.includes("over_budget") ?? false) && <span className="tag tag-leak">over budget</span>}
        {row.waitingTurn > 0 && row.shares !== null && (
          <span className="tag tag-muted turn-wait" data-testid="turn-wait" title={sharesTitle(f.budget, row.shares)}>
            {row.waitingTurn} waiting for {row.waitingTurn === 1 ? "its" : "their"} turn
          </span>
        )}
        {global !== undefined && global.orphans.length > 0 && (
          <span className="tag tag-leak" data-testid="orphans" title={orphanTitle(global)}>
            {global.orphans.length} orphaned
          </span>
        )}
      </span>
      <span className="c-util">
        <UtilBar inUse={inUse} cap={f.cap} budget={f.budget} />
        <Opening n={row.opening} />
      </span>
      <span className="c-num mono" data-testid={global !== undefined ? "global-in-use" : undefined} title={global !== undefined ? globalTitle(global) : undefined}>
        {global !== undefined && global.inUse === null ? "—" : fmtCount(inUse)}
        <span className="muted"> / {fmtCount(f.cap)}</span>
      </span>
      <span className={`c-num mono ${f.overBudget ? "bad-text" : f.budget === null ? "muted" : ""}`}>{f.budget === null ? "—" : fmtCount(f.budget)}</span>
      <span className={`c-num mono ${f.waiters > 0 ? "warn-text" : "muted"}`}>{fmtCount(f.waiters)}</span>
      <span className="c-num mono">{fmtDuration(row.waitP99)}</span>
      <span className="c-num mono">{fmtDuration(row.holdP99)}</span>
      <span className="c-replicas">
        {row.troubled > 0 && <span className="muted small">{row.troubled} not ok ·&nbsp;</span>}
        {row.shares !== null && (
          <span className={`share-split mono small ${row.shares.some((x) => !x.reachable) ? "warn-text" : "muted"}`} data-testid="shares" title={sharesTitle(f.budget, row.shares)}>
            {row.shares.map((x) => x.cap).join("·")}
          </span>
        )}
        {row.shares !== null && <span className="muted small">&nbsp;·&nbsp;</span>}
        {row.replicas}
      </span>
    </div>
  );
});

const fleetKey = (r: FleetRow): string => r.key;

export function FleetView() {
  const { store, navigate } = useApp();
  const fv = useChannel("fleet");
  const sv = useChannel("semaphores");
  const av = useChannel("agents");
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
  const alertsVersion = useStoreValue("alerts", () => (filterReadsStatus(parsed) ? store.version("alerts") : 0));
  const all = useMemo(() => {
    const index = rowAlertsOf(store);
    return fleetRows(store.fleet, store.itemList()).filter((r) => matchesFilter(r, parsed, (x) => index.get(x.key)?.rules));
  }, [store, fv, sv, parsed, alertsVersion]);
  // av and sv: the versions of what the global views derive from.
  const globals = useMemo(() => {
    const sems: UiSemaphore[] = [];
    for (const it of store.itemList()) {
      const s = store.semaphore(it.key);
      if (s !== undefined) sems.push(s);
    }
    return new Map(globalViews(sems, (id) => store.agentConnected(id)).map((g) => [g.key, g]));
  }, [store, sv, av]);
  // A fleet a rule badges (over budget, a replica's double release) is a problem whatever its status.
  const badges = useChannel("alerts");
  const counts = useMemo(() => {
    const index = rowAlertsOf(store);
    return countStatuses(all.map((r) => r.status), (i) => index.has(all[i].key));
  }, [store, all, badges]);
  const liveRows = useMemo(() => {
    const index = rowAlertsOf(store);
    return sortFleetRows(all.filter((r) => matchesChip(r.status, chip, index.has(r.key))), sort);
  }, [store, all, chip, sort, badges]);
  // What the user chose: a change of it re-sorts at once, held or not.
  const userKey = useMemo(() => ({}), [parsed, chip, sort]);
  const order = useHeldOrder(liveRows, userKey, fleetKey);
  const rows = order.rows;
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
      order.keyMoved();
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
      <ListToolbar inputRef={inputRef} query={query} onQuery={setQuery} chip={chip} onChip={setChip} counts={counts} unknown={parsed.unknown} placeholder="Filter: service, semaphore name, is:saturated">
        <span className="muted small">Replicas sharing a semaphore name, as one limiter · percentiles merged from every replica’s histogram</span>
      </ListToolbar>
      <div className="table fleet-table" {...order.tableProps} data-order-held={order.held}>
        <Head sort={sort} onSort={(k) => setSort((s) => nextSort(s, k))} />
        {rows.length === 0 ? (
          <div className="list-empty">No fleet matches this filter.</div>
        ) : (
          <VirtualList
            rows={rows}
            rowHeight={ROW_HEIGHT}
            selected={selected}
            renderRow={(r, _i, sel) => <FleetRowView row={r} global={r.entry.scope === "global" ? globals.get(r.key) : undefined} selected={sel} onOpen={open} />}
            initialScrollTop={memory.scrollTop}
            onScrollTop={(top) => (memory.scrollTop = top)}
            label="Fleets"
          />
        )}
      </div>
      <footer className="list-foot muted small">
        <OrderHeldNote order={order} />
        {rows.length} of {store.fleet.length} fleets · in use and N summed over live replicas (a global semaphore's N counted once, its in-use read from Redis)
      </footer>
    </section>
  );
}
