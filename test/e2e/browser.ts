// Shared helpers for the browser suites (test/e2e/ui) and the UI benchmark (bench/ui): build the
// renderer, launch Chromium (playwright-core, headless), spawn real agents in child processes,
// and poll with deadlines.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { build } from "vite";
import { createHub, type Hub } from "../../main/hub/index.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/**
 * Builds the renderer (production React) into a fresh temporary folder and returns it. A folder
 * of its own, so suites running in parallel (and the smoke test's renderer/dist) never race.
 */
export async function buildRenderer(): Promise<{ dir: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), "semscope-renderer-"));
  // Vitest sets NODE_ENV=test, which would give React's development build.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({
      configFile: join(ROOT, "renderer/vite.config.ts"),
      logLevel: "warn",
      mode: "production",
      build: { outDir: dir, emptyOutDir: true, sourcemap: false },
    });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  if (!existsSync(join(dir, "index.html"))) throw new Error(`renderer build produced no index.html in ${dir}`);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors and console errors, for a final assertion. */
  errors: string[];
  close(): Promise<void>;
}

/** One headless Chromium with a throwaway profile, and its first page; in the time zone `timezoneId` when given. */
export async function launchBrowser(viewport = { width: 1440, height: 900 }, timezoneId?: string): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium fonts-liberation, or set CHROMIUM_PATH`);
  const profile = mkdtempSync(join(tmpdir(), "semscope-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    colorScheme: "light",
    ...(timezoneId !== undefined ? { timezoneId } : {}),
  });
  // Functions handed to page.evaluate are compiled by tsx (esbuild, keepNames), which may wrap
  // named inner functions in __name(): give the page a no-op one.
  await context.addInitScript({ content: "globalThis.__name = (f) => f;" });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  return {
    context,
    page,
    errors,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface ChildAgent {
  proc: ChildProcess;
  /** Everything the child printed (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves on the first line equal to `line` on stdout. */
  waitFor(line: string, timeoutMs?: number): Promise<void>;
  /** SIGKILL (the default) or SIGTERM, and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `node --import tsx <fixture> ...args` with a pipe on its output. */
export function spawnAgent(fixture: string, args: string[], env: Record<string, string> = {}): ChildAgent {
  const proc = spawn(process.execPath, ["--import", "tsx", fixture, ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: "production", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const waiters: { line: string; resolve: () => void }[] = [];
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    const lines = out.split("\n").map((l) => l.trim());
    for (const w of [...waiters]) {
      if (lines.includes(w.line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  proc.stdout?.on("data", onData);
  proc.stderr?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<void>((res) => proc.once("exit", () => res()));
  return {
    proc,
    output: () => out,
    waitFor: (line, timeoutMs = 15_000) =>
      new Promise<void>((res, rej) => {
        if (out.split("\n").some((l) => l.trim() === line)) return res();
        const timer = setTimeout(() => rej(new Error(`agent ${fixture} ${args.join(" ")} did not print "${line}" within ${timeoutMs} ms; output:\n${out}`)), timeoutMs);
        waiters.push({
          line,
          resolve: () => {
            clearTimeout(timer);
            res();
          },
        });
        void exited.then(() => {
          clearTimeout(timer);
          rej(new Error(`agent ${fixture} exited (code ${String(proc.exitCode)}) before "${line}"; output:\n${out}`));
        });
      }),
    kill: async (signal = "SIGKILL") => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
  };
}

export interface DashboardRig {
  hub: Hub;
  /** The built renderer the hub serves (another hub may serve it too). */
  staticDir: string;
  browser: Browser;
  page: Page;
  agents: ChildAgent[];
  /** When each agent printed "ready" (Date.now()), in the order given. */
  readyAt: number[];
  /** Kills the agents, closes the browser and the hub, removes the build. */
  close(): Promise<void>;
}

/**
 * What the browser suites start before their cases: the renderer built, a hub serving it, one agent
 * per `agentArgs` entry (`fixture <hub url> ...args`) up and "ready", then Chromium on the overview.
 * `onPage` sees the page before it loads anything (to listen for responses).
 */
export async function startDashboard(fixture: string, agentArgs: string[][], onPage: (page: Page) => void = () => undefined): Promise<DashboardRig> {
  const built = await buildRenderer();
  const hub = await createHub({ port: 0, staticDir: built.dir, log: () => undefined });
  const agents = agentArgs.map((args) => spawnAgent(fixture, [hub.url, ...args]));
  const readyAt = agents.map(() => 0);
  let browser: Browser | undefined;
  const close = async () => {
    await Promise.all(agents.map((a) => a.kill()));
    await browser?.close();
    await hub.close();
    built.remove();
  };
  try {
    await Promise.all(agents.map((a, i) => a.waitFor("ready").then(() => (readyAt[i] = Date.now()))));
    browser = await launchBrowser();
    onPage(browser.page);
    await browser.page.goto(hub.url);
    await browser.page.getByTestId("overview").waitFor();
  } catch (err) {
    await close();
    throw err;
  }
  return { hub, staticDir: built.dir, browser, page: browser.page, agents, readyAt, close };
}

/** Polls `fn` until `ok(value)` or the deadline, then throws with the last value seen. */
export async function until<T>(what: string, fn: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 10_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastErr: unknown;
  for (;;) {
    try {
      last = await fn();
      if (ok(last)) return last;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(last)}${lastErr !== undefined ? `; last error: ${String(lastErr)}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
