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
