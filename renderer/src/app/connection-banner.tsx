// The connection as the user needs to know it: nothing while live, a banner while the hub is
// away (the numbers on screen are then as of the last update, and say so).
import { useApp, useChannel } from "./context.js";
import { fmtClock } from "../logic/format.js";
import { useIsReplay } from "../replay/replay-bar.js";

export function ConnectionBanner() {
  const { store } = useApp();
  useChannel("connection");
  const c = store.connection;
  if (c.phase === "live" || c.phase === "unauthorized") return null;
  if (c.phase === "refused") {
    return (
      <div className="banner banner-error" role="alert">
        <strong>The hub refused this dashboard:</strong> {c.error ?? "unknown reason"}.
      </div>
    );
  }
  const stale = store.hasSnapshot;
  return (
    <div className="banner banner-warn" role="status" data-testid="reconnecting-banner">
      <span className="spinner" aria-hidden="true" />
      {stale ? (
        <>
          <strong>Reconnecting to {c.url}…</strong>
          <span>
            {" "}
            Data shown is as of {fmtClock(store.lastUpdate)}
            {c.attempts > 0 ? ` · attempt ${c.attempts}` : ""}
            {c.error !== null && c.error !== "transport close" ? ` · ${c.error}` : ""}
          </span>
        </>
      ) : (
        <>
          <strong>Connecting to {c.url}…</strong>
          {c.attempts > 0 && <span> attempt {c.attempts}{c.error !== null ? ` · ${c.error}` : ""}</span>}
        </>
      )}
    </div>
  );
}

export function ConnectionPill() {
  const { store } = useApp();
  useChannel("connection");
  const phase = store.connection.phase;
  // Connected to a replay hub: "Live" would be the wrong word.
  const replay = useIsReplay();
  const label = phase === "live" ? (replay ? "Replay" : "Live") : phase === "unauthorized" ? "Token needed" : phase === "refused" ? "Refused" : phase === "connecting" ? "Connecting" : "Reconnecting";
  return (
    <span className={`pill conn-${phase}`} data-testid="connection-state">
      <span className="dot" />
      {label}
    </span>
  );
}

/**
 * Next to the connection: what the hub refused for its caps or for an identity another agent
 * holds (hub.admission), once it refused anything; the numbers and the caps in its tooltip.
 */
export function AdmissionPill() {
  const { store } = useApp();
  useChannel("connection");
  const a = store.admission;
  if (a === undefined) return null;
  const { agents, semaphores, identity } = a.refused;
  // Older hubs do not count dashboards refused over the /ui caps.
  const dashboards = a.refused.dashboards ?? 0;
  // Nor agent connections refused before hello.
  const connections = a.refused.connections ?? 0;
  const total = agents + semaphores + identity + dashboards + connections;
  if (total === 0) return null;
  const l = a.limits;
  // Which cap refused: one address at its own (a flood from there), or the hub full. Older hubs say neither.
  const scoped = (what: "agents" | "semaphores" | "dashboards" | "connections") => {
    const s = a.refusedScope?.[what];
    return s === undefined ? "" : ` (${s.address} at an address's cap, ${s.total} at the hub's)`;
  };
  const title =
    `The hub refused ${agents} agent(s) over its agent caps${scoped("agents")}, ${semaphores} message(s) over its semaphore caps${scoped("semaphores")}, ` +
    `${identity} hello(s) claiming an identity another live agent holds, ` +
    `${dashboards} dashboard connection(s) over its dashboard caps${scoped("dashboards")}, ` +
    `and ${connections} agent connection(s) over its caps on connections not yet past hello${scoped("connections")}. ` +
    `It holds ${a.agents} agents (at most ${l.maxAgents}, ${l.maxAgentsPerAddress} per address) and ${a.semaphores} semaphores ` +
    `(at most ${l.maxSemaphores}, ${l.maxSemaphoresPerAddress} per address); ${a.evictedAgents} disconnected agent(s) forgotten to make room.`;
  return (
    <span className="pill conn-refused" title={title} data-testid="admission-refused">
      {total} refused
    </span>
  );
}
