// The Little's-law readout (shared/diagnosis/littles-law.ts) over the last 30 s of the window (the last
// few minutes on the 1 m tier), with the healthy hold time taken from the whole window. Pinned
// at an alert, it reads the 30 s before that moment. When every permit is busy, the cause and
// the N to raise it to are the alert diagnosis's own (diagnose() over the same 1 s rows), so the
// panel never contradicts the alert.
import { diagnoseColumns } from "../../../shared/diagnosis/index.js";
import { CAUSE_LABEL } from "../alerts/diagnosis-view.js";
import { useApp } from "../app/context.js";
import type { DetailFeed } from "../data/detail-feed.js";
import { fmtDuration, fmtRate } from "../logic/format.js";
import { littlesLaw, readoutInputs, type LittleVerdict } from "../../../shared/diagnosis/littles-law.js";
import { useFeedStatus, useFeedTick } from "./detail-hooks.js";

const TRAIL_MS = { "1s": 30_000, "1m": 3 * 60_000 } as const;

const TONE: Record<LittleVerdict, string> = {
  "no-data": "neutral",
  idle: "neutral",
  headroom: "good",
  saturated: "warn",
  "stuck-permits": "bad",
};

export function LittlesPanel({ feed }: { feed: DetailFeed }) {
  useFeedTick(feed, 1000);
  const { store } = useApp();
  const status = useFeedStatus(feed);
  const b = feed.buffer;
  const pinAt = status.pin !== null && "at" in status.pin ? status.pin.at : null;
  const end = pinAt ?? b.latestT;
  const inputs = end === null ? null : readoutInputs(b.data, b.indexAt(end - TRAIL_MS[status.tier]), pinAt === null ? b.length : b.indexAt(pinAt + 1), 0);
  const r = inputs === null ? null : littlesLaw(inputs);
  // The 1 m tier's rows are not what the hub diagnoses: no cause is named from them.
  // With what the hub gives its diagnosis besides the rows: why the cap moved, if it did.
  // A fleet's limit changes are its replicas' one by one, not its summed cap's: not a cause here.
  const one = feed.target.kind === "semaphore";
  const share = one ? (store.semaphore(feed.target.key)?.last?.share ?? undefined) : undefined;
  const d = r?.verdict === "saturated" && status.tier === "1s" && end !== null ? diagnoseColumns(b.t, b.data, end, { limitChanges: one ? feed.limitChanges() : [], share }) : null;

  return (
    <div className="card panel littles" data-testid="littles">
      <div className="card-head">
        <h3>Little’s law</h3>
        <span className="muted small">throughput ≈ in use ÷ hold time · last {status.tier === "1s" ? "30 s" : "3 min"}</span>
      </div>
      {r === null || inputs === null ? (
        <p className="muted">Waiting for samples…</p>
      ) : (
        <>
          <div className={`verdict tone-${d === null ? TONE[r.verdict] : d.cause === "inconclusive" ? "warn" : "bad"}`} data-testid="littles-verdict" data-cause={d?.cause}>
            <strong>{d === null ? r.headline : `${CAUSE_LABEL[d.cause]}: ${d.headline}`}</strong>
            <p>{r.detail}</p>
            {d !== null && <p>{d.detail}</p>}
          </div>
          <dl className="kv">
            <dt>In use (L)</dt>
            <dd className="mono">
              {inputs.inUse.toFixed(1)} / {inputs.cap}
            </dd>
            <dt>Hold time (W)</dt>
            <dd className="mono">
              {fmtDuration(inputs.holdMs)}
              {inputs.baselineHoldMs !== null && <span className="muted"> · healthy {fmtDuration(inputs.baselineHoldMs)}</span>}
            </dd>
            <dt>L ÷ W</dt>
            <dd className="mono">{fmtRate(r.predictedPerSec)}</dd>
            <dt>Drain rate (measured)</dt>
            <dd className="mono">{fmtRate(r.measuredPerSec)}</dd>
            <dt>Most N can drain</dt>
            <dd className="mono">
              {fmtRate(r.capacityPerSec)}
              {r.healthyCapacityPerSec !== null && <span className="muted"> · {fmtRate(r.healthyCapacityPerSec)} when healthy</span>}
            </dd>
            <dt>Demand</dt>
            <dd className="mono">{fmtRate(inputs.attemptsPerSec)}</dd>
            <dt>N the demand needs</dt>
            <dd className="mono" data-testid="littles-needed-n">
              {d?.numbers.neededN ?? "—"}
            </dd>
          </dl>
        </>
      )}
    </div>
  );
}
