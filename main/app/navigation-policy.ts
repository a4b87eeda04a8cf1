// Where the window may go: only to pages of the dashboard it was opened on. Everything else
// (another origin, file:, data:, javascript:, a popup of any kind) is refused; the shell opens
// nothing outside the window, so no untrusted URL ever reaches shell.openExternal.
import { originOf } from "./origin.js";

/** The one origin the window trusts, fixed each time main points it at a hub. */
export interface TrustedOrigin {
  /** e.g. `http://127.0.0.1:7420`. */
  readonly origin: string;
  /** True for the in-process hub: only its pages may read or change settings. */
  readonly local: boolean;
}

export function isAllowedNavigation(url: string, trusted: TrustedOrigin | null): boolean {
  if (trusted === null) return false;
  return originOf(url) === trusted.origin;
}

/** window.open, target=_blank, middle click: always denied (the dashboard is one window). */
export function windowOpenDecision(): { action: "deny" } {
  return { action: "deny" };
}

/** `<webview>` is never wanted (webviewTag is off too): refuse any attempt to attach one. */
export function allowWebviewAttach(): false {
  return false;
}

/** The one permission a page may have: writing (sanitized) text to the clipboard, "copy this stack". */
export const GRANTABLE_PERMISSIONS: ReadonlySet<string> = new Set(["clipboard-sanitized-write"]);

/**
 * Permission requests and checks (camera, notifications, geolocation, clipboard read, …): refused,
 * except a clipboard write from the trusted dashboard's main page.
 */
export function allowPermission(permission: string, requestingUrl: string | null, trusted: TrustedOrigin | null): boolean {
  if (!GRANTABLE_PERMISSIONS.has(permission) || trusted === null || requestingUrl === null) return false;
  return originOf(requestingUrl) === trusted.origin;
}
