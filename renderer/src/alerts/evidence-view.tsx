// One alert in full: what raised it (the evidence's numbers), the acquisition stacks of leaked
// permits, and the actions: acknowledge (for everyone, on the hub), mute (here), open.
import { useState } from "react";
import type { Alert } from "../../../shared/protocol/types.js";
import { useApp } from "../app/context.js";
import { Icon } from "../app/widgets.js";
import { RULE_LABEL } from "../logic/alert-target.js";
import { evidenceLabel, evidenceStacks, flattenEvidence, isDurationPath, leakHolders } from "../logic/evidence.js";
import { fmtCount, fmtDuration, fmtUtc, fmtWhen } from "../logic/format.js";
import { MUTE_DURATIONS } from "../logic/mutes.js";
import { useReplayClient } from "../replay/replay-bar.js";
import { acknowledge, openAlert, targetLabel } from "./alert-actions.js";
import { diagnosisOf, DiagnosisView } from "./diagnosis-view.js";
import { flightOf, FlightView } from "./flight-view.js";
import { errorText } from "../logic/error-text.js";

function fmtEvidence(path: string, value: string | number | boolean, time: boolean, now: number): string {
  if (typeof value !== "number") return String(value);
  if (time) return fmtWhen(value, now);
  if (isDurationPath(path)) return fmtDuration(value);
  return fmtCount(value);
}

export function MuteControl({ alert }: { alert: Alert }) {
  const { mutes } = useApp();
  const until = mutes.until(alert);
  if (until !== null) {
    return (
      <button className="btn btn-xs" onClick={() => mutes.unmute(alert)} title={`Muted on this browser until ${new Date(until).toLocaleString()}`}>
        <Icon name="mute" /> Unmute
      </button>
    );
  }
  return (
    <select
      className="btn btn-xs select-btn"
      value=""
      aria-label="Mute for"
      title="Mute on this browser (others still see it)"
      onChange={(e) => {
        const ms = Number(e.target.value);
        if (ms > 0) mutes.mute(alert, ms);
      }}
    >
      <option value="">Mute…</option>
      {MUTE_DURATIONS.map((d) => (
        <option key={d.ms} value={d.ms}>
          for {d.label}
        </option>
      ))}
    </select>
  );
}

export function EvidenceView({ alert }: { alert: Alert }) {
  const app = useApp();
  const replay = useReplayClient();
  const [acking, setAcking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const now = app.store.now();
  // A replay says its times as its bar does (UTC), live ones are local.
  const when = (t: number) => (replay === null ? fmtWhen(t, now) : fmtUtc(t));
  // The ring and the diagnosis get views of their own, not a line per number.
  const { flight: _flight, diagnosis: _diagnosis, ...ruleEvidence } = alert.evidence ?? {};
  const lines = flattenEvidence(ruleEvidence);
  const holders = leakHolders(ruleEvidence);
  const stacks = evidenceStacks(ruleEvidence);
  const diagnosis = diagnosisOf(alert.evidence);
  const flight = flightOf(alert.evidence);
  const ack = async () => {
    setAcking(true);
    setError(null);
    try {
      await acknowledge(app, alert);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setAcking(false);
    }
  };

  return (
    <div className="card evidence" data-testid="evidence">
      <div className="evidence-head">
        <span className={`sev sev-${alert.severity}`}>{alert.severity}</span>
        <h2>{RULE_LABEL[alert.rule]}</h2>
        <span className="muted">{targetLabel(alert)}</span>
      </div>
      <p className="evidence-message">{alert.message}</p>
      <dl className="kv">
        <dt>Raised</dt>
        <dd className="mono">{when(alert.raisedAt)}</dd>
        <dt>Resolved</dt>
        <dd className="mono">{alert.resolvedAt === null ? <span className="bad-text">still active</span> : `${when(alert.resolvedAt)} (after ${fmtDuration(alert.resolvedAt - alert.raisedAt)})`}</dd>
        <dt>Acknowledged</dt>
        <dd>{alert.acknowledged ? "yes" : "no"}</dd>
      </dl>
      <div className="actions">
        <button className="btn btn-primary btn-sm" onClick={() => openAlert(app, alert, replay)} data-testid="open-alert">
          <Icon name="link" /> Show at {when(alert.raisedAt)}
        </button>
        {!alert.acknowledged && (
          <button className="btn btn-sm" onClick={() => void ack()} disabled={acking} data-testid="ack">
            <Icon name="check" /> Acknowledge
          </button>
        )}
        <MuteControl alert={alert} />
      </div>
      {error !== null && <p className="bad-text small">{error}</p>}
      {diagnosis !== null && <DiagnosisView diagnosis={diagnosis} />}
      {lines.length > 0 && (
        <>
          <h4 className="subhead">Evidence</h4>
          <dl className="kv kv-evidence">
            {lines.map((l) => (
              <div key={l.path} className="kv-pair">
                <dt title={l.path}>{evidenceLabel(l.path)}</dt>
                <dd className="mono">{fmtEvidence(l.path, l.value, l.time, now)}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
      {holders.length > 0 && (
        <>
          <h4 className="subhead">Suspected holders</h4>
          {holders.map((h) => (
            <div key={h.holderId} className="holder">
              <div className="holder-head static">
                <span className="mono">{h.holderId}</span>
                <span className="mono muted">{h.heldMs !== null ? `held ${fmtDuration(h.heldMs)} at ${fmtWhen(h.t, now)}` : fmtWhen(h.t, now)}</span>
              </div>
              {h.stack !== null && <pre className="stack">{h.stack}</pre>}
            </div>
          ))}
        </>
      )}
      {stacks.map((s) => (
        <div key={s.path}>
          <h4 className="subhead" title={s.path}>
            {evidenceLabel(s.path)}
          </h4>
          <pre className="stack">{s.stack}</pre>
        </div>
      ))}
      {flight !== null && <FlightView flight={flight} semaphore={alert.semaphore ?? ""} />}
    </div>
  );
}
