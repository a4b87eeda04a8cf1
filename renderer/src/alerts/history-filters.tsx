// The History tab's filters: by rule, by state (active, resolved, acknowledged) and by words in
// the target (service, instance, semaphore). Hundreds of alerts in half an hour are otherwise
// one long scroll.
import type { Alert, AlertRule } from "../../../shared/protocol/types.js";
import { RULE_LABEL } from "../logic/alert-target.js";
import { targetLabel } from "./alert-actions.js";

export type HistoryState = "all" | "active" | "resolved" | "acknowledged";

export interface HistoryFilter {
  rule: AlertRule | "all";
  state: HistoryState;
  text: string;
}

export const NO_HISTORY_FILTER: HistoryFilter = Object.freeze({ rule: "all", state: "all", text: "" });

export function matchesHistory(a: Alert, f: HistoryFilter): boolean {
  if (f.rule !== "all" && a.rule !== f.rule) return false;
  if (f.state === "active" && a.resolvedAt !== null) return false;
  if (f.state === "resolved" && a.resolvedAt === null) return false;
  if (f.state === "acknowledged" && !a.acknowledged) return false;
  const words = f.text.trim().toLowerCase().split(/\s+/).filter((w) => w !== "");
  if (words.length === 0) return true;
  const target = `${targetLabel(a)} ${a.key}`.toLowerCase();
  return words.every((w) => target.includes(w));
}

const STATES: { id: HistoryState; label: string }[] = [
  { id: "all", label: "Any state" },
  { id: "active", label: "Active" },
  { id: "resolved", label: "Resolved" },
  { id: "acknowledged", label: "Acknowledged" },
];

export function HistoryFilters({ filter, onChange, shown, total }: { filter: HistoryFilter; onChange: (f: HistoryFilter) => void; shown: number; total: number }) {
  const set = (patch: Partial<HistoryFilter>) => {
    const next = { ...filter, ...patch };
    onChange(next.rule === "all" && next.state === "all" && next.text === "" ? NO_HISTORY_FILTER : next);
  };
  return (
    <div className="toolbar history-filters" data-testid="history-filters">
      <select className="btn btn-sm select-btn" aria-label="Rule" value={filter.rule} onChange={(e) => set({ rule: e.target.value as HistoryFilter["rule"] })}>
        <option value="all">Any rule</option>
        {(Object.keys(RULE_LABEL) as AlertRule[]).map((r) => (
          <option key={r} value={r}>
            {RULE_LABEL[r]}
          </option>
        ))}
      </select>
      <select className="btn btn-sm select-btn" aria-label="State" value={filter.state} onChange={(e) => set({ state: e.target.value as HistoryState })}>
        {STATES.map((s) => (
          <option key={s.id} value={s.id}>
            {s.label}
          </option>
        ))}
      </select>
      <label className="search">
        <input type="search" aria-label="Semaphore or service" placeholder="Semaphore, service or instance" spellCheck={false} value={filter.text} onChange={(e) => set({ text: e.target.value })} />
      </label>
      <span className="muted small" data-testid="history-count">
        {shown} of {total}
      </span>
    </div>
  );
}
