import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, defaultSettings } from "../../../main/settings/settings-schema.js";
import { loadSettings, SettingsStore, writeSettingsFile } from "../../../main/settings/settings-store.js";

let dir: string;
let file: string;
const now = () => new Date("2026-01-02T03:04:05.678Z");
/** The defaults, with whichever new token the local hub was given. */
const withToken = { ...DEFAULT_SETTINGS, hub: { port: 7420, token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/) } };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "semscope-settings-"));
  file = join(dir, "settings.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("loadSettings", () => {
  it("on a first run (no file yet) gives the defaults with a new token for the local hub, saved for the user only", async () => {
    const first = await loadSettings(file);
    expect(first).toEqual({ settings: { ...DEFAULT_SETTINGS, hub: { port: 7420, token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/) } }, firstRun: true, problem: null, backup: null });
    expect(readdirSync(dir)).toEqual(["settings.json"]);
    if (process.platform !== "win32") expect(statSync(file).mode & 0o777).toBe(0o600);
    // The same token on the next run; another first run elsewhere gets another.
    expect((await loadSettings(file)).settings.hub.token).toBe(first.settings.hub.token);
    expect((await loadSettings(join(dir, "other.json"))).settings.hub.token).not.toBe(first.settings.hub.token);
  });

  it("loads a valid file", async () => {
    const s = defaultSettings();
    s.hub.port = 7555;
    writeFileSync(file, JSON.stringify(s));
    expect(await loadSettings(file)).toEqual({ settings: s, problem: null, backup: null });
  });

  it.each([
    ["not JSON", "{ this is not json", "it is not valid JSON"],
    ["empty (a crash mid-write by another program)", "", "it is not valid JSON"],
    ["JSON of the wrong type", "[1,2,3]", "it breaks the settings rules"],
    ["from a future version", JSON.stringify({ ...defaultSettings(), version: 9 }), "it breaks the settings rules: version: must be 1"],
  ])("reports a file that is %s, keeps it aside and replaces it by the defaults", async (_name, content, reason) => {
    writeFileSync(file, content);
    const loaded = await loadSettings(file, { now });
    expect(loaded.settings).toEqual(withToken);
    expect(loaded.problem).toContain(`The settings in ${file} could not be used: ${reason}`);
    expect(loaded.problem).toContain("Defaults are in force, with a new token for the local hub. It was kept as settings.json.corrupt-2026-01-02T03-04-05-678Z.");
    expect(loaded.backup).toBe(`${file}.corrupt-2026-01-02T03-04-05-678Z`);
    expect(readFileSync(loaded.backup!, "utf8")).toBe(content);
    // The defaults are on disk now, and load cleanly next time.
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(loaded.settings);
    expect(await loadSettings(file)).toEqual({ settings: loaded.settings, problem: null, backup: null });
  });

  it("keeps every valid field of a file naming a removed or invalid one, leaves out only the bad ones and names each; the file stays as the user wrote it", async () => {
    const user = {
      ...defaultSettings(),
      hub: { port: -1, token: "my-t0ken", colour: "blue" },
      theme: "dark",
      remoteHubs: [
        { id: "prod", name: "Prod", url: "https://prod.example.com", token: "p" },
        { id: "lab", name: "Lab", url: "http://lab.example.com", token: null },
      ],
      activeRemoteId: "lab",
      thresholds: { timeouts: { ratio: 7, windowMs: 20_000 }, convoy: { windowMs: 9000 } },
      notifications: { enabled: false, minSeverity: "warning", mutedRules: ["leak", "gremlins"], silent: true },
      runDemo: "yes",
    };
    const text = JSON.stringify(user, null, 2);
    writeFileSync(file, text, { mode: 0o600 });
    const loaded = await loadSettings(file, { now });
    expect(loaded.settings).toEqual({
      ...defaultSettings(),
      hub: { port: 7420, token: "my-t0ken" },
      remoteHubs: [{ id: "prod", name: "Prod", url: "https://prod.example.com", token: "p" }],
      activeRemoteId: null,
      thresholds: { timeouts: { windowMs: 20_000 }, convoy: { windowMs: 9000 } },
      notifications: { enabled: false, minSeverity: "warning", mutedRules: ["leak"], silent: true },
      runDemo: true,
    });
    for (const named of [
      "theme: is not a setting (left out)",
      "hub.colour: is not a setting (left out)",
      "hub.port: must be in 1..65535 (the default, 7420, is used)",
      "remoteHubs[1]: left out (remoteHubs[1].url: plain http is allowed only for loopback hosts: use https)",
      'activeRemoteId: names no remote hub ("lab") (the default, null, is used)',
      "thresholds.timeouts.ratio:",
      "notifications.mutedRules[1]: left out",
      "runDemo: must be true or false (the default, true, is used)",
      "Every other setting is in force. The file is left as it is until you change a setting",
    ]) {
      expect(loaded.problem).toContain(named);
    }
    expect(loaded.backup).toBeNull();
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dir)).toEqual(["settings.json"]);

    // The first change writes the file (0600), after copying what the user wrote aside (0600 too).
    const store = await SettingsStore.open(file, { now });
    expect(store.reset).toBe(false);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(await store.save({ ...store.current, runDemo: false })).toMatchObject({ ok: true });
    const aside = `${file}.before-2026-01-02T03-04-05-678Z`;
    expect(readFileSync(aside, "utf8")).toBe(text);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ ...loaded.settings, runDemo: false });
    if (process.platform !== "win32") {
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(aside).mode & 0o777).toBe(0o600);
    }
    // Once only: the next save just writes.
    await store.save({ ...store.current, runDemo: true });
    expect(readdirSync(dir).sort()).toEqual(["settings.json", "settings.json.before-2026-01-02T03-04-05-678Z"]);
  });

  it("a token the rules refuse is replaced by a new one at once (written, the original copied aside); a token of null the user chose stays", async () => {
    const text = JSON.stringify({ ...defaultSettings(), hub: { port: 7555, token: "has a space" }, runDemo: false });
    writeFileSync(file, text);
    const loaded = await loadSettings(file, { now });
    expect(loaded.settings).toEqual({ ...defaultSettings(), hub: { port: 7555, token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/) }, runDemo: false });
    expect(loaded.problem).toContain("hub.token: must be visible ASCII characters only");
    expect(loaded.problem).toContain("The local hub has a new token");
    expect(loaded.backup).toBe(`${file}.before-2026-01-02T03-04-05-678Z`);
    expect(readFileSync(loaded.backup!, "utf8")).toBe(text);
    expect(await loadSettings(file)).toEqual({ settings: loaded.settings, problem: null, backup: null });

    writeFileSync(file, JSON.stringify({ ...defaultSettings(), hub: { port: 7555, token: null }, extra: 1 }));
    const open = await loadSettings(file, { now });
    expect(open.settings.hub).toEqual({ port: 7555, token: null });
    expect(open.problem).toContain("extra: is not a setting (left out)");

    // A file without its version is this version's, missing a field; another version's is not repaired (see above).
    const { version: _v, ...unversioned } = { ...defaultSettings(), hub: { port: 7556, token: "k33p" } };
    writeFileSync(file, JSON.stringify(unversioned));
    const noVersion = await loadSettings(file, { now });
    expect(noVersion.settings.hub).toEqual({ port: 7556, token: "k33p" });
    expect(noVersion.problem).toContain("version: missing (the default, 1, is used)");
  });

  it("reports a settings path it cannot read (a folder) without throwing", async () => {
    mkdirSync(file);
    writeFileSync(join(file, "x"), "");
    const loaded = await loadSettings(file, { now });
    expect(loaded.settings).toEqual(withToken);
    expect(loaded.problem).toMatch(/could not be read \(EISDIR/);
  });

  it("reports, and still runs on defaults, when the unusable file can neither be moved nor replaced", async () => {
    if (process.getuid?.() === 0) return; // root ignores the folder's permissions: nothing to provoke
    writeFileSync(file, "garbage");
    const { chmodSync } = await import("node:fs");
    chmodSync(dir, 0o500);
    try {
      const loaded = await loadSettings(file, { now });
      expect(loaded.settings).toEqual(withToken);
      expect(loaded.problem).toContain("could not be moved aside");
      expect(loaded.problem).toContain("Writing the defaults failed too");
      expect(loaded.backup).toBeNull();
    } finally {
      chmodSync(dir, 0o700);
    }
  });
});

