// The fleet at a glance: services → instances → semaphores with status, utilization against
// the cap, the queue, latency and a one-minute sparkline. Filter, sort, group; windowed so 500
// semaphores render only the rows on screen; arrows/j/k move, Enter opens, ←/→ fold groups.
import "./overview.css";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useApp, useChannel, useStoreValue } from "../app/context.js";
import { stepOf, useKeyHandler } from "../app/keyboard.js";
import { useColorScheme } from "../app/theme.js";
import { filterIsLive, filterReadsStatus, matchesChip, matchesFilter, parseFilter, type StatusChip } from "../logic/filter.js";
import { nextSort, sortIsLive, type SortKey, type SortSpec } from "../logic/sorting.js";
import { countStatuses } from "../logic/status.js";
import { buildFlatRows, buildRows, type OverviewRow } from "../logic/tree.js";
import { ListToolbar } from "./list-toolbar.js";
import { savePrefs, semaphoreMemory as memory } from "./overview-memory.js";
import { ColumnHeader, InstanceRowView, ROW_HEIGHT, SemaphoreRowView, ServiceRowView } from "./overview-rows.js";
import { useHeldOrder } from "./held-order.js";
import { OrderHeldNote } from "./order-held-note.js";
import { SparklinePainter } from "./sparkline-painter.js";
import { rowAlertsOf } from "./use-row-alerts.js";
import { VirtualList } from "./virtual-list.js";

let filterInput: HTMLInputElement | null = null;

const rowId = (r: OverviewRow): string => r.id;

/** "/" from anywhere: focus the filter of whichever list is on screen. */
export function focusFilter(): void {
  filterInput?.focus();
  filterInput?.select();
}

export function useFilterRef() {
  const ref = useRef<HTMLInputElement | null>(null);
  useEffect(() => {
    filterInput = ref.current;
    return () => {
      if (filterInput === ref.current) filterInput = null;
    };
  });
  return ref;
}

