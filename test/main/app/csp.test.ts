import { describe, expect, it } from "vitest";
import { cspWeaknesses, dashboardCsp, dashboardCspDirectives, parseCsp } from "../../../main/app/csp.js";

describe("dashboard CSP", () => {
  const csp = dashboardCsp("http://127.0.0.1:7420");

  it("is strict: nothing but the dashboard's own origin supplies code, styles or data", () => {
    expect(cspWeaknesses(csp)).toEqual([]);
    const d = parseCsp(csp);
    expect(d.get("default-src")).toEqual(["'none'"]);
    expect(d.get("script-src")).toEqual(["'self'"]);
    expect(d.get("style-src")).toEqual(["'self'"]);
    expect(d.get("connect-src")).toEqual(["'self'", "ws://127.0.0.1:7420"]);
    expect(d.get("object-src")).toEqual(["'none'"]);
    expect(d.get("base-uri")).toEqual(["'none'"]);
    expect(d.get("frame-ancestors")).toEqual(["'none'"]);
    expect(d.get("form-action")).toEqual(["'none'"]);
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
  });

  it("lets socket.io reach an https hub over wss, and names no websocket before a hub is trusted", () => {
    expect(dashboardCspDirectives("https://hub.example.com")["connect-src"]).toEqual(["'self'", "wss://hub.example.com"]);
    expect(dashboardCspDirectives(null)["connect-src"]).toEqual(["'self'"]);
    expect(cspWeaknesses(dashboardCsp(null))).toEqual([]);
  });

  it("finds what makes a policy weak", () => {
    expect(cspWeaknesses("script-src 'self' 'unsafe-eval'")).toEqual(
      expect.arrayContaining(["no default-src", "script-src allows 'unsafe-eval'", "object-src is not 'none'", "base-uri is not 'none'"]),
    );
    expect(cspWeaknesses("default-src *; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")).toEqual(
      expect.arrayContaining(["script-src allows *", "style-src allows *", "connect-src allows *"]),
    );
    expect(cspWeaknesses("default-src 'self'; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")).toEqual([
      "style-src allows 'unsafe-inline'",
    ]);
  });
});
