// Electronegativity's checklist (github.com/doyensec/electronegativity, checks named as there),
// applied with the TypeScript parser to the shell's sources and to the JavaScript the build makes
// of them. Each check returns findings; electron-security.test.ts fails on any finding that is not
// explained there.
import { readFileSync } from "node:fs";
import ts from "typescript";

export interface Finding {
  check: string;
  file: string;
  line: number;
  text: string;
}

export interface Source {
  file: string;
  sf: ts.SourceFile;
}

export function parseSource(file: string, text = readFileSync(file, "utf8")): Source {
  const kind = file.endsWith(".ts") ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  return { file, sf: ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, kind) };
}

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  node.forEachChild((c) => walk(c, visit));
}

function finding(check: string, src: Source, node: ts.Node): Finding {
  const { line } = src.sf.getLineAndCharacterOfPosition(node.getStart(src.sf));
  return { check, file: src.file, line: line + 1, text: node.getText(src.sf).slice(0, 120) };
}

function propName(node: ts.PropertyAssignment): string | null {
  return ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) ? node.name.text : null;
}

/** Calls whose callee ends with one of `names` (`x.openExternal(...)`, `openExternal(...)`). */
function callsTo(src: Source, names: readonly string[]): ts.CallExpression[] {
  const out: ts.CallExpression[] = [];
  walk(src.sf, (n) => {
    if (!ts.isCallExpression(n)) return;
    const callee = n.expression;
    const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : null;
    if (name !== null && names.includes(name)) out.push(n);
  });
  return out;
}

/** `x.on("<event>", …)` registrations. */
function listenersOf(src: Source, event: string): ts.CallExpression[] {
  return callsTo(src, ["on", "once", "addListener"]).filter((c) => {
    const first = c.arguments[0];
    return first !== undefined && ts.isStringLiteralLike(first) && first.text === event;
  });
}

// webPreferences that must hold exactly this literal wherever they are set.
const REQUIRED_PREFERENCES: Readonly<Record<string, { check: string; value: boolean }>> = {
  nodeIntegration: { check: "NODE_INTEGRATION_JS_CHECK", value: false },
  nodeIntegrationInWorker: { check: "NODE_INTEGRATION_JS_CHECK", value: false },
  nodeIntegrationInSubFrames: { check: "NODE_INTEGRATION_JS_CHECK", value: false },
  contextIsolation: { check: "CONTEXT_ISOLATION_JS_CHECK", value: true },
  sandbox: { check: "SANDBOX_JS_CHECK", value: true },
  webSecurity: { check: "WEB_SECURITY_JS_CHECK", value: true },
  allowRunningInsecureContent: { check: "INSECURE_CONTENT_JS_CHECK", value: false },
  experimentalFeatures: { check: "EXPERIMENTAL_FEATURES_JS_CHECK", value: false },
  webviewTag: { check: "WEBVIEW_TAG_JS_CHECK", value: false },
  enableRemoteModule: { check: "REMOTE_MODULE_JS_CHECK", value: false },
};

