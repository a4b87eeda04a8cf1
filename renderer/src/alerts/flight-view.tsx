// Under an alert: the agent's flight recorder ring as a timeline of the seconds before it. Bars
// of arrivals, grants and releases per slice (the burst that outran the permits is marked: that
// is where the queue formed; releases falling behind grants is a leak's signal), a mark at each
// grant that never came back, and those permits with where they were taken.
import type { FlightRecord } from "../../../shared/protocol/types.js";
import { flightTimeline, type FlightTimeline } from "../../../shared/diagnosis/index.js";
import { fmtClock, fmtCount, fmtDuration, fmtRate } from "../logic/format.js";

/** As the hub attaches it: a shared ring names its alert; an old alert's ring lost its ops. */
type Attached = FlightRecord & { sharedFrom?: string; trimmedOps?: number };

/** The ring in an alert's evidence, if it has one the app can read. */
export function flightOf(evidence: Record<string, unknown> | undefined): Attached | null {
  const f = evidence?.flight as Partial<Attached> | undefined;
  if (f === undefined || f === null || typeof f !== "object" || !Array.isArray(f.ops) || !Array.isArray(f.holders) || !Array.isArray(f.stacks) || typeof f.t !== "number") return null;
  return f as Attached;
}

const W = 360;
const H = 72;

function Bars({ tl, semaphore }: { tl: FlightTimeline; semaphore: string }) {
  const max = Math.max(1, ...tl.bins.map((b) => Math.max(b.arrivals, b.grants, b.releases)));
  const bw = W / tl.bins.length;
  const third = Math.max(1, bw / 3 - 0.5);
  const span = Math.max(1, tl.to - tl.from);
  const x = (t: number) => ((t - tl.from) / span) * W;
  return (
    <svg className="flight-bars" viewBox={`0 0 ${W} ${H + 14}`} role="img" aria-label="Arrivals, grants and releases over the seconds before the alert">
      {tl.burst !== null && <rect className="flight-burst" x={x(tl.burst.from)} y={0} width={Math.max(2, x(tl.burst.to) - x(tl.burst.from))} height={H} />}
      {tl.bins.map((b, i) => {
        const ha = (b.arrivals / max) * H;
        const hg = (b.grants / max) * H;
        const hr = (b.releases / max) * H;
        return (
          <g key={i}>
            <title>{`${fmtClock(b.from)}: ${b.arrivals} arrived, ${b.grants} granted, ${b.releases} released, ${b.failed} failed`}</title>
            <rect className="flight-arrivals" x={i * bw + 0.5} y={H - ha} width={third} height={ha} />
            <rect className="flight-grants" x={i * bw + bw / 3} y={H - hg} width={third} height={hg} />
            <rect className="flight-releases" x={i * bw + (2 * bw) / 3} y={H - hr} width={third} height={hr} />
          </g>
        );
      })}
      {tl.stuck.map((h) =>
        h.grantedAt === null || h.grantedAt < tl.from ? null : (
          <g key={h.holder} className="flight-leaked" data-testid="flight-leaked">
            <title>{`${semaphore}#${h.holder} granted ${fmtClock(h.grantedAt)}, never released (held ${fmtDuration(h.heldMs)})`}</title>
            <line x1={x(h.grantedAt)} x2={x(h.grantedAt)} y1={0} y2={H} />
            <circle cx={x(h.grantedAt)} cy={4} r={3} />
          </g>
        ),
      )}
      <text className="flight-axis" x={0} y={H + 12}>
        {fmtClock(tl.from)}
      </text>
      <text className="flight-axis" x={W} y={H + 12} textAnchor="end">
        {fmtClock(tl.to)}
      </text>
    </svg>
  );
}

export function FlightView({ flight, semaphore }: { flight: Attached; semaphore: string }) {
  if (flight.status === "unavailable") {
    return (
      <div className="flight" data-testid="flight">
        <h4 className="subhead">Flight recorder</h4>
        <p className="muted small">This semaphore keeps no flight recorder (turned off, or an agent without it).</p>
      </div>
    );
  }
  if (flight.status === "rate_limited") {
    return (
      <div className="flight" data-testid="flight">
        <h4 className="subhead">Flight recorder</h4>
        <p className="muted small">The agent sent this semaphore's ring moments earlier{flight.sameAs !== undefined ? ` (alert ${flight.sameAs})` : ""}; see that alert.</p>
      </div>
    );
  }
  const tl = flightTimeline(flight);
  if (tl === null) return null;
  return (
    <div className="flight" data-testid="flight">
      <h4 className="subhead">Flight recorder: the {fmtDuration(tl.to - tl.from)} before</h4>
      <p className="muted small">
        {fmtCount(tl.ops)} operations{tl.overwritten > 0 ? ` (${fmtCount(tl.overwritten)} older ones overwritten)` : ""}
        {flight.sharedFrom !== undefined ? `; the same ring as alert ${flight.sharedFrom}` : ""}.{" "}
        <span className="flight-key flight-key-a">arrivals</span> <span className="flight-key flight-key-g">grants</span>{" "}
        <span className="flight-key flight-key-r">releases</span> <span className="flight-key flight-key-l">a grant never released</span>
      </p>
      {flight.trimmedOps !== undefined ? (
        <p className="muted small">The {fmtCount(flight.trimmedOps)} operations were dropped on the hub (only the newest alerts keep theirs); the holders below remain.</p>
      ) : (
        <Bars tl={tl} semaphore={semaphore} />
      )}
      {tl.burst !== null && (
        <p className="small" data-testid="flight-burst">
          The burst that formed the queue: {fmtCount(tl.burst.arrivals)} arrivals in {fmtDuration(tl.burst.to - tl.burst.from)} from {fmtClock(tl.burst.from)} (
          {fmtRate(tl.burst.ratePerSec)}, against {fmtRate(tl.burst.baselinePerSec)} before), only {fmtCount(tl.burst.grants)} granted.
        </p>
      )}
      <h4 className="subhead">Permits that never came back ({tl.stuck.length})</h4>
      {tl.stuck.length === 0 && <p className="muted small">Every permit granted in the ring was released.</p>}
      {tl.stuck.map((h) => (
        <div key={h.holder} className="holder" data-testid="flight-holder">
          <div className="holder-head static">
            <span className="mono">
              {semaphore}#{h.holder}
              {h.weight !== 1 ? ` ×${h.weight}` : ""}
            </span>
            <span className="mono muted">
              held {fmtDuration(h.heldMs)}
              {h.grantedAt !== null ? `, granted ${fmtClock(h.grantedAt)}` : ", granted before the ring"}
            </span>
          </div>
          {h.stack !== null && <pre className="stack">{h.stack}</pre>}
        </div>
      ))}
    </div>
  );
}
