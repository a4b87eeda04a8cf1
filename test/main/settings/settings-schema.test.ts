import { describe, expect, it } from "vitest";
import type { Settings } from "../../../shared/ipc/ipc-contract.js";
import { DEFAULT_SETTINGS, defaultSettings, hubUrlProblem, parseSettings } from "../../../main/settings/settings-schema.js";

function withChange(change: (s: Settings) => void): unknown {
  const s = defaultSettings();
  change(s);
  return s;
}

function errorOf(input: unknown): string {
  const r = parseSettings(input);
  if (r.ok) throw new Error("expected a refusal");
  return r.error;
}

describe("settings schema", () => {
  it("accepts the defaults, which are the local hub on 7420 with critical notifications", () => {
    expect(parseSettings(defaultSettings())).toEqual({ ok: true, settings: DEFAULT_SETTINGS });
    expect(DEFAULT_SETTINGS).toMatchObject({ hub: { port: 7420, token: null }, activeRemoteId: null, notifications: { enabled: true, minSeverity: "critical" } });
    expect(Object.isFrozen(DEFAULT_SETTINGS)).toBe(true);
    // A copy, so changing it cannot change the defaults.
    const copy = defaultSettings();
    copy.hub.port = 1;
    expect(DEFAULT_SETTINGS.hub.port).toBe(7420);
  });

  it("forwards alerts nowhere by default, keeps http(s) destinations, and refuses others by their path", () => {
    expect(DEFAULT_SETTINGS.alertForwarding).toEqual({ alertmanager: [], webhooks: [] });
    const { alertForwarding: _dropped, ...older } = defaultSettings();
    expect(parseSettings(older)).toMatchObject({ ok: true, settings: { alertForwarding: { alertmanager: [], webhooks: [] } } });
    const set = { alertmanager: ["http://am.internal:9093"], webhooks: ["https://hooks.example/x?y=1"] };
    expect(parseSettings(withChange((s) => (s.alertForwarding = set)))).toMatchObject({ ok: true, settings: { alertForwarding: set } });
    expect(errorOf(withChange((s) => (s.alertForwarding = { alertmanager: [], webhooks: ["mailto:x@y"] })))).toBe("alertForwarding.webhooks[0]: must be an http:// or https:// URL");
    const nine = Array.from({ length: 9 }, (_, i) => `http://am${i}:9093`);
    expect(errorOf(withChange((s) => (s.alertForwarding = { alertmanager: nine, webhooks: [] })))).toBe("alertForwarding.alertmanager: must have at most 8 URLs");
  });

  it("runs the demo by default, keeps a choice to turn it off, and refuses a non-boolean", () => {
    expect(DEFAULT_SETTINGS.runDemo).toBe(true);
    expect(parseSettings(withChange((s) => (s.runDemo = false)))).toMatchObject({ ok: true, settings: { runDemo: false } });
    // A file from before the setting existed loads as a first launch would: demo on.
    const { runDemo: _dropped, ...older } = defaultSettings();
    expect(parseSettings(older)).toMatchObject({ ok: true, settings: { runDemo: true } });
    expect(errorOf({ ...defaultSettings(), runDemo: "yes" })).toBe("runDemo: must be true or false");
  });

  it("accepts a full set: remote hubs, an active one, thresholds, muted rules", () => {
    const input = withChange((s) => {
      s.hub = { port: 9000, token: "s3cret-Token" };
      s.remoteHubs = [
        { id: "prod", name: "Production", url: "https://hub.example.com:7420/", token: "abc" },
        { id: "dev-box", name: "Dev box", url: "http://127.0.0.1:7500", token: null },
      ];
      s.activeRemoteId = "prod";
      s.thresholds = { convoy: { windowMs: 8000 }, timeouts: { ratio: 0.1 } };
      s.notifications = { enabled: true, minSeverity: "warning", mutedRules: ["agent_down"], silent: true };
    });
    const r = parseSettings(input);
    expect(r.ok).toBe(true);
    // URLs are kept as origins.
    if (r.ok) expect(r.settings.remoteHubs[0].url).toBe("https://hub.example.com:7420");
  });

  it.each([
    ["a port out of range", (s: Settings) => (s.hub.port = 70000), "hub.port: must be in 1..65535"],
    ["a fractional port", (s: Settings) => (s.hub.port = 80.5), "hub.port: must be an integer"],
    ["an empty token", (s: Settings) => (s.hub.token = ""), "hub.token: must not be empty (use null for no token)"],
    ["a token with a space", (s: Settings) => (s.hub.token = "a b"), "hub.token: must be visible ASCII characters only"],
    ["an unknown severity", (s: Settings) => ((s.notifications as { minSeverity: string }).minSeverity = "info"), 'notifications.minSeverity: must be "warning" or "critical"'],
    ["an unknown rule", (s: Settings) => ((s.notifications.mutedRules as string[]) = ["nope"]), "notifications.mutedRules[0]: must be one of leak"],
    ["a threshold out of range", (s: Settings) => (s.thresholds = { timeouts: { ratio: 2 } }), "thresholds: thresholds.timeouts.ratio: must be a finite number in (0, 1], got 2"],
    ["an unknown threshold group", (s: Settings) => (s.thresholds = { nope: { x: 1 } } as never), 'thresholds: thresholds: unknown rule group "nope"'],
    ["an active remote that does not exist", (s: Settings) => (s.activeRemoteId = "ghost"), 'activeRemoteId: names no remote hub ("ghost")'],
    ["a wrong version", (s: Settings) => ((s as { version: number }).version = 2), "version: must be 1"],
    ["an unknown key", (s: Settings) => ((s as unknown as Record<string, unknown>).extra = 1), "extra"],
  ])("refuses %s, naming the field", (_name, change, message) => {
    expect(errorOf(withChange(change))).toContain(message);
  });

  it("refuses duplicate remote ids and bad remote entries", () => {
    const hub = { id: "a", name: "A", url: "https://a.example", token: null };
    expect(errorOf(withChange((s) => (s.remoteHubs = [hub, { ...hub }])))).toContain('remoteHubs[1].id: duplicates the id "a"');
    expect(errorOf(withChange((s) => (s.remoteHubs = [{ ...hub, id: "-x" }])))).toContain("remoteHubs[0].id");
    expect(errorOf(withChange((s) => (s.remoteHubs = [{ ...hub, name: "  " }])))).toContain("remoteHubs[0].name: must not be empty");
    expect(errorOf(withChange((s) => (s.remoteHubs = [{ ...hub, url: "http://hub.example.com" }])))).toContain(
      "remoteHubs[0].url: plain http is allowed only for loopback hosts",
    );
  });

  it("refuses what is not a settings object at all", () => {
    expect(errorOf(null)).toMatch(/expected object|Invalid input/);
    expect(errorOf([])).toBeTruthy();
    expect(errorOf("settings")).toBeTruthy();
  });

  it("caps the message at a few issues", () => {
    const r = parseSettings({ version: 1, hub: {}, remoteHubs: 1, activeRemoteId: 2, thresholds: 3, notifications: 4 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/\(and \d+ more\)$/);
  });
});

describe("hubUrlProblem", () => {
  it.each([
    ["https://hub.example.com", null],
    ["https://hub.example.com:8443/", null],
    ["http://127.0.0.1:7420", null],
    ["http://localhost:7420", null],
    ["http://[::1]:7420", null],
    ["http://10.0.0.5:7420", "plain http is allowed only for loopback hosts: use https"],
    ["ftp://hub.example.com", "must start with http:// or https://"],
    ["file:///etc/passwd", "must start with http:// or https://"],
    ["javascript:alert(1)", "must start with http:// or https://"],
    ["https://user:pw@hub.example.com", "must not carry credentials (use the token field)"],
    ["https://hub.example.com/dashboard", "must be an origin only (scheme://host:port)"],
    ["https://hub.example.com/?x=1", "must be an origin only (scheme://host:port)"],
    ["not a url", "is not a URL"],
  ])("%s → %s", (url, problem) => {
    expect(hubUrlProblem(url)).toBe(problem);
  });
});