/** Findings in one file (source or built). */
export function scanFile(src: Source): Finding[] {
  const out: Finding[] = [];
  walk(src.sf, (n) => {
    if (ts.isPropertyAssignment(n)) {
      const name = propName(n);
      const rule = name === null ? undefined : REQUIRED_PREFERENCES[name];
      if (rule !== undefined) {
        const v = n.initializer;
        const literal = v.kind === ts.SyntaxKind.TrueKeyword ? true : v.kind === ts.SyntaxKind.FalseKeyword ? false : null;
        // Built code may write `!0` / `!1`; tsc and tsup keep `true` / `false`, so anything else is a finding.
        if (literal !== rule.value) out.push(finding(rule.check, src, n));
      }
      if (name === "enableBlinkFeatures") out.push(finding("BLINK_FEATURES_JS_CHECK", src, n));
      if (name === "allowpopups") out.push(finding("ALLOWPOPUPS_JS_CHECK", src, n));
    }
    if (ts.isStringLiteralLike(n) || ts.isTemplateHead(n)) {
      const text = n.text;
      if (text.includes("@electron/remote")) out.push(finding("REMOTE_MODULE_JS_CHECK", src, n));
      if (text === "ELECTRON_DISABLE_SECURITY_WARNINGS") out.push(finding("SECURITY_WARNINGS_DISABLED_JS_CHECK", src, n));
      if (text === "certificate-error") out.push(finding("CERTIFICATE_ERROR_EVENT_JS_CHECK", src, n));
      if (/^http:\/\//i.test(text)) out.push(finding("HTTP_RESOURCES_JS_CHECK", src, ts.isTemplateHead(n) ? n.parent : n));
      if (/--(disable-web-security|ignore-certificate-errors|no-sandbox|remote-debugging-port|js-flags)/.test(text)) {
        out.push(finding("CUSTOM_ARGUMENTS_JS_CHECK", src, n));
      }
    }
    if (ts.isPropertyAccessExpression(n) && n.name.text === "remote" && /electron/i.test(n.expression.getText(src.sf))) {
      out.push(finding("REMOTE_MODULE_JS_CHECK", src, n));
    }
  });
  for (const c of callsTo(src, ["openExternal", "openPath", "showItemInFolder"])) out.push(finding("OPEN_EXTERNAL_JS_CHECK", src, c));
  for (const c of callsTo(src, ["executeJavaScript", "executeJavaScriptInIsolatedWorld", "insertCSS", "eval", "Function"])) {
    out.push(finding("DANGEROUS_FUNCTIONS_JS_CHECK", src, c));
  }
  walk(src.sf, (n) => {
    if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "Function") out.push(finding("DANGEROUS_FUNCTIONS_JS_CHECK", src, n));
  });
  for (const c of callsTo(src, ["setAsDefaultProtocolClient", "registerSchemesAsPrivileged", "registerFileProtocol", "registerHttpProtocol"])) {
    out.push(finding("PROTOCOL_HANDLERS_JS_CHECK", src, c));
  }
  for (const c of callsTo(src, ["setCertificateVerifyProc", "setProxy"])) out.push(finding("CERTIFICATE_VERIFY_PROC_JS_CHECK", src, c));
  for (const c of callsTo(src, ["appendSwitch", "appendArgument"])) out.push(finding("CUSTOM_ARGUMENTS_JS_CHECK", src, c));
  for (const c of callsTo(src, ["setPermissionRequestHandler", "setPermissionCheckHandler"])) {
    // A handler that may grant must decide through the policy module, never `callback(true)` inline.
    if (/callback\(\s*true\s*\)|=>\s*true\b/.test(c.getText(src.sf))) out.push(finding("PERMISSION_REQUEST_HANDLER_JS_CHECK", src, c));
  }
  return out;
}

/** The checks that look for something that must be there, over all the shell's files together. */
export function scanPresence(sources: readonly Source[]): Finding[] {
  const out: Finding[] = [];
  const anyCall = (names: string[]) => sources.some((s) => callsTo(s, names).length > 0);
  const anyListener = (event: string) => sources.some((s) => listenersOf(s, event).length > 0);
  const missing = (check: string, text: string) => out.push({ check, file: "(main/electron)", line: 0, text });
  if (!anyListener("will-navigate")) missing("LIMIT_NAVIGATION_GLOBAL_CHECK", "no will-navigate handler");
  if (!anyListener("will-redirect")) missing("LIMIT_NAVIGATION_GLOBAL_CHECK", "no will-redirect handler");
  if (!anyListener("will-attach-webview")) missing("LIMIT_NAVIGATION_GLOBAL_CHECK", "no will-attach-webview handler");
  if (!anyListener("web-contents-created")) missing("LIMIT_NAVIGATION_GLOBAL_CHECK", "webContents created later are not hardened");
  if (!anyCall(["setWindowOpenHandler"])) missing("LIMIT_NAVIGATION_GLOBAL_CHECK", "no setWindowOpenHandler");
  if (!anyCall(["setPermissionRequestHandler"])) missing("PERMISSION_REQUEST_HANDLER_GLOBAL_CHECK", "no setPermissionRequestHandler");
  if (!anyCall(["setPermissionCheckHandler"])) missing("PERMISSION_REQUEST_HANDLER_GLOBAL_CHECK", "no setPermissionCheckHandler");
  if (!anyCall(["onHeadersReceived"])) missing("CSP_GLOBAL_CHECK", "no CSP header set (onHeadersReceived)");
  if (!anyCall(["enableSandbox"])) missing("SANDBOX_JS_CHECK", "app.enableSandbox() is not called");
  if (!anyCall(["requestSingleInstanceLock"])) missing("SINGLE_INSTANCE", "no single-instance lock");
  return out;
}

