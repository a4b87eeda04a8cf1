// Hash routing (logic/route.ts has the format). Kept outside React: the current route is read
// with useSyncExternalStore from the hashchange event.
import { useSyncExternalStore } from "react";
import { formatRoute, parseRoute, type Route } from "../logic/route.js";

let current: { hash: string; route: Route } = { hash: window.location.hash, route: parseRoute(window.location.hash) };
/** Navigations made inside the app, so Esc goes back only to where the user came from here. */
let depth = 0;

function read(): { hash: string; route: Route } {
  if (window.location.hash !== current.hash) current = { hash: window.location.hash, route: parseRoute(window.location.hash) };
  return current;
}

function subscribe(fn: () => void): () => void {
  window.addEventListener("hashchange", fn);
  return () => window.removeEventListener("hashchange", fn);
}

export function useRoute(): Route {
  return useSyncExternalStore(subscribe, () => read().route);
}

export function navigate(route: Route, opts: { replace?: boolean } = {}): void {
  const hash = formatRoute(route);
  if (hash === window.location.hash) return;
  if (opts.replace) {
    window.history.replaceState(window.history.state, "", hash);
    // replaceState fires no hashchange; tell the subscribers ourselves.
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  } else {
    depth++;
    window.location.hash = hash;
  }
}

export function back(fallback: Route): void {
  if (depth > 0) {
    depth--;
    window.history.back();
  } else navigate(fallback, { replace: true });
}
