// The alert rules' numbers in force on the hub (thresholds:set changes them for everyone and
// goes into the recording). A refused value comes back naming the field, shown as it is.
import { useState } from "react";
import type { AlertThresholds } from "../../../shared/alerts/thresholds.js";
import { useApp, useChannel } from "../app/context.js";

const GROUP_LABEL: Record<keyof AlertThresholds, string> = {
  window: "Windows",
  convoy: "Convoy",
  starvation: "Starvation",
  timeouts: "Timeouts",
  doubleRelease: "Double release",
  agentDown: "Agent down",
};

function FieldRow({ group, field, value }: { group: keyof AlertThresholds; field: string; value: number }) {
  const { client, store } = useApp();
  const [text, setText] = useState(String(value));
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  const dirty = text !== String(value);
  const save = async () => {
    setState({ busy: true, error: null });
    try {
      const { thresholds } = await client.request("thresholds:set", { patch: { [group]: { [field]: Number(text) } } });
      store.setThresholds(thresholds);
      setState({ busy: false, error: null });
    } catch (err) {
      setState({ busy: false, error: err instanceof Error ? err.message : String(err) });
    }
  };
  return (
    <div className="rule-field">
      <label className="mono small" htmlFor={`th-${group}-${field}`}>
        {field}
      </label>
      <input id={`th-${group}-${field}`} className="mono" inputMode="decimal" value={text} onChange={(e) => setText(e.target.value)} onKeyDown={(e) => e.key === "Enter" && dirty && void save()} />
      {dirty && (
        <button className="btn btn-xs btn-primary" disabled={state.busy} onClick={() => void save()}>
          Save
        </button>
      )}
      {state.error !== null && <span className="bad-text small">{state.error}</span>}
    </div>
  );
}

export function RulesPanel() {
  const { store } = useApp();
  const v = useChannel("alerts");
  const th = store.thresholds;
  if (th === null) return <div className="list-empty">No thresholds yet.</div>;
  return (
    <div className="rules" data-v={v}>
      <p className="muted small">Leak has no threshold (the check is exact); over_budget takes its budget from each semaphore’s registration.</p>
      <div className="rules-grid">
        {(Object.keys(GROUP_LABEL) as (keyof AlertThresholds)[]).map((g) => (
          <div key={g} className="card panel">
            <div className="card-head">
              <h3>{GROUP_LABEL[g]}</h3>
            </div>
            {Object.entries(th[g]).map(([field, value]) => (
              <FieldRow key={`${field}:${String(value)}`} group={g} field={field} value={value as number} />
            ))}
          </div>
        ))}
      </div>
    </div>
  );
}
