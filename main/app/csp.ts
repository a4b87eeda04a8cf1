// The dashboard's Content-Security-Policy, set by main on every response the window receives
// (so a hub, local or remote, cannot loosen it): only the dashboard's own origin may supply
// code, styles and data; no inline or eval'd script; no plugins, frames, forms or <base>.
import { websocketOriginOf } from "./origin.js";

export type CspDirectives = Readonly<Record<string, readonly string[]>>;

/** The policy for a dashboard served from `origin` (e.g. `http://127.0.0.1:7420`); null: none trusted yet. */
export function dashboardCspDirectives(origin: string | null): CspDirectives {
  return {
    "default-src": ["'none'"],
    "script-src": ["'self'"],
    // uPlot and React set styles through the CSSOM, which style-src does not govern.
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    // socket.io: polling on the origin, then its WebSocket twin (named explicitly for older engines).
    "connect-src": origin === null ? ["'self'"] : ["'self'", websocketOriginOf(origin)],
    "manifest-src": ["'self'"],
    "object-src": ["'none'"],
    "frame-src": ["'none'"],
    "worker-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'none'"],
    "frame-ancestors": ["'none'"],
  };
}

export function serializeCsp(directives: CspDirectives): string {
  return Object.entries(directives)
    .map(([name, values]) => `${name} ${values.join(" ")}`)
    .join("; ");
}

export function dashboardCsp(origin: string | null): string {
  return serializeCsp(dashboardCspDirectives(origin));
}

export function parseCsp(csp: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of csp.split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name === undefined || name === "" || out.has(name.toLowerCase())) continue;
    out.set(name.toLowerCase(), values);
  }
  return out;
}

const UNSAFE = ["'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "'wasm-unsafe-eval'", "*", "data:", "blob:", "http:", "https:", "ws:", "wss:", "filesystem:"];

/**
 * What makes `csp` weaker than the checklist wants (empty when it is strict): scripts and
 * styles from anything but named origins, no default-src, plugins, base-uri or framing open.
 */
export function cspWeaknesses(csp: string): string[] {
  const d = parseCsp(csp);
  const problems: string[] = [];
  const effective = (name: string): string[] | undefined => d.get(name) ?? d.get("default-src");
  if (!d.has("default-src")) problems.push("no default-src");
  for (const name of ["script-src", "style-src", "object-src", "connect-src"]) {
    const values = effective(name);
    if (values === undefined) continue;
    for (const v of values) if (UNSAFE.includes(v.toLowerCase())) problems.push(`${name} allows ${v}`);
  }
  if (!(effective("object-src") ?? []).includes("'none'")) problems.push("object-src is not 'none'");
  if (!(d.get("base-uri") ?? []).includes("'none'")) problems.push("base-uri is not 'none'");
  if (!(d.get("frame-ancestors") ?? []).includes("'none'")) problems.push("frame-ancestors is not 'none'");
  return problems;
}
