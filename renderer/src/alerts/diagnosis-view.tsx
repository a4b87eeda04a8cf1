// Under a convoy or starvation alert: the cause the hub named from the numbers (slow downstream,
// N too tight, a rate problem a semaphore cannot solve, or N itself lowered) and the fix, with the figures behind it.
import type { Diagnosis } from "../../../shared/diagnosis/index.js";
import { fmtDuration, fmtPct, fmtRate } from "../logic/format.js";

export const CAUSE_LABEL: Record<Diagnosis["cause"], string> = {
  slow_downstream: "Slow downstream",
  cap_too_tight: "N too tight",
  rate_limit_needed: "Rate problem",
  cap_lowered: "Limit lowered",
  inconclusive: "No clear cause",
};

/** The diagnosis in an alert's evidence, if it has a readable one. */
export function diagnosisOf(evidence: Record<string, unknown> | undefined): Diagnosis | null {
  const d = evidence?.diagnosis as Partial<Diagnosis> | undefined;
  if (d === undefined || d === null || typeof d !== "object" || typeof d.cause !== "string" || typeof d.headline !== "string" || d.numbers === undefined) return null;
  return d as Diagnosis;
}

export function DiagnosisView({ diagnosis: d }: { diagnosis: Diagnosis }) {
  const n = d.numbers;
  return (
    <div className={`diagnosis diagnosis-${d.cause}`} data-testid="diagnosis" data-cause={d.cause}>
      <h4 className="subhead">Diagnosis</h4>
      <p className="diagnosis-headline">
        <span className="diagnosis-cause">{CAUSE_LABEL[d.cause]}</span> {d.headline}
      </p>
      <p className="small">{d.detail}</p>
      <p className="diagnosis-fix small">
        <strong>Fix: </strong>
        {d.fix}
      </p>
      <dl className="kv kv-diagnosis small">
        <dt>Arrivals</dt>
        <dd className="mono">
          {fmtRate(n.arrivalsPerSec)}
          {n.baselineArrivalsPerSec !== null && <span className="muted"> (was {fmtRate(n.baselineArrivalsPerSec)})</span>}
        </dd>
        <dt>Released</dt>
        <dd className="mono">
          {fmtRate(n.throughputPerSec)}
          {n.baselineThroughputPerSec !== null && <span className="muted"> (was {fmtRate(n.baselineThroughputPerSec)})</span>}
        </dd>
        <dt>Mean hold</dt>
        <dd className="mono">
          {fmtDuration(n.holdMs)}
          {n.baselineHoldMs !== null && <span className="muted"> (healthy {fmtDuration(n.baselineHoldMs)})</span>}
        </dd>
        <dt>Wait p99</dt>
        <dd className="mono">{fmtDuration(n.waitP99Ms)}</dd>
        <dt>In use</dt>
        <dd className="mono">
          {fmtPct(n.utilization)} of {n.cap}
        </dd>
        {n.neededN !== null && (
          <>
            <dt>N needed</dt>
            <dd className="mono" data-testid="needed-n">
              {n.neededN}
            </dd>
          </>
        )}
        {n.capBefore !== undefined && (
          <>
            <dt>N before</dt>
            <dd className="mono" data-testid="cap-before">
              {n.capBefore}
              {n.capLoweredBy !== undefined && <span className="muted"> (lowered by {n.capLoweredBy === "adaptive" ? "the adaptive limit" : n.capLoweredBy === "share" ? "the replica share" : "a resize"})</span>}
            </dd>
          </>
        )}
        {n.maxThroughputPerSec !== null && (
          <>
            <dt>Downstream ceiling</dt>
            <dd className="mono">{fmtRate(n.maxThroughputPerSec)}</dd>
          </>
        )}
      </dl>
    </div>
  );
}
