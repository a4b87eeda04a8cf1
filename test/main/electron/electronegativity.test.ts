// @doyensec/electronegativity itself, over the JavaScript `npm run build:main` makes (its two
// steps, tsc and the tsup preload bundle, into a temp folder: its TypeScript 4.2 parser cannot
// read our sources, `satisfies` for one). Every finding must be in ALLOWED with a reason, and
// each reason's runtime fact is checked here too, so an explanation cannot outlive its truth.
// A canary file with known mistakes is scanned in the same run: a scanner that silently finds
// nothing fails the test. (electron-security.test.ts applies the same checklist to the sources.)
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { cspWeaknesses, dashboardCsp } from "../../../main/app/csp.js";
import { windowOpenDecision } from "../../../main/app/navigation-policy.js";

vi.mock("electron", () => import("./fake-electron.js"));
const { LOCKED_DOWN_WEB_PREFERENCES } = await import("../../../main/electron/window.js");

const ROOT = join(import.meta.dirname, "..", "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");
const SCANNER = join(ROOT, "node_modules", "@doyensec", "electronegativity", "dist", "index.js");
const ELECTRON_VERSION = (JSON.parse(readFileSync(join(ROOT, "node_modules", "electron", "package.json"), "utf8")) as { version: string }).version;
const BUILD_MAIN = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts["build:main"];
const TSC_STEP = "tsc -p main/tsconfig.build.json";
const TSUP_STEP = "tsup main/electron/preload.ts --no-config --format cjs --platform browser --target es2022 --external electron";

interface Finding {
  check: string;
  /** Relative to the scanned folder: dist/… or canary/…. */
  file: string;
  line: number;
  message: string;
}

interface Allowed {
  check: string;
  /** Every file it is found in (each must still have it). */
  files: string[];
  why: string;
  /** Asserts what `why` claims. */
  holds: () => void;
}

const WINDOW_JS = "dist/main/electron/window.js";
/** The replay window (File → Open Recording…). */
const REPLAY_JS = "dist/main/electron/recordings-menu.js";

