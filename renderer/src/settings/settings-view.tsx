// Settings (the app's Settings… menu, or the header's tab): this hub's tokens and how a service
// connects, a new token for the app's local hub, the app's other settings (app-settings-form.tsx),
// and the way to the alert rules. The page shows
// only the token it connects with; of an agent token it knows only that the hub has one.
import { useEffect, useState } from "react";
import { ConnectFacts, useServiceToken } from "../app/connect-facts.js";
import { useApp } from "../app/context.js";
import { CopyButton } from "../app/copy-button.js";
import { getBridge } from "../data/bridge.js";
import type { SemscopeBridge } from "../../../shared/ipc/ipc-contract.js";
import { AppSettingsForm } from "./app-settings-form.js";
import "./settings.css";
import { errorText } from "../logic/error-text.js";

export function SettingsView() {
  const { target, navigate } = useApp();
  const { agentToken, pageToken } = useServiceToken();
  const bridge = getBridge();
  // Only the app's own hub can be given a new token from here (main refuses any other page).
  const regenerate = target.local && typeof bridge?.regenerateHubToken === "function" ? bridge : null;
  const file = useSettingsFile(target.local ? bridge : null);
  return (
    <div className="settings-page" data-testid="settings-view">
      <h2>Settings</h2>
      <section className="card settings-section" data-testid="settings-hub">
        <h3>Hub</h3>
        <p className="muted">
          {target.name} at <code>{target.url}</code>
        </p>
        <dl className="facts">
          <dt>Dashboard token</dt>
          <dd className="token-row">
            {pageToken !== null ? (
              <>
                <code className="token" data-testid="dashboard-token">
                  {pageToken}
                </code>
                <CopyButton text={pageToken} label="Copy" testId="copy-dashboard-token" />
              </>
            ) : (
              <span data-testid="no-token">
                none: {target.local ? "the local hub lets in every process of this machine" : "this page connects without one"}
              </span>
            )}
          </dd>
          <dt>Services use</dt>
          <dd data-testid="service-token">
            {agentToken
              ? "the hub's agent token, which the hub never tells a page: the dashboard token above opens this dashboard and the hub's API, so keep it from services"
              : pageToken !== null
                ? "the same token (the hub has no separate agent token)"
                : "no token"}
          </dd>
        </dl>
        {regenerate !== null && <RegenerateToken bridge={regenerate} hasToken={pageToken !== null} />}
      </section>
      {target.local && bridge !== null && <AppSettingsForm bridge={bridge} />}
      <section className="card settings-section" data-testid="settings-connect">
        <h3>Connect a service</h3>
        <ConnectFacts />
      </section>
      <section className="card settings-section">
        <h3>Alert rules</h3>
        <p className="muted">Thresholds for leaks, convoys, starvation and the other rules are set with the alerts.</p>
        <button type="button" className="btn btn-sm" onClick={() => navigate({ view: "alerts", tab: "rules" })} data-testid="open-rules">
          Edit alert rules
        </button>
      </section>
      {file !== null && (
        <p className="muted small" data-testid="settings-file">
          The app keeps its settings in <code>{file}</code>.
        </p>
      )}
    </div>
  );
}

function useSettingsFile(bridge: SemscopeBridge | null): string | null {
  const [file, setFile] = useState<string | null>(null);
  useEffect(() => {
    if (bridge === null) return;
    let live = true;
    bridge.getSettings().then(
      (v) => live && setFile(v.file),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [bridge]);
  return file;
}

type Phase = { kind: "idle" } | { kind: "confirm" } | { kind: "working" } | { kind: "failed"; error: string };

/** A new token, after saying who will need it; main restarts the hub and reloads this window. */
function RegenerateToken({ bridge, hasToken }: { bridge: SemscopeBridge; hasToken: boolean }) {
  const [phase, setPhase] = useState<Phase>({ kind: "idle" });
  const run = () => {
    setPhase({ kind: "working" });
    const call = bridge.regenerateHubToken?.() ?? Promise.reject(new Error("this app cannot make a new token"));
    call.then(
      // On success the window reloads with the new token: "working" stays until then.
      (r) => r.ok || setPhase({ kind: "failed", error: r.error }),
      (err: unknown) => setPhase({ kind: "failed", error: errorText(err) }),
    );
  };
  const label = hasToken ? "Regenerate token…" : "Create a token…";
  if (phase.kind === "confirm" || phase.kind === "working") {
    return (
      <div className="settings-confirm" role="alertdialog" aria-label="Regenerate the token" data-testid="regenerate-confirm">
        <p>
          The local hub gets a new token at once and restarts with it. Connected agents and open dashboards (other windows,
          browsers, scripts reading its API) that hold the current token are refused until they are given the new one. This
          window and the built-in demo switch by themselves.
        </p>
        <div className="actions">
          <button type="button" className="btn btn-primary btn-sm" onClick={run} disabled={phase.kind === "working"} data-testid="regenerate-confirm-button">
            {phase.kind === "working" ? "Regenerating…" : hasToken ? "Regenerate" : "Create"}
          </button>
          <button type="button" className="btn btn-sm" onClick={() => setPhase({ kind: "idle" })} disabled={phase.kind === "working"}>
            Cancel
          </button>
        </div>
      </div>
    );
  }
  return (
    <div className="settings-actions">
      <button type="button" className="btn btn-sm" onClick={() => setPhase({ kind: "confirm" })} data-testid="regenerate-token">
        {label}
      </button>
      {phase.kind === "failed" && (
        <span className="settings-error" role="alert">
          Not changed: {phase.error}
        </span>
      )}
    </div>
  );
}
