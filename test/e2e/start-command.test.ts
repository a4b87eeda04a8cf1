// The README's first command on a machine without the Electron binary: `npm start` must say so in
// one line, serve web mode with the dashboard and the demo, and close cleanly on SIGTERM.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { electronBinary } from "../../scripts/electron-binary.js";

const root = new URL("../..", import.meta.url).pathname;

function firstLine(stream: NodeJS.ReadableStream, match: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: stream });
    const timer = setTimeout(() => reject(new Error(`no line matching ${match} within ${timeoutMs} ms`)), timeoutMs);
    rl.on("line", (line) => {
      if (match.test(line)) {
        clearTimeout(timer);
        resolve(line);
      }
    });
  });
}

async function until<T>(what: string, f: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("npm start without an Electron binary", () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child?.exitCode === null) child.kill("SIGKILL");
  });

  it("falls back to web mode with the dashboard and the demo, and stops cleanly", async () => {
    // This kind of machine has no Electron binary; the test is about that fallback.
    expect("missing" in electronBinary()).toBe(true);
    child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--port", "0"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const notice = firstLine(child.stderr as NodeJS.ReadableStream, /Electron cannot start here/, 60_000);
    const listening = await firstLine(child.stdout as NodeJS.ReadableStream, /^semscope hub listening on /, 60_000);
    expect(await notice).toMatch(/serving web mode instead\.$/);
    const url = listening.replace("semscope hub listening on ", "");
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<div id="root"|<div id="app"|<script/);

    const state = await until(
      "the demo's agents",
      async () => {
        const s = (await (await fetch(`${url}/api/state`)).json()) as { agents: { connected: boolean }[]; semaphores: unknown[] };
        return s.agents.filter((a) => a.connected).length >= 6 ? s : undefined;
      },
      45_000,
    );
    expect(state.semaphores.length).toBeGreaterThanOrEqual(10);

    const exited = new Promise<number | null>((resolve) => child?.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 120_000);

  it("says where --record-dir records", async () => {
    const dir = mkdtempSync(join(tmpdir(), "semscope-record-dir-"));
    try {
      child = spawn(process.execPath, ["--import", "tsx", "scripts/semscope.ts", "web", "--port", "0", "--no-demo", "--record-dir", dir], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
      const line = await firstLine(child.stdout as NodeJS.ReadableStream, /^semscope recording: /, 60_000);
      expect(line).toContain(`rolling recordings in ${dir}`);
      expect(line).toMatch(/past \d+ MB/);
      const exited = new Promise<number | null>((resolve) => child?.once("exit", (code) => resolve(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it("refuses an unknown flag with a one-line error and exit code 2", async () => {
    child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--prot", "1"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child?.once("exit", resolve));
    expect(code).toBe(2);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toMatch(/prot/);
  }, 60_000);

  it("names the flag or the environment variable a refused hub option came from, not createHub's field", async () => {
    const refused = async (args: string[], env: Record<string, string>) => {
      const c = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--web", "--no-demo", "--port", "0", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, SEMSCOPE_TOKEN: "", SEMSCOPE_AGENT_TOKEN: "", ...env } });
      let err = "";
      c.stderr.on("data", (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((resolve) => c.once("exit", resolve));
      expect(code).toBe(2);
      expect(err.trim().split("\n")).toHaveLength(1);
      return err.trim();
    };
    const [flag, env] = await Promise.all([refused(["--agent-token", "a"], {}), refused(["--token", "t"], { SEMSCOPE_AGENT_TOKEN: "t" })]);
    expect(flag).toBe("semscope: --agent-token needs --token (or SEMSCOPE_TOKEN): without it the dashboard and the API would be open while agents need a token");
    expect(env).toBe("semscope: SEMSCOPE_AGENT_TOKEN must differ from --token, or it would open the dashboard too");
  }, 60_000);
});