/** Every `new BrowserWindow({...})` takes its webPreferences from the locked-down set, overriding none of it. */
export function scanBrowserWindows(src: Source, lockedName: string, lockedKeys: readonly string[]): Finding[] {
  const out: Finding[] = [];
  walk(src.sf, (n) => {
    if (!ts.isNewExpression(n) || !ts.isIdentifier(n.expression) || n.expression.text !== "BrowserWindow") return;
    const arg = n.arguments?.[0];
    if (arg === undefined || !ts.isObjectLiteralExpression(arg)) {
      out.push(finding("BROWSER_WINDOW_OPTIONS", src, n));
      return;
    }
    const wp = arg.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && propName(p) === "webPreferences");
    if (wp === undefined || !ts.isObjectLiteralExpression(wp.initializer)) {
      out.push(finding("BROWSER_WINDOW_OPTIONS", src, n));
      return;
    }
    const props = wp.initializer.properties;
    const spreadsLocked = props.some((p) => ts.isSpreadAssignment(p) && p.expression.getText(src.sf) === lockedName);
    if (!spreadsLocked) out.push(finding("BROWSER_WINDOW_OPTIONS", src, wp));
    for (const p of props) {
      const name = ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p) ? p.name.getText(src.sf) : null;
      if (name !== null && lockedKeys.includes(name)) out.push(finding("BROWSER_WINDOW_OPTIONS", src, p));
    }
  });
  return out;
}

/** ipcMain.handle/on only where every call goes through the contract check. */
export function scanIpc(src: Source, checkName: string): Finding[] {
  const out: Finding[] = [];
  for (const c of callsTo(src, ["handle", "handleOnce", "on", "once"])) {
    const callee = c.expression;
    if (!ts.isPropertyAccessExpression(callee) || callee.expression.getText(src.sf) !== "ipcMain") continue;
    if (callee.name.text !== "handle") out.push(finding("IPC_SENDER_CHECK", src, c));
    const body = c.arguments[1]?.getText(src.sf) ?? "";
    if (!body.includes(`${checkName}(`)) out.push(finding("IPC_SENDER_CHECK", src, c));
  }
  return out;
}

/** The built preload: one CommonJS file that requires nothing but electron, exposing one bridge. */
export function scanBuiltPreload(src: Source): Finding[] {
  const out: Finding[] = [];
  walk(src.sf, (n) => {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) out.push(finding("PRELOAD_JS_CHECK", src, n));
    if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) out.push(finding("PRELOAD_JS_CHECK", src, n));
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "require") {
      const arg = n.arguments[0];
      if (arg === undefined || !ts.isStringLiteralLike(arg) || arg.text !== "electron") out.push(finding("PRELOAD_JS_CHECK", src, n));
    }
  });
  const exposes = callsTo(src, ["exposeInMainWorld"]);
  if (exposes.length !== 1) out.push({ check: "PRELOAD_JS_CHECK", file: src.file, line: 0, text: `exposeInMainWorld called ${exposes.length} times` });
  // ipcRenderer only ever as the receiver of a call (ipcRenderer.invoke/on/removeListener), never handed over as a value.
  walk(src.sf, (n) => {
    if (!ts.isIdentifier(n) || n.text !== "ipcRenderer") return;
    if (ts.isImportSpecifier(n.parent) || ts.isBindingElement(n.parent) || isCallReceiver(n)) return;
    out.push(finding("PRELOAD_JS_CHECK", src, n.parent));
  });
  return out;
}

/** `ipcRenderer` in `ipcRenderer.m(…)` or `mod.ipcRenderer.m(…)`. */
function isCallReceiver(n: ts.Identifier): boolean {
  const expr: ts.Node = ts.isPropertyAccessExpression(n.parent) && n.parent.name === n ? n.parent : n;
  const access = expr.parent;
  return ts.isPropertyAccessExpression(access) && access.expression === expr && ts.isCallExpression(access.parent) && access.parent.expression === access;
}
