// Browsers can reach a hub on 127.0.0.1 from any page the user opens. Two checks keep such pages
// out, for HTTP and socket.io handshakes alike (agents and other non-browser clients send no
// Origin and pass):
//   - Origin: a request carrying one must come from the hub's own origin or an allowed one.
//   - Host (loopback hubs only): the Host header must name loopback, so a DNS-rebound name
//     pointing at 127.0.0.1 is refused.
import type { IncomingMessage } from "node:http";
import { isLoopback } from "./options.js";

function hostnameOf(hostHeader: string): string {
  // "[::1]:7420" → "::1"; "localhost:7420" → "localhost".
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(hostHeader);
  if (m !== null) return m[1];
  const i = hostHeader.lastIndexOf(":");
  return i >= 0 && hostHeader.indexOf(":") === i ? hostHeader.slice(0, i) : hostHeader;
}

export class RequestGuard {
  private readonly origins: ReadonlySet<string>;

  constructor(
    private readonly loopbackOnly: boolean,
    allowedOrigins: readonly string[],
  ) {
    this.origins = new Set(allowedOrigins.map((o) => o.toLowerCase()));
  }

  /** Why the request is refused, or null. */
  refuse(req: IncomingMessage): string | null {
    const host = req.headers.host ?? "";
    if (this.loopbackOnly && !isLoopback(hostnameOf(host))) return "host not allowed";
    const origin = req.headers.origin;
    if (origin === undefined) return null;
    if (this.origins.has(origin.toLowerCase())) return null;
    try {
      if (new URL(origin).host.toLowerCase() === host.toLowerCase()) return null;
    } catch {
      // "null" and other opaque origins fall through to the refusal.
    }
    return "origin not allowed";
  }
}
