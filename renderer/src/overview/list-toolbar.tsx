// Above a list: the filter box (/ focuses it), status chips with counts, and view options.
import type { ReactNode, RefObject } from "react";
import { Icon, Kbd } from "../app/widgets.js";
import type { StatusChip } from "../logic/filter.js";
import type { StatusCounts } from "../logic/status.js";

const CHIPS: { id: StatusChip; label: string }[] = [
  { id: "all", label: "All" },
  { id: "problems", label: "Problems" },
  { id: "leak", label: "Leak" },
  { id: "convoy", label: "Convoy" },
  { id: "saturated", label: "Saturated" },
  { id: "stale", label: "Stale" },
];

function chipCount(c: StatusCounts, id: StatusChip): number {
  if (id === "all") return c.total;
  if (id === "problems") return c.problems;
  return c[id];
}

export interface ListToolbarProps {
  inputRef: RefObject<HTMLInputElement | null>;
  query: string;
  onQuery: (q: string) => void;
  chip: StatusChip;
  onChip: (c: StatusChip) => void;
  counts: StatusCounts;
  placeholder: string;
  /** Filter words that match nothing because they name nothing (`is:foo`). */
  unknown?: readonly string[];
  children?: ReactNode;
}

export function ListToolbar({ inputRef, query, onQuery, chip, onChip, counts, placeholder, unknown = [], children }: ListToolbarProps) {
  return (
    <div className="toolbar">
      <label className="search">
        <Icon name="search" />
        <input
          ref={inputRef}
          type="search"
          placeholder={placeholder}
          value={query}
          onChange={(e) => onQuery(e.target.value)}
          spellCheck={false}
          aria-label="Filter"
          data-testid="filter"
          onKeyDown={(e) => {
            // Esc clears the filter (and the app's key handler then leaves the box).
            if (e.key === "Escape") onQuery("");
          }}
        />
        {query === "" && <Kbd>/</Kbd>}
      </label>
      {unknown.length > 0 && (
        <span className="bad-text small" data-testid="filter-unknown">
          No status or rule is called {unknown.join(", ")}
        </span>
      )}
      <div className="chips" role="radiogroup" aria-label="Status">
        {CHIPS.map((c) => {
          const n = chipCount(counts, c.id);
          if (n === 0 && c.id !== "all" && c.id !== "problems" && chip !== c.id) return null;
          return (
            <button key={c.id} role="radio" aria-checked={chip === c.id} className={`chip chip-${c.id} ${chip === c.id ? "active" : ""}`} onClick={() => onChip(c.id)}>
              {c.id !== "all" && c.id !== "problems" && <span className={`dot status-${c.id}`} />}
              {c.label}
              <span className="chip-count">{n}</span>
            </button>
          );
        })}
      </div>
      <div className="toolbar-right">{children}</div>
    </div>
  );
}