const ALLOWED: Allowed[] = [
  {
    check: "CONTEXT_ISOLATION_JS_CHECK",
    files: [WINDOW_JS, REPLAY_JS],
    why: "both windows' webPreferences spread LOCKED_DOWN_WEB_PREFERENCES, which the scanner cannot follow; it sets contextIsolation: true",
    holds: () => {
      expect(LOCKED_DOWN_WEB_PREFERENCES.contextIsolation).toBe(true);
      expect(readFileSync(join(ROOT, "main", "electron", "window.ts"), "utf8")).toContain("webPreferences: { ...LOCKED_DOWN_WEB_PREFERENCES, preload: opts.preload }");
      expect(readFileSync(join(ROOT, "main", "electron", "recordings-menu.ts"), "utf8")).toContain("webPreferences: { ...LOCKED_DOWN_WEB_PREFERENCES }");
    },
  },
  {
    check: "SANDBOX_JS_CHECK",
    files: [WINDOW_JS, REPLAY_JS],
    why: "the same spread sets sandbox: true (and main.ts calls app.enableSandbox() for every renderer)",
    holds: () => {
      expect(LOCKED_DOWN_WEB_PREFERENCES.sandbox).toBe(true);
      expect(readFileSync(join(ROOT, "main", "electron", "main.ts"), "utf8")).toContain("app.enableSandbox()");
    },
  },
  {
    check: "PRELOAD_JS_CHECK",
    files: [WINDOW_JS],
    why: "a reminder to review the preload: it exposes only named functions through contextBridge, never ipcRenderer (test/main/electron/preload.test.ts)",
    holds: () => {
      const preload = readFileSync(join(ROOT, "main", "electron", "preload.ts"), "utf8");
      expect(preload).toContain("contextBridge.exposeInMainWorld(BRIDGE_KEY, bridge)");
      expect(preload).not.toMatch(/exposeInMainWorld\([^)]*ipcRenderer/);
    },
  },
  {
    check: "AUXCLICK_JS_CHECK",
    files: [WINDOW_JS, REPLAY_JS],
    why: "a middle-click asks for a new window, and every window.open is denied (setWindowOpenHandler → windowOpenDecision) in every webContents (web-contents-created)",
    holds: () => {
      expect(windowOpenDecision()).toEqual({ action: "deny" });
      expect(readFileSync(join(ROOT, "main", "electron", "main.ts"), "utf8")).toMatch(/app\.on\("web-contents-created", \(_event, contents\) => hardenWebContents\(/);
    },
  },
  {
    check: "CSP_GLOBAL_CHECK",
    files: [WINDOW_JS],
    why: "the CSP header is computed per origin (dashboardCsp), which the scanner cannot evaluate; the policy it makes has no weakness",
    holds: () => {
      for (const origin of ["http://127.0.0.1:7420", "https://hub.example.com", null]) expect(cspWeaknesses(dashboardCsp(origin)), String(origin)).toEqual([]);
    },
  },
];

// What the scanner must find in the canary, or it is not really scanning.
const CANARY = `const { BrowserWindow } = require("electron");
const win = new BrowserWindow({ webPreferences: { nodeIntegration: true, contextIsolation: false, sandbox: false, webSecurity: false } });
win.loadURL("http://example.com/");
`;
const CANARY_MUST_FIND = ["CONTEXT_ISOLATION_JS_CHECK", "SANDBOX_JS_CHECK", "WEB_SECURITY_JS_CHECK", "HTTP_RESOURCES_JS_CHECK"];

let tmp: string;
let findings: Finding[] = [];

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "semscope-eneg-"));
  const input = join(tmp, "scan");
  const dist = join(input, "dist");
  execFileSync(join(BIN, "tsc"), ["-p", "main/tsconfig.build.json", "--outDir", dist], { cwd: ROOT, stdio: "pipe", timeout: 240_000 });
  execFileSync(join(BIN, "tsup"), [...TSUP_STEP.split(" ").slice(1), "--out-dir", join(dist, "main", "electron"), "--silent"], {
    cwd: ROOT,
    stdio: "pipe",
    timeout: 120_000,
  });
  mkdirSync(join(input, "canary"));
  writeFileSync(join(input, "canary", "bad-window.js"), CANARY);

  const sarif = join(tmp, "report.sarif");
  // -e: it would otherwise look the version up online; -r: paths relative to the input.
  execFileSync(process.execPath, [SCANNER, "-i", input, "-e", ELECTRON_VERSION, "-r", "-v", "false", "-o", sarif], {
    cwd: tmp,
    stdio: "pipe",
    timeout: 180_000,
  });
  const report = JSON.parse(readFileSync(sarif, "utf8")) as {
    runs: {
      results: {
        ruleId: string;
        message: { text: string };
        locations: { physicalLocation: { artifactLocation: { uri: string }; region?: { startLine?: number } } }[];
      }[];
    }[];
  };
  findings = report.runs.flatMap((r) =>
    r.results.map((x) => ({
      check: x.ruleId,
      file: x.locations[0]?.physicalLocation.artifactLocation.uri.replace(/\\/g, "/") ?? "?",
      line: x.locations[0]?.physicalLocation.region?.startLine ?? 0,
      message: x.message.text,
    })),
  );
}, 600_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("Electronegativity over the built shell", () => {
  it("scans what build:main builds, the way build:main builds it", () => {
    expect(BUILD_MAIN).toContain(TSC_STEP);
    expect(BUILD_MAIN).toContain(TSUP_STEP);
  });

  it("really scans: it finds the canary's known mistakes", () => {
    const canary = findings.filter((f) => f.file.startsWith("canary/")).map((f) => f.check);
    expect(canary).toEqual(expect.arrayContaining(CANARY_MUST_FIND));
  });

  it("finds nothing in the app that is not explained", () => {
    const app = findings.filter((f) => f.file.startsWith("dist/"));
    const unexplained = app.filter((f) => !ALLOWED.some((a) => a.check === f.check && a.files.includes(f.file)));
    expect(unexplained, "explain each in ALLOWED (with a check of the reason) or fix it").toEqual([]);
  });

  it("has no explanation left without its finding, and every reason still holds", () => {
    for (const a of ALLOWED) {
      for (const file of a.files) {
        expect(
          findings.some((f) => f.check === a.check && f.file === file),
          `${a.check} in ${file} is no longer found: drop it from ALLOWED`,
        ).toBe(true);
      }
      a.holds();
    }
  });
});
