// The security scan in `npm test`: Electronegativity's checklist (electron-security-checks.ts)
// over the shell's TypeScript sources and over the JavaScript the build makes of them (the
// preload bundled by the same tsup command as build:main; main transpiled file by file, which
// is what tsc emits under isolatedModules), plus the runtime values behind them. Every finding
// must be explained below, and every explanation must still match a finding.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { cspWeaknesses, dashboardCsp } from "../../main/app/csp.js";
import { isAllowedNavigation, windowOpenDecision } from "../../main/app/navigation-policy.js";
import { hubUrlProblem } from "../../main/settings/settings-schema.js";
import {
  parseSource,
  scanBrowserWindows,
  scanBuiltPreload,
  scanFile,
  scanIpc,
  scanPresence,
  type Finding,
  type Source,
} from "./electron-security-checks.js";

vi.mock("electron", () => import("./electron/fake-electron.js"));
const { LOCKED_DOWN_WEB_PREFERENCES } = await import("../../main/electron/window.js");

const ROOT = join(import.meta.dirname, "..", "..");
const SHELL_DIRS = ["main/electron", "main/app", "main/settings"];

interface Explanation {
  check: string;
  why: string;
  matches: (f: Finding) => boolean;
}

// Findings that are fine, and why. Anything else fails the test.
const EXPLAINED: Explanation[] = [
  {
    check: "HTTP_RESOURCES_JS_CHECK",
    why: "The in-process hub listens on 127.0.0.1 only: plain http never leaves the machine. Remote hubs must be https unless loopback (hubUrlProblem).",
    matches: (f) => /^`http:\/\/\$\{LOCAL_HUB_HOST\}:\$\{[\w.]+\}`$/.test(f.text) && /main\/app\/(shell-hub|shell-controller)\.[jt]s$/.test(f.file),
  },
];

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(ROOT, dir, f));
}

function rel(f: Finding): string {
  return `${f.check} ${relative(ROOT, f.file)}:${f.line} ${f.text}`;
}

const sources: Source[] = SHELL_DIRS.flatMap(tsFiles).map((f) => parseSource(f));
const electronSources = sources.filter((s) => s.file.includes(`${join("main", "electron")}`));
let buildDir: string;
let built: Source[] = [];
let builtPreload: Source;

beforeAll(() => {
  buildDir = mkdtempSync(join(tmpdir(), "semscope-secscan-"));
  // The preload exactly as build:main bundles it, into a temp folder.
  const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts["build:main"];
  const tsup = script
    .split("&&")
    .map((s) => s.trim())
    .find((s) => s.startsWith("tsup "));
  if (tsup === undefined) throw new Error("build:main has no tsup step for the preload");
  const args = tsup.split(/\s+/).slice(1);
  const out = args.indexOf("--out-dir");
  args[out + 1] = buildDir;
  execFileSync(join(ROOT, "node_modules", ".bin", "tsup"), args, { cwd: ROOT, stdio: "pipe" });
  builtPreload = parseSource(join(buildDir, "preload.cjs"));
  const options = ts.parseJsonConfigFileContent(ts.readConfigFile(join(ROOT, "main", "tsconfig.build.json"), ts.sys.readFile).config, ts.sys, join(ROOT, "main")).options;
  // ESM, as tsc emits it for this "type": "module" package.
  options.module = ts.ModuleKind.ESNext;
  built = sources
    .filter((s) => !s.file.endsWith("preload.ts"))
    .map((s) => parseSource(s.file.replace(/\.ts$/, ".js"), ts.transpileModule(s.sf.text, { compilerOptions: options, fileName: s.file }).outputText));
}, 120_000);

afterAll(() => rmSync(buildDir, { recursive: true, force: true }));

function allFindings(): { sourceFindings: Finding[]; builtFindings: Finding[] } {
  const lockedKeys = Object.keys(LOCKED_DOWN_WEB_PREFERENCES);
  const sourceFindings = [
    ...sources.flatMap(scanFile),
    ...electronSources.flatMap((s) => scanBrowserWindows(s, "LOCKED_DOWN_WEB_PREFERENCES", lockedKeys)),
    ...electronSources.flatMap((s) => scanIpc(s, "checkInvoke")),
    ...scanPresence(electronSources),
  ];
  const builtElectron = built.filter((s) => s.file.includes(join("main", "electron")));
  const builtFindings = [
    ...built.flatMap(scanFile),
    ...scanFile(builtPreload),
    ...scanBuiltPreload(builtPreload),
    ...builtElectron.flatMap((s) => scanBrowserWindows(s, "LOCKED_DOWN_WEB_PREFERENCES", lockedKeys)),
    ...builtElectron.flatMap((s) => scanIpc(s, "checkInvoke")),
    ...scanPresence(builtElectron),
  ];
  return { sourceFindings, builtFindings };
}