describe("writeSettingsFile", () => {
  it("writes atomically: no temp file left, the folder created, readable by the user only", async () => {
    const nested = join(dir, "a", "b", "settings.json");
    await writeSettingsFile(nested, defaultSettings());
    expect(JSON.parse(readFileSync(nested, "utf8"))).toEqual(DEFAULT_SETTINGS);
    expect(readdirSync(join(dir, "a", "b"))).toEqual(["settings.json"]);
    if (process.platform !== "win32") expect(statSync(nested).mode & 0o777).toBe(0o600);
  });
});

describe("SettingsStore", () => {
  it("exposes the load problem, and hands out copies", async () => {
    writeFileSync(file, "{");
    const store = await SettingsStore.open(file, { now });
    expect(store.problem).toContain("it is not valid JSON");
    const copy = store.current;
    copy.hub.port = 1;
    expect(store.current.hub.port).toBe(7420);
  });

  it("saves valid settings to disk and makes them current; refuses invalid ones without touching either", async () => {
    const store = await SettingsStore.open(file);
    const next = { ...store.current, hub: { port: 8111, token: "t0ken" } };
    expect(await store.save(next)).toEqual({ ok: true, settings: next });
    expect(store.current.hub).toEqual({ port: 8111, token: "t0ken" });
    expect(JSON.parse(readFileSync(file, "utf8")).hub).toEqual({ port: 8111, token: "t0ken" });

    // Whatever a caller sends, null included, comes back as a refusal.
    expect(await store.save(null)).toMatchObject({ ok: false });
    const refused = await store.save({ ...next, hub: { port: 0, token: null } });
    expect(refused).toEqual({ ok: false, error: "hub.port: must be in 1..65535" });
    expect(store.current.hub.port).toBe(8111);
    expect(JSON.parse(readFileSync(file, "utf8")).hub.port).toBe(8111);
  });

  it("runs concurrent saves one at a time: the file and current agree on the last", async () => {
    const store = await SettingsStore.open(file);
    const ports = [7001, 7002, 7003, 7004, 7005];
    await Promise.all(ports.map((port) => store.save({ ...store.current, hub: { port, token: null } })));
    expect(store.current.hub.port).toBe(7005);
    expect(JSON.parse(readFileSync(file, "utf8")).hub.port).toBe(7005);
    expect(readdirSync(dir)).toEqual(["settings.json"]);
  });
});
