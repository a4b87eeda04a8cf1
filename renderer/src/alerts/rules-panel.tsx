// The alert rules' numbers in force on the hub (thresholds:set changes them for everyone and
// goes into the recording). A refused value comes back naming the field, shown as it is.
import { useState } from "react";
import type { AlertThresholds } from "../../../shared/alerts/thresholds.js";
import { useApp, useChannel } from "../app/context.js";
import { errorText } from "../logic/error-text.js";

const GROUP_LABEL: Record<keyof AlertThresholds, string> = {
  window: "Windows",
  convoy: "Convoy",
  starvation: "Starvation",
  timeouts: "Timeouts",
  doubleRelease: "Double release",
  agentDown: "Agent down",
};

/** Each threshold in words, with its unit: what a user tunes, not the wire's key (kept as the hover text). */
const FIELD_WORDS: { readonly [G in keyof AlertThresholds]: { readonly [F in keyof AlertThresholds[G]]: string } } = {
  window: { maxGapIntervals: "A gap longer than this many sampling intervals restarts every window" },
  convoy: {
    windowMs: "Judged over the last (ms)",
    minHeldFraction: "…holding for at least this share of it (0–1)",
    minWaiters: "At least this many waiters",
    waitToHoldRatio: "Wait p99 at least this many times hold p50",
    clearMs: "Resolve after no waiters for (ms)",
  },
  starvation: {
    minWaitMs: "Oldest wait at least (ms)",
    holdP99Multiple: "…and at least this many times hold p99",
    openingWaitMs: "Oldest wait while connections are opening at least (ms)",
    clearMs: "Resolve after the condition is false for (ms)",
  },
  timeouts: {
    windowMs: "Measured over the last (ms)",
    ratio: "Timeouts + rejections per attempt at least (0–1)",
    minAttempts: "Judge only with at least this many attempts",
    clearMs: "Resolve after the ratio is below for (ms)",
  },
  doubleRelease: { quietMs: "Resolve after no double release for (ms)" },
  agentDown: {
    silentIntervals: "Down after silent for this many of its intervals",
    defaultIntervalMs: "Interval assumed before its first samples (ms)",
  },
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
      setState({ busy: false, error: errorText(err) });
    }
  };
  return (
    <div className="rule-field">
      <label className="small" htmlFor={`th-${group}-${field}`} title={field}>
        {(FIELD_WORDS[group] as Record<string, string | undefined>)[field] ?? field}
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
        {FIXED_RULES.map((r) => (
          <div key={r.title} className="card panel" data-testid="rule-fixed">
            <div className="card-head">
              <h3>{r.title}</h3>
            </div>
            <p className="muted small">{r.text}</p>
          </div>
        ))}
      </div>
    </div>
  );
}

/** The rules with nothing to tune, said in words so none is missing from the tab. */
const FIXED_RULES = [
  { title: "Leak", text: "No threshold: the check is exact (available + in use = N), and a permit held past the agent's leakThresholdMs is reported with its stack." },
  { title: "Over budget", text: "Raised when the caps of a fleet's live replicas add up past the budget each semaphore registers; resolved when back within it." },
  { title: "Order inversion", text: "Raised when two semaphores are taken in both orders (a deadlock waiting to happen); only acknowledging it resolves it." },
];
