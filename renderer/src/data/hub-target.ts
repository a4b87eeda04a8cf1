// Which hub this dashboard talks to, and with what token. In the app the preload says (the
// local hub or a chosen remote one). In a browser the page comes from the hub itself (web mode)
// or from the dev server that proxies to it, so the hub is the page's origin; the token comes
// from `?token=` once (then leaves the address bar, so it is not bookmarked or shared by
// accident) or from what the user typed into the token form.
import { getBridge } from "./bridge.js";

export interface HubTarget {
  /** Origin, e.g. http://127.0.0.1:7420. */
  url: string;
  token: string | null;
  /** "Local hub", a remote hub's name, or the host. */
  name: string;
  /** The preload supplied it (the token form cannot change it there: settings do). */
  bridged: boolean;
  /** The app's own local hub (its settings, such as the token, can be changed from this page). */
  local: boolean;
}

const TOKEN_KEY = "semscope.token";
export const DEFAULT_HUB = "http://127.0.0.1:7420";

function storages(): Storage[] {
  const out: Storage[] = [];
  try {
    out.push(window.sessionStorage, window.localStorage);
  } catch {
    // Storage can be disabled (privacy settings, sandboxed frames): the token then lives in memory.
  }
  return out;
}

export function storedToken(): string | null {
  for (const s of storages()) {
    const v = s.getItem(TOKEN_KEY);
    if (v !== null && v !== "") return v;
  }
  return null;
}

/** Keep the token for this tab, or on this browser when `remember`. */
export function storeToken(token: string | null, remember: boolean): void {
  const [session, local] = storages();
  for (const s of storages()) s.removeItem(TOKEN_KEY);
  if (token === null) return;
  (remember ? local : session)?.setItem(TOKEN_KEY, token);
}

/** Takes `?token=` out of the address bar (and keeps it for this tab). */
function tokenFromUrl(): string | null {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  if (token === null) return null;
  url.searchParams.delete("token");
  window.history.replaceState(window.history.state, "", url.toString());
  if (token !== "") storeToken(token, false);
  return token === "" ? null : token;
}

export async function resolveHubTarget(): Promise<HubTarget> {
  const bridge = getBridge();
  if (bridge !== null) {
    try {
      const c = await bridge.getConnection();
      return { url: c.url, token: c.token, name: c.name, bridged: true, local: c.mode === "local" };
    } catch {
      // A broken bridge leaves the page's own origin, which is where the app loads it from anyway.
    }
  }
  const fromUrl = tokenFromUrl();
  const origin = window.location.protocol === "http:" || window.location.protocol === "https:" ? window.location.origin : DEFAULT_HUB;
  return { url: origin, token: fromUrl ?? storedToken(), name: new URL(origin).host, bridged: false, local: false };
}
