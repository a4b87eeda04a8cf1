// Alerts: active, history, muted, and the rules' thresholds. A list on the left (j/k move,
// Enter opens the semaphore at the moment the alert was raised), the selected alert's evidence
// on the right.
import "./alerts.css";
import { useEffect, useMemo, useState } from "react";
import type { Alert } from "../../../shared/protocol/types.js";
import { useApp, useChannel, useMutesVersion } from "../app/context.js";
import { stepOf, useKeyHandler } from "../app/keyboard.js";
import { compareAlerts, RULE_LABEL } from "../logic/alert-target.js";
import { fmtAgo, fmtUtc, fmtWhen } from "../logic/format.js";
import type { AlertsTab } from "../logic/route.js";
import { useReplayClient } from "../replay/replay-bar.js";
import { openAlert, targetLabel } from "./alert-actions.js";
import { EvidenceView } from "./evidence-view.js";
import { HistoryFilters, matchesHistory, NO_HISTORY_FILTER, type HistoryFilter } from "./history-filters.js";
import { mutedEntries, MutedList } from "./muted-list.js";
import { RulesPanel } from "./rules-panel.js";

const TABS: { id: AlertsTab; label: string }[] = [
  { id: "active", label: "Active" },
  { id: "history", label: "History" },
  { id: "muted", label: "Muted" },
  { id: "rules", label: "Rules" },
];

