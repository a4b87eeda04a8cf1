// Entry point: find the hub (the preload's connection in the app, the page's origin in a
// browser), connect to /ui, and render. The store and client live outside React.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { isReplayVersion } from "../../shared/ui-protocol/replay.js";
import "./app/theme.css";
import "./app/app.css";
import "./app/widgets.css";
import { App } from "./app/app.js";
import { AppContext, type AppServices } from "./app/context.js";
import { back, navigate } from "./app/router.js";
import { frameStats } from "./charts/frame-scheduler.js";
import { whenIdle } from "./charts/idle.js";
import { warmCharts } from "./charts/uplot-chart.js";
import { DETAIL_CHARTS } from "./detail/chart-specs.js";
import { warmDetail } from "./detail/warm-detail.js";
import { DashboardStore } from "./data/dashboard-store.js";
import { resolveHubTarget } from "./data/hub-target.js";
import { MuteStore } from "./data/mute-store.js";
import { UiClient } from "./data/ui-client.js";
import { DetailFeed } from "./data/detail-feed.js";
import { setUtcClock } from "./logic/format.js";
import { HOME, parseRoute } from "./logic/route.js";
import { DEFAULT_WINDOW, windowMs } from "./logic/time-window.js";

function localStorageOrNull(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const target = await resolveHubTarget();
  const store = new DashboardStore();
  store.setConnection({ url: target.url, hasToken: target.token !== null });
  const client = new UiClient(store, target);
  const services: AppServices = {
    store,
    client,
    mutes: new MuteStore(localStorageOrNull()),
    target,
    navigate,
    back: () => back(HOME),
  };
  // For the benchmark and for poking at it from the devtools console.
  (window as unknown as { __semscope: unknown }).__semscope = { store, frameStats };
  // Subscribed before any view: a replay's times are in UTC from its first render on.
  store.subscribe("structure", () => setUtcClock(isReplayVersion(store.hub?.version)));
  client.start();
  // Registered before React's own listener: a detail view's history is on its way while React renders it.
  window.addEventListener("hashchange", () => {
    const r = parseRoute(window.location.hash);
    if ((r.view !== "semaphore" && r.view !== "fleet") || !store.hasSnapshot) return;
    const target = r.view === "semaphore" ? { kind: "semaphore" as const, key: r.key } : { kind: "fleet" as const, service: r.service, name: r.name };
    DetailFeed.prefetch(client, store, target, windowMs(r.window ?? DEFAULT_WINDOW), r.at !== undefined ? { at: r.at } : null);
  });
  // Once the first snapshot is in and the page has settled, draw the detail charts offscreen,
  // then render one detail view offscreen, so the first detail view does not run its code cold.
  const idle = (fn: () => void) => whenIdle(fn, 2000);
  const stopWaiting = store.subscribe("structure", () => {
    if (!store.hasSnapshot) return;
    stopWaiting();
    const warmView = () => {
      // Not when a detail view is already open: its code is warm, and it is using the charts.
      const view = parseRoute(window.location.hash).view;
      const first = store.itemList()[0];
      if (first !== undefined && view !== "semaphore" && view !== "fleet") warmDetail(services, first.key);
    };
    setTimeout(() => warmCharts(DETAIL_CHARTS, idle, () => idle(warmView)), 500);
  });
  const root = document.getElementById("root");
  if (root === null) throw new Error("no #root");
  createRoot(root).render(
    <StrictMode>
      <AppContext.Provider value={services}>
        <App />
      </AppContext.Provider>
    </StrictMode>,
  );
}

void main();
