// URL origins, the unit every trust decision in the shell is made on (navigation, IPC senders, CSP).
import { isIP } from "node:net";

/** The origin of an http(s) URL, or null for anything else (file:, data:, about:, javascript:, junk). */
export function originOf(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  return u.origin;
}

/** localhost, 127.0.0.0/8 and ::1: hosts where plain http never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h === "::1") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}

/** The WebSocket origin matching an http(s) origin (socket.io upgrades to it). */
export function websocketOriginOf(origin: string): string {
  return origin.replace(/^http/, "ws");
}
