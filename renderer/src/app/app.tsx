// The shell: header (views, alert count, connection), the reconnecting banner, and the view the
// route names. Before the first snapshot it shows a loading state; without a token, the form;
// with no semaphore at all, how to embed the agent.
import { useEffect, useMemo } from "react";
import { AlertsView } from "../alerts/alerts-view.js";
import { DetailView } from "../detail/detail-view.js";
import { getBridge } from "../data/bridge.js";
import { alertTarget } from "../logic/alert-target.js";
import { HOME, type Route } from "../logic/route.js";
import { FleetView } from "../overview/fleet-view.js";
import { ReplayBar, ReplayProvider, useReplayEpoch } from "../replay/replay-bar.js";
import { SettingsView } from "../settings/settings-view.js";
import { focusFilter, OverviewView } from "../overview/overview-view.js";
import { AdmissionPill, ConnectionBanner, ConnectionPill } from "./connection-banner.js";
import { useApp, useChannel, useMutesVersion, useStoreValue } from "./context.js";
import { EmptyState } from "./empty-state.js";
import { installKeyboard } from "./keyboard.js";
import { useRoute } from "./router.js";
import { TokenForm } from "./token-form.js";

function useActiveAlerts(): { total: number; critical: number } {
  const { store, mutes } = useApp();
  const v = useChannel("alerts");
  const m = useMutesVersion();
  return useMemo(() => {
    const c = { total: 0, critical: 0 };
    for (const a of store.alertList()) {
      if (a.resolvedAt !== null || mutes.until(a) !== null) continue;
      c.total++;
      if (a.severity === "critical") c.critical++;
    }
    return c;
    // v and m are the versions of what the counts derive from.
  }, [store, mutes, v, m]);
}

function Header({ route }: { route: Route }) {
  const { navigate, target } = useApp();
  const alerts = useActiveAlerts();
  const tab = route.view === "alerts" || route.view === "settings" ? route.view : route.view === "fleet" || (route.view === "overview" && route.mode === "fleet") ? "fleet" : "overview";
  return (
    <header className="topbar">
      <div className="brand" onClick={() => navigate(HOME)} role="link" tabIndex={-1}>
        <svg viewBox="0 0 20 20" width="18" height="18" aria-hidden="true">
          <rect x="1" y="11" width="4" height="7" rx="1" className="brand-a" />
          <rect x="8" y="6" width="4" height="12" rx="1" className="brand-b" />
          <rect x="15" y="2" width="4" height="16" rx="1" className="brand-c" />
        </svg>
        <span>Semscope</span>
      </div>
      <nav className="tabs" aria-label="Views">
        <button className={`tab ${tab === "overview" ? "active" : ""}`} onClick={() => navigate(HOME)}>
          Semaphores
        </button>
        <button className={`tab ${tab === "fleet" ? "active" : ""}`} onClick={() => navigate({ view: "overview", mode: "fleet" })}>
          Fleet
        </button>
        <button className={`tab ${tab === "alerts" ? "active" : ""}`} onClick={() => navigate({ view: "alerts" })} data-testid="alerts-tab">
          Alerts
          {alerts.total > 0 && <span className={`count ${alerts.critical > 0 ? "count-critical" : "count-warning"}`}>{alerts.total}</span>}
        </button>
        <button className={`tab ${tab === "settings" ? "active" : ""}`} onClick={() => navigate({ view: "settings" })} data-testid="settings-tab">
          Settings
        </button>
      </nav>
      <div className="topbar-right">
        <span className="hub-name" title={target.url}>
          {target.name}
        </span>
        <AdmissionPill />
        <ConnectionPill />
      </div>
    </header>
  );
}

function Body({ route }: { route: Route }) {
  const { store } = useApp();
  useChannel("connection");
  // Only whether there is anything to show, not the "structure" channel itself: a semaphore's
  // status flips somewhere in a fleet of 500 about every delta, and this component re-rendering
  // would re-render the whole view under it each time.
  useStoreValue("structure", () => (!store.hasSnapshot ? 0 : store.semaphoreCount === 0 ? 1 : 2));
  // A replay's cursor jumped: detail views load their history again, at the new moment.
  const replayEpoch = useReplayEpoch();
  const phase = store.connection.phase;
  if (phase === "unauthorized") return <TokenForm />;
  if (!store.hasSnapshot) {
    return (
      <div className="center-card">
        <div className="loading" data-testid="loading">
          <span className="spinner" /> Connecting to {store.connection.url || "the hub"}…
        </div>
      </div>
    );
  }
  if (store.semaphoreCount === 0 && route.view !== "alerts" && route.view !== "settings") return <EmptyState />;
  switch (route.view) {
    case "overview":
      return route.mode === "fleet" ? <FleetView /> : <OverviewView initialQuery={route.q} />;
    case "semaphore":
      return <DetailView key={`s:${route.key}:${replayEpoch}`} target={{ kind: "semaphore", key: route.key }} window={route.window} at={route.at} />;
    case "fleet":
      return <DetailView key={`f:${route.service}/${route.name}:${replayEpoch}`} target={{ kind: "fleet", service: route.service, name: route.name }} window={route.window} at={route.at} />;
    case "alerts":
      return <AlertsView tab={route.tab} selectedId={route.id} />;
    case "settings":
      return <SettingsView />;
  }
}

export function App() {
  const app = useApp();
  const route = useRoute();

  useEffect(
    () =>
      installKeyboard((e) => {
        if (e.key === "/") {
          // At once on the overview, so what is typed right after "/" lands in the filter (a
          // frame later, its first letters were lost); elsewhere once the overview has mounted.
          if (route.view === "overview") focusFilter();
          else {
            app.navigate(HOME);
            requestAnimationFrame(() => focusFilter());
          }
          return true;
        }
        if (e.key === "Escape" && route.view !== "overview") {
          app.back();
          return true;
        }
        return false;
      }),
    [app, route],
  );

  // The app's notifications lead here: show the alert's semaphore at the moment it was raised.
  useEffect(() => {
    const bridge = getBridge();
    if (bridge === null) return;
    const offFocus = bridge.onFocusSemaphore((focus) => {
      const alert = app.store.alert(focus.alertId);
      if (alert === undefined) {
        app.navigate({ view: "semaphore", key: focus.key });
        return;
      }
      const t = alertTarget(alert);
      if (t.kind === "semaphore") app.navigate({ view: "semaphore", key: t.key, at: alert.raisedAt });
      else if (t.kind === "fleet") app.navigate({ view: "fleet", service: t.service, name: t.name, at: alert.raisedAt });
      else app.navigate({ view: "alerts", id: alert.id });
    });
    const offSettings = bridge.onShowSettings(() => app.navigate({ view: "settings" }));
    return () => {
      offFocus();
      offSettings();
    };
  }, [app]);

  return (
    <ReplayProvider>
      <div className="app">
        <Header route={route} />
        <ConnectionBanner />
        <ReplayBar />
        <main className="main">
          <Body route={route} />
        </main>
      </div>
    </ReplayProvider>
  );
}
