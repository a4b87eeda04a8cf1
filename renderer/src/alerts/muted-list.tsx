// The Muted tab: every mute in force on this browser, whether or not its alert is firing now,
// with when it ends and an Unmute; a mute whose alert is known opens its evidence beside.
import type { Alert } from "../../../shared/protocol/types.js";
import { useApp } from "../app/context.js";
import { Icon } from "../app/widgets.js";
import { RULE_LABEL } from "../logic/alert-target.js";
import { fmtWhen } from "../logic/format.js";
import { muteTarget, type Mute } from "../logic/mutes.js";

export interface MutedEntry {
  mute: Mute;
  rule: Alert["rule"];
  key: string;
  /** The newest alert with that rule and key, if the page knows one. */
  alert: Alert | undefined;
}

/** The mutes in force, each with its newest alert (alerts come newest first). */
export function mutedEntries(mutes: readonly Mute[], alerts: readonly Alert[]): MutedEntry[] {
  const out: MutedEntry[] = [];
  for (const mute of mutes) {
    const t = muteTarget(mute.match);
    if (t === null) continue;
    out.push({ mute, ...t, alert: alerts.find((a) => a.rule === t.rule && a.key === t.key) });
  }
  return out;
}

export function MutedList({ entries, selectedId, onSelect }: { entries: readonly MutedEntry[]; selectedId: string | null; onSelect: (a: Alert) => void }) {
  const { mutes, store } = useApp();
  const now = store.now();
  return (
    <ul className="alert-list muted-list" aria-label="Mutes" data-testid="muted-list">
      {entries.map((e) => {
        const a = e.alert;
        const state = a === undefined ? "not firing" : a.resolvedAt === null ? "firing" : "resolved";
        return (
          <li
            key={e.mute.match}
            className={`alert-item muted-alert ${a !== undefined && a.id === selectedId ? "selected" : ""}`}
            data-mute={e.mute.match}
            onClick={() => a !== undefined && onSelect(a)}
          >
            <span className="alert-sev" />
            <div className="alert-main">
              <div className="alert-line">
                <strong>{RULE_LABEL[e.rule]}</strong>
                <span className="muted">{e.key}</span>
              </div>
              <div className="alert-msg">
                {state} · muted until <span className="mono">{fmtWhen(e.mute.until, now)}</span>
              </div>
            </div>
            <div className="alert-meta">
              <button
                className="btn btn-xs"
                data-testid="unmute"
                onClick={(ev) => {
                  ev.stopPropagation();
                  mutes.unmute({ rule: e.rule, key: e.key });
                }}
              >
                <Icon name="mute" /> Unmute
              </button>
            </div>
          </li>
        );
      })}
    </ul>
  );
}