describe("Electron security scan (Electronegativity's checks)", () => {
  it("leaves no finding unexplained in the sources", () => {
    const unexplained = allFindings().sourceFindings.filter((f) => !EXPLAINED.some((e) => e.check === f.check && e.matches(f)));
    expect(unexplained.map(rel)).toEqual([]);
  });

  it("leaves no finding unexplained in the built main and the bundled preload", () => {
    const unexplained = allFindings().builtFindings.filter((f) => !EXPLAINED.some((e) => e.check === f.check && e.matches(f)));
    expect(unexplained.map(rel)).toEqual([]);
  });

  it("keeps no stale explanation: each still matches a finding", () => {
    const { sourceFindings, builtFindings } = allFindings();
    for (const e of EXPLAINED) expect([...sourceFindings, ...builtFindings].some((f) => f.check === e.check && e.matches(f)), e.why).toBe(true);
  });

  it("catches what it is meant to catch (the scanner itself)", () => {
    const bad = parseSource(
      "bad.ts",
      `import { BrowserWindow, shell, app } from "electron";
       const w = new BrowserWindow({ webPreferences: { nodeIntegration: true, contextIsolation: false, sandbox: false, webSecurity: false, enableBlinkFeatures: "X" } });
       shell.openExternal(url); w.webContents.executeJavaScript(code); app.commandLine.appendSwitch("ignore-certificate-errors");
       app.on("certificate-error", () => {}); require("@electron/remote"); w.loadURL("http://example.com/");
       ipcMain.on("x", () => {});`,
    );
    const checks = new Set([...scanFile(bad), ...scanBrowserWindows(bad, "LOCKED", []), ...scanIpc(bad, "checkInvoke")].map((f) => f.check));
    for (const c of [
      "NODE_INTEGRATION_JS_CHECK",
      "CONTEXT_ISOLATION_JS_CHECK",
      "SANDBOX_JS_CHECK",
      "WEB_SECURITY_JS_CHECK",
      "BLINK_FEATURES_JS_CHECK",
      "OPEN_EXTERNAL_JS_CHECK",
      "DANGEROUS_FUNCTIONS_JS_CHECK",
      "CUSTOM_ARGUMENTS_JS_CHECK",
      "CERTIFICATE_ERROR_EVENT_JS_CHECK",
      "REMOTE_MODULE_JS_CHECK",
      "HTTP_RESOURCES_JS_CHECK",
      "BROWSER_WINDOW_OPTIONS",
      "IPC_SENDER_CHECK",
    ]) {
      expect(checks, c).toContain(c);
    }
    expect(scanPresence([bad]).map((f) => f.check)).toEqual(expect.arrayContaining(["LIMIT_NAVIGATION_GLOBAL_CHECK", "CSP_GLOBAL_CHECK", "PERMISSION_REQUEST_HANDLER_GLOBAL_CHECK"]));
    const leakyPreload = parseSource("p.cjs", `const { contextBridge, ipcRenderer } = require("electron"); require("./other.js"); contextBridge.exposeInMainWorld("x", { ipc: ipcRenderer });`);
    expect(scanBuiltPreload(leakyPreload).map((f) => f.text)).toEqual([`require("./other.js")`, "ipc: ipcRenderer"]);
  });
});

describe("the values behind the checks", () => {
  it("locks every window down: sandbox, context isolation, no Node, web security, no webview", () => {
    expect(LOCKED_DOWN_WEB_PREFERENCES).toMatchObject({
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
    });
  });

  it("sets a strict CSP: no unsafe-eval or unsafe-inline, nothing but the dashboard's origin", () => {
    for (const origin of ["http://127.0.0.1:7420", "https://hub.example.com", null]) {
      const csp = dashboardCsp(origin);
      expect(cspWeaknesses(csp), csp).toEqual([]);
      expect(csp).not.toMatch(/unsafe-eval|unsafe-inline|\*/);
    }
  });

  it("denies window.open and navigation elsewhere; loads remote hubs over https only", () => {
    expect(windowOpenDecision()).toEqual({ action: "deny" });
    expect(isAllowedNavigation("https://evil.example/", { origin: "http://127.0.0.1:7420", local: true })).toBe(false);
    expect(hubUrlProblem("http://hub.example.com")).not.toBeNull();
  });

  it("uses the pinned, current Electron (the online check for newer security fixes is not run here)", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    const installed = (JSON.parse(readFileSync(join(ROOT, "node_modules", "electron", "package.json"), "utf8")) as { version: string }).version;
    const [major, minor] = installed.split(".").map(Number);
    expect(major).toBeGreaterThanOrEqual(40);
    expect(pkg.devDependencies.electron.replace(/^[~^]/, "").split(".").slice(0, 2).join(".")).toBe(`${major}.${minor}`);
  });

  it("flips Electron's fuses in packaged builds", () => {
    const yml = readFileSync(join(ROOT, "electron-builder.yml"), "utf8");
    for (const line of ["runAsNode: false", "enableNodeOptionsEnvironmentVariable: false", "enableNodeCliInspectArguments: false", "onlyLoadAppFromAsar: true"]) {
      expect(yml).toContain(`  ${line}`);
    }
  });

  it("imports electron only in main/electron/", () => {
    const offenders: string[] = [];
    const visit = (dir: string) => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) visit(path);
        else if (entry.name.endsWith(".ts") && !path.startsWith(join("main", "electron"))) {
          const src = parseSource(join(ROOT, path));
          src.sf.forEachChild((n) => {
            if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier) && n.moduleSpecifier.text === "electron") offenders.push(path);
          });
        }
      }
    };
    visit("main");
    visit("shared");
    expect(offenders).toEqual([]);
  });
});
