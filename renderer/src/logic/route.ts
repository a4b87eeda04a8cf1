// The dashboard's address lives in the hash (#/s/<key>?w=5m&at=…), so the page works from any
// static folder (base "./"), a reload keeps the view, and an alert link can be shared.
import { isWindowId, type WindowId } from "./time-window.js";

export type Route =
  | { view: "overview"; mode: "instances" | "fleet"; q?: string }
  | { view: "semaphore"; key: string; window?: WindowId; at?: number }
  | { view: "fleet"; service: string; name: string; window?: WindowId; at?: number }
  | { view: "alerts"; tab?: AlertsTab; id?: string }
  | { view: "settings" };

export type AlertsTab = "active" | "history" | "muted" | "rules";
const ALERT_TABS: readonly string[] = ["active", "history", "muted", "rules"];

export const HOME: Route = { view: "overview", mode: "instances" };

function windowParams(p: URLSearchParams): { window?: WindowId; at?: number } {
  const out: { window?: WindowId; at?: number } = {};
  const w = p.get("w");
  if (isWindowId(w)) out.window = w;
  const at = Number(p.get("at"));
  if (p.has("at") && Number.isFinite(at) && at > 0) out.at = at;
  return out;
}

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#/, "");
  const qi = h.indexOf("?");
  const path = (qi < 0 ? h : h.slice(0, qi)).split("/").filter((s) => s !== "");
  const params = new URLSearchParams(qi < 0 ? "" : h.slice(qi + 1));
  let parts: string[];
  try {
    parts = path.map(decodeURIComponent);
  } catch {
    return HOME;
  }
  switch (parts[0]) {
    case "s":
      if (parts.length === 2 && parts[1] !== "") return { view: "semaphore", key: parts[1], ...windowParams(params) };
      return HOME;
    case "f":
      if (parts.length === 3) return { view: "fleet", service: parts[1], name: parts[2], ...windowParams(params) };
      return HOME;
    case "alerts": {
      const r: Route = { view: "alerts" };
      const tab = params.get("tab");
      if (tab !== null && ALERT_TABS.includes(tab)) r.tab = tab as AlertsTab;
      const id = params.get("id");
      if (id !== null && id !== "") r.id = id;
      return r;
    }
    case "settings":
      return { view: "settings" };
    case "fleet":
      return { view: "overview", mode: "fleet", ...(params.get("q") ? { q: params.get("q") ?? "" } : {}) };
    default: {
      const q = params.get("q");
      return q !== null && q !== "" ? { view: "overview", mode: "instances", q } : HOME;
    }
  }
}

export function formatRoute(r: Route): string {
  const qs = (entries: [string, string | number | undefined][]): string => {
    const p = new URLSearchParams();
    for (const [k, v] of entries) if (v !== undefined && v !== "") p.set(k, String(v));
    const s = p.toString();
    return s === "" ? "" : `?${s}`;
  };
  const enc = encodeURIComponent;
  switch (r.view) {
    case "overview":
      return `#/${r.mode === "fleet" ? "fleet" : ""}${qs([["q", r.q]])}`;
    case "semaphore":
      return `#/s/${enc(r.key)}${qs([["w", r.window], ["at", r.at]])}`;
    case "fleet":
      return `#/f/${enc(r.service)}/${enc(r.name)}${qs([["w", r.window], ["at", r.at]])}`;
    case "alerts":
      return `#/alerts${qs([["tab", r.tab], ["id", r.id]])}`;
    case "settings":
      return "#/settings";
  }
}