export function AlertsView({ tab = "active", selectedId }: { tab?: AlertsTab; selectedId?: string }) {
  const app = useApp();
  const replay = useReplayClient();
  const { store, mutes, navigate } = app;
  const av = useChannel("alerts");
  const mv = useMutesVersion();
  // The selection belongs to the tab it was made in: another tab starts from its own first alert.
  const [picked, setPicked] = useState<{ tab: AlertsTab; id: string | null }>({ tab, id: selectedId ?? null });
  const selected = picked.tab === tab ? picked.id : null;
  const setSelected = (id: string) => setPicked({ tab, id });
  // Re-render the "3m ago" labels now and then.
  const [, setClock] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setClock((c) => c + 1), 15_000);
    return () => clearInterval(t);
  }, []);

  const { lists, muteEntries } = useMemo(() => {
    const active: Alert[] = [];
    for (const a of store.alertList()) {
      if (a.resolvedAt === null && mutes.until(a) === null) active.push(a);
    }
    // Every mute in force, firing or not; those whose alert is known can be selected.
    const entries = mutedEntries(mutes.inForce(), store.alertList());
    const muted = entries.flatMap((e) => (e.alert !== undefined ? [e.alert] : []));
    return { lists: { active, history: store.alertList(), muted, rules: [] as Alert[] }, muteEntries: entries };
    // av, mv: versions of the alerts and the mutes.
  }, [store, mutes, av, mv]);
  // The selection is pinned: an alert that resolves (or is muted) while selected stays in the
  // list, shown resolved, so the buttons beside it never change target under the cursor.
  const [history, setHistory] = useState<HistoryFilter>(NO_HISTORY_FILTER);
  const pinned = selected === null ? undefined : store.alert(selected);
  const list = useMemo(() => {
    const base = tab === "history" ? lists.history.filter((a) => matchesHistory(a, history)) : lists[tab];
    // A filter the user sets decides the list; the pinned alert is kept only against the data.
    return tab === "rules" || (tab === "history" && history !== NO_HISTORY_FILTER) ? base : withPinned(base, pinned);
  }, [lists, tab, pinned, history]);
  const index = list.findIndex((a) => a.id === selected);
  const current = index >= 0 ? list[index] : list[0];
  // Nothing chosen yet: pin what is shown, so a new alert arriving on top does not replace it.
  useEffect(() => {
    if (current !== undefined && current.id !== selected) setPicked({ tab, id: current.id });
  }, [current, selected, tab]);

  useKeyHandler((e) => {
    if (tab === "rules") return false;
    const step = stepOf(e);
    if (step !== null && list.length > 0) {
      const i = Math.max(0, Math.min(list.length - 1, (index < 0 ? 0 : index) + step));
      setSelected(list[i].id);
      document.querySelector(`[data-alert-id="${CSS.escape(list[i].id)}"]`)?.scrollIntoView({ block: "nearest" });
      return true;
    }
    if (e.key === "Enter" && current !== undefined) {
      openAlert(app, current, replay);
      return true;
    }
    return false;
  });

  const now = store.now();
  return (
    <section className="view alerts" data-testid="alerts">
      <div className="toolbar">
        <div className="segmented" role="tablist">
          {TABS.map((t) => (
            <button key={t.id} role="tab" aria-selected={tab === t.id} className={tab === t.id ? "active" : ""} onClick={() => navigate({ view: "alerts", ...(t.id !== "active" ? { tab: t.id } : {}) }, { replace: true })}>
              {t.label}
              {t.id !== "rules" && <span className="chip-count">{t.id === "muted" ? muteEntries.length : lists[t.id].length}</span>}
            </button>
          ))}
        </div>
        <span className="muted small toolbar-right">Acknowledge is shared through the hub; mute is this browser only.</span>
      </div>
      {tab === "history" && <HistoryFilters filter={history} onChange={setHistory} shown={list.length} total={lists.history.length} />}
      {tab === "rules" ? (
        <RulesPanel />
      ) : tab === "muted" && muteEntries.length > 0 ? (
        <div className="alerts-body">
          <MutedList entries={muteEntries} selectedId={current?.id ?? null} onSelect={(a) => setSelected(a.id)} />
          <div className="alert-detail">{current !== undefined && <EvidenceView alert={current} />}</div>
        </div>
      ) : list.length === 0 ? (
        <div className="list-empty">
          {tab === "active" ? (store.semaphoreCount === 0 ? "No active alerts: no semaphore has reported yet." : "No active alerts. Every semaphore is behaving.") : tab === "muted" ? "Nothing muted." : "No alerts yet."}
        </div>
      ) : (
        <div className="alerts-body">
          <ul className="alert-list" role="listbox" aria-label="Alerts">
            {list.map((a) => {
              const mutedUntil = mutes.until(a);
              return (
                <li
                  key={a.id}
                  role="option"
                  aria-selected={a === current}
                  data-alert-id={a.id}
                  className={`alert-item sev-${a.severity} ${a === current ? "selected" : ""} ${a.resolvedAt !== null ? "resolved" : ""} ${mutedUntil !== null ? "muted-alert" : ""}`}
                  onClick={() => setSelected(a.id)}
                  onDoubleClick={() => openAlert(app, a, replay)}
                >
                  <span className="alert-sev" />
                  <div className="alert-main">
                    <div className="alert-line">
                      <strong>{RULE_LABEL[a.rule]}</strong>
                      <span className="muted">{targetLabel(a)}</span>
                    </div>
                    <div className="alert-msg">{a.message}</div>
                  </div>
                  <div className="alert-meta">
                    <span className="mono small" title={replay === null ? new Date(a.raisedAt).toLocaleString() : fmtUtc(a.raisedAt)}>
                      {fmtWhen(a.raisedAt, now)}
                    </span>
                    <span className="muted small" data-testid={a.resolvedAt === null ? undefined : "resolved-tag"}>{a.resolvedAt === null ? fmtAgo(a.raisedAt, now) : "resolved"}</span>
                    <span className="alert-flags">
                      {a.acknowledged && <span className="tag tag-muted">ack</span>}
                      {mutedUntil !== null && <span className="tag tag-muted">muted</span>}
                    </span>
                  </div>
                </li>
              );
            })}
          </ul>
          <div className="alert-detail">{current !== undefined && <EvidenceView alert={current} />}</div>
        </div>
      )}
    </section>
  );
}

/** `list` with the pinned alert kept in its place (lists are newest first) when it left the list. */
export function withPinned(list: Alert[], pinned: Alert | undefined): Alert[] {
  if (pinned === undefined || list.some((a) => a.id === pinned.id)) return list;
  const out = [...list];
  const at = out.findIndex((a) => compareAlerts(pinned, a) < 0);
  out.splice(at < 0 ? out.length : at, 0, pinned);
  return out;
}