export function OverviewView({ initialQuery }: { initialQuery?: string }) {
  const { store, navigate } = useApp();
  const scheme = useColorScheme();
  const [query, setQuery] = useState(initialQuery ?? memory.query);
  const [chip, setChip] = useState<StatusChip>(memory.chip);
  const [sort, setSort] = useState<SortSpec>(memory.sort);
  const [grouped, setGrouped] = useState(memory.grouped);
  const [collapsed, setCollapsed] = useState<Set<string>>(memory.collapsed);
  const [selectedId, setSelectedId] = useState<string | null>(memory.selectedId);
  const inputRef = useFilterRef();

  const painter = useMemo(() => new SparklinePainter(store), [store]);
  useEffect(() => () => painter.dispose(), [painter]);
  useEffect(() => store.subscribe("semaphores", painter.invalidate), [store, painter]);
  useEffect(() => painter.retheme(), [painter, scheme]);

  useEffect(() => {
    Object.assign(memory, { query, chip, sort, grouped, collapsed, selectedId });
    savePrefs(sort, grouped);
  }, [query, chip, sort, grouped, collapsed, selectedId]);

  const parsed = useMemo(() => parseFilter(query), [query]);
  // Sorted or filtered by status and names, the rows change only with the structure (a
  // semaphore came, went or changed status); by a live number, with every delta.
  const liveStructure = sortIsLive(sort.key) || filterIsLive(parsed);
  const version = useChannel(liveStructure ? "semaphores" : "structure");
  // `is:<rule>` reads the alerts: the rows it picks change with them.
  const alertsVersion = useStoreValue("alerts", () => (filterReadsStatus(parsed) ? store.version("alerts") : 0));
  const matching = useMemo(() => {
    const index = rowAlertsOf(store);
    return store.itemList().filter((it) => matchesFilter(it, parsed, (x) => index.get(x.key)?.rules));
  }, [store, version, parsed, alertsVersion]);
  // A row a rule badges is a problem whatever its status (the Problems chip, a service's "need
  // attention"): those follow the alerts.
  const badges = useChannel("alerts");
  const counts = useMemo(() => {
    const index = rowAlertsOf(store);
    return countStatuses(matching.map((it) => it.status), (i) => index.has(matching[i].key));
  }, [store, matching, badges]);
  const [liveRows, shownCount] = useMemo((): [OverviewRow[], number] => {
    const index = rowAlertsOf(store);
    const shown = chip === "all" ? matching : matching.filter((it) => matchesChip(it.status, chip, index.has(it.key)));
    return [grouped ? buildRows(shown, sort, collapsed, (key) => index.has(key)) : buildFlatRows(shown, sort), shown.length];
  }, [store, matching, chip, grouped, sort, collapsed, badges]);
  // What the user chose: a change of it re-sorts at once, held or not.
  const userKey = useMemo(() => ({}), [parsed, chip, grouped, sort, collapsed]);
  const order = useHeldOrder(liveRows, userKey, rowId);
  const rows = order.rows;

  const selected = selectedId === null ? -1 : rows.findIndex((r) => r.id === selectedId);

  const toggle = useCallback((id: string) => {
    setSelectedId(id);
    setCollapsed((prev) => {
      const next = new Set(prev);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  }, []);
  const open = useCallback((key: string) => {
    setSelectedId(key);
    navigate({ view: "semaphore", key });
  }, [navigate]);
  const onSort = useCallback((k: SortKey) => setSort((s) => nextSort(s, k)), []);

  useKeyHandler((e) => {
    const step = stepOf(e);
    if (step !== null) {
      if (rows.length === 0) return true;
      const from = selected < 0 ? (step > 0 ? -1 : rows.length) : selected;
      const i = Math.max(0, Math.min(rows.length - 1, from + step));
      setSelectedId(rows[i].id);
      order.keyMoved();
      if (document.activeElement === inputRef.current) inputRef.current?.blur();
      return true;
    }
    const row = selected >= 0 ? rows[selected] : undefined;
    if (row === undefined) return false;
    if (e.key === "Enter") {
      if (row.kind === "semaphore") open(row.id);
      else toggle(row.id);
      return true;
    }
    if ((e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "h" || e.key === "l") && row.kind !== "semaphore") {
      const collapse = e.key === "ArrowLeft" || e.key === "h";
      if (collapse !== row.collapsed) toggle(row.id);
      return true;
    }
    return false;
  });

  const renderRow = useCallback(
    (row: OverviewRow, _i: number, isSelected: boolean) => {
      switch (row.kind) {
        case "service":
          return <ServiceRowView row={row} selected={isSelected} onToggle={toggle} />;
        case "instance":
          return <InstanceRowView row={row} selected={isSelected} onToggle={toggle} />;
        case "semaphore":
          return <SemaphoreRowView initial={row.item} selected={isSelected} indent={grouped} painter={painter} onOpen={open} />;
      }
    },
    [toggle, open, painter, grouped],
  );

  return (
    <section className="view overview" data-testid="overview">
      <ListToolbar
        inputRef={inputRef}
        query={query}
        onQuery={setQuery}
        chip={chip}
        onChip={setChip}
        counts={counts}
        unknown={parsed.unknown}
        placeholder="Filter: name, service, kind:pg-pool, is:leak, util>80, waiters>0"
      >
        <div className="segmented" role="radiogroup" aria-label="Layout">
          <button role="radio" aria-checked={grouped} className={grouped ? "active" : ""} onClick={() => setGrouped(true)}>
            By service
          </button>
          <button role="radio" aria-checked={!grouped} className={!grouped ? "active" : ""} onClick={() => setGrouped(false)}>
            Flat
          </button>
        </div>
      </ListToolbar>
      <div className="table sem-table" {...order.tableProps} data-order-held={order.held}>
        <ColumnHeader sort={sort} onSort={onSort} />
        {rows.length === 0 ? (
          <div className="list-empty">No semaphore matches {query !== "" ? <code>{query}</code> : "this filter"}.</div>
        ) : (
          <VirtualList
            rows={rows}
            rowHeight={ROW_HEIGHT}
            selected={selected}
            renderRow={renderRow}
            initialScrollTop={memory.scrollTop}
            onScrollTop={(top) => (memory.scrollTop = top)}
            label="Semaphores"
          />
        )}
      </div>
      <footer className="list-foot muted small">
        <OrderHeldNote order={order} />
        {shownCount} of {store.semaphoreCount} semaphores · <kbd className="kbd">j</kbd>/<kbd className="kbd">k</kbd> move ·{" "}
        <kbd className="kbd">Enter</kbd> open · <kbd className="kbd">←</kbd>/<kbd className="kbd">→</kbd> fold · <kbd className="kbd">/</kbd> filter
      </footer>
    </section>
  );
}
