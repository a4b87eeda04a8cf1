// The system's colour scheme, followed live: CSS switches by itself (app/theme.css); charts
// draw on canvas with colours read at creation, so they key their re-creation on this.
import { useSyncExternalStore } from "react";

// One MediaQueryList for the page: matchMedia per render showed up in profiles.
const mq = window.matchMedia("(prefers-color-scheme: dark)");

function subscribe(fn: () => void): () => void {
  mq.addEventListener("change", fn);
  return () => mq.removeEventListener("change", fn);
}

export function useColorScheme(): "dark" | "light" {
  return useSyncExternalStore(subscribe, () => (mq.matches ? "dark" : "light"));
}
