import { describe, expect, it } from "vitest";
import { allowPermission, allowWebviewAttach, isAllowedNavigation, windowOpenDecision, type TrustedOrigin } from "../../../main/app/navigation-policy.js";
import { isLoopbackHost, originOf, websocketOriginOf } from "../../../main/app/origin.js";

const local: TrustedOrigin = { origin: "http://127.0.0.1:7420", local: true };

describe("navigation policy", () => {
  it.each([
    ["http://127.0.0.1:7420/", true],
    ["http://127.0.0.1:7420/semaphores/checkout%2Fweb-1%2Fdb?x=1#y", true],
    ["http://127.0.0.1:7421/", false],
    ["http://localhost:7420/", false],
    ["https://127.0.0.1:7420/", false],
    ["https://evil.example/", false],
    ["file:///etc/passwd", false],
    ["data:text/html,<script>alert(1)</script>", false],
    ["javascript:alert(1)", false],
    ["about:blank", false],
    ["http://127.0.0.1:7420@evil.example/", false],
    ["garbage", false],
  ])("%s → %s", (url, allowed) => {
    expect(isAllowedNavigation(url, local)).toBe(allowed);
  });

  it("allows nothing before a dashboard is trusted", () => {
    expect(isAllowedNavigation("http://127.0.0.1:7420/", null)).toBe(false);
  });

  it("denies every window.open and webview", () => {
    expect(windowOpenDecision()).toEqual({ action: "deny" });
    expect(allowWebviewAttach()).toBe(false);
  });

  it("grants only a clipboard write, and only to the trusted origin", () => {
    expect(allowPermission("clipboard-sanitized-write", "http://127.0.0.1:7420/x", local)).toBe(true);
    expect(allowPermission("clipboard-sanitized-write", "http://127.0.0.1:7420", local)).toBe(true);
    expect(allowPermission("clipboard-sanitized-write", "https://evil.example/", local)).toBe(false);
    expect(allowPermission("clipboard-sanitized-write", "http://127.0.0.1:7420/", null)).toBe(false);
    for (const p of ["media", "geolocation", "notifications", "clipboard-read", "openExternal", "fullscreen", "unknown"]) {
      expect(allowPermission(p, "http://127.0.0.1:7420/", local)).toBe(false);
    }
  });
});

describe("origins", () => {
  it("parses http(s) origins only", () => {
    expect(originOf("https://Hub.Example.com:443/a")).toBe("https://hub.example.com");
    expect(originOf("http://[::1]:7420/")).toBe("http://[::1]:7420");
    expect(originOf("file:///x")).toBeNull();
    expect(originOf("")).toBeNull();
  });

  it("knows loopback hosts", () => {
    for (const h of ["localhost", "127.0.0.1", "127.9.9.9", "::1", "[::1]", "LOCALHOST"]) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ["10.0.0.1", "128.0.0.1", "example.com", "localhost.example.com", "::2"]) expect(isLoopbackHost(h)).toBe(false);
  });

  it("maps http to ws and https to wss", () => {
    expect(websocketOriginOf("http://127.0.0.1:7420")).toBe("ws://127.0.0.1:7420");
    expect(websocketOriginOf("https://hub.example.com")).toBe("wss://hub.example.com");
  });
});
