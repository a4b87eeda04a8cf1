// The first detail view a user opens used to run its code cold: React's first render of the view
// compiled every function it called, ~36 ms of script in the frame the view appeared (an 82 ms
// frame in bench:ui, the one long task left). Rendering one real detail view offscreen once,
// after start-up, pays that while nobody waits: the view, its hooks and panels, the history
// request and decode, and the kept charts' re-binding (chart-pool.ts) all run once.
import { startTransition } from "react";
import { createRoot } from "react-dom/client";
import { AppContext, type AppServices } from "../app/context.js";
import { offscreenHost } from "../charts/offscreen-host.js";
import { DetailView } from "./detail-view.js";

/** Long enough for the history to come back, the side panels to mount and a frame to draw. */
const WARM_MS = 1500;

export function warmDetail(services: AppServices, key: string): void {
  const host = offscreenHost("height:900px;contain:strict");
  host.inert = true;
  // A closed shadow root: the warm view's buttons and test ids are out of reach of the page's
  // queries, keyboard focus and tests, which would otherwise see two detail views for a moment.
  // The page's style sheets are cloned in so the charts are sized as in a real view.
  const shadow = host.attachShadow({ mode: "closed" });
  for (const sheet of document.querySelectorAll('link[rel="stylesheet"], style')) shadow.append(sheet.cloneNode(true));
  const mount = document.createElement("main");
  mount.className = "main";
  shadow.append(mount);
  document.body.append(host);
  const root = createRoot(mount);
  // A transition: React renders it in slices of a few ms, so the warm-up is no long task itself.
  startTransition(() => {
    root.render(
      <AppContext.Provider value={services}>
        <DetailView target={{ kind: "semaphore", key }} />
      </AppContext.Provider>,
    );
  });
  setTimeout(() => {
    try {
      root.unmount();
    } finally {
      host.remove();
    }
  }, WARM_MS);
}
