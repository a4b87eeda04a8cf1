// `semscope web` takes the flags of `semscope hub` (one table, main/hub/hub-flags.ts): a web-mode
// process started with an agent token lets a real agent stream with it while that token opens
// neither the API nor a dashboard, and applies the caps and allowed origins given on its command line.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { io } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import { HUB_NODE_FLAGS } from "../../main/hub/node-flags.js";
import type { HubState } from "../../shared/protocol/index.js";
import { parseLaunchArgs } from "../../scripts/launch-options.js";
import { rawAgent } from "./hostile/harness.js";
import { cleanupAll, forkFixture, onCleanup, ROOT, START_TIMEOUT_MS, until } from "./stream/harness.js";

afterEach(cleanupAll);

/** The environment without our token variables, so only the command line gives tokens. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.SEMSCOPE_TOKEN;
  delete env.SEMSCOPE_AGENT_TOKEN;
  return env;
}

/** `semscope web <args>` from the sources, with the hub's V8 flags so it does not relaunch itself. */
function web(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [...HUB_NODE_FLAGS, "--import", "tsx", "scripts/semscope.ts", "web", ...args], { cwd: ROOT, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exit, stderr: () => stderr };
}

/** A web-mode process's address, from its first stdout line. */
async function startWeb(args: string[]) {
  const w = web(args);
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`semscope web did not start within ${START_TIMEOUT_MS} ms: ${w.stderr()}`)), START_TIMEOUT_MS);
    createInterface({ input: w.child.stdout }).once("line", (l) => (clearTimeout(timer), resolve(l)));
    void w.exit.then((code) => (clearTimeout(timer), reject(new Error(`semscope web exited ${code}: ${w.stderr()}`))));
  });
  expect(line).toMatch(/^semscope hub listening on http:\/\/127\.0\.0\.1:\d+$/);
  return { ...w, url: line.slice("semscope hub listening on ".length) };
}

const get = (url: string, token: string, headers: Record<string, string> = {}) => fetch(url, { headers: { Authorization: `Bearer ${token}`, ...headers } });

/** How a /ui handshake with this token ends: "connected", or the refusal's message. */
function uiHandshake(url: string, token: string): Promise<string> {
  const ui = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1, token } });
  onCleanup(() => ui.disconnect());
  return new Promise((resolve) => {
    ui.once("connect", () => resolve("connected"));
    ui.once("connect_error", (err) => resolve(err.message));
  });
}

describe("semscope web with the hub's flags", () => {
  it("an agent streams with --agent-token, which opens neither /api nor /ui; --max-agents and --allow-origin apply", async () => {
    const hub = await startWeb(["--port", "0", "--no-demo", "--token", "admin-secret", "--agent-token", "agent-secret", "--max-agents", "1", "--allow-origin", "http://localhost:5173"]);
    expect((await fetch(`${hub.url}/`)).status).toBe(200);

    // A real agent with the agent token streams: its semaphores are on /api/state (read with the hub's token).
    const service = forkFixture("service.ts", { HUB_URL: hub.url, SERVICE: "web-agent", INSTANCE: "w-1", INTERVAL_MS: "250", SCENARIOS: "steady:2", SEMSCOPE_TOKEN: "agent-secret" });
    await service.next("connected");
    const state = await until(
      async () => {
        const s = (await (await get(`${hub.url}/api/state`, "admin-secret")).json()) as HubState;
        return s.semaphores.filter((x) => x.service === "web-agent" && x.inUse !== undefined).length === 2 ? s : undefined;
      },
      "the agent's semaphores",
      30_000,
      100,
    );
    expect(state.semaphores.map((x) => x.name).sort()).toEqual(["steady-0", "steady-1"]);

    // The agent token opens neither the API nor a dashboard; the hub's token opens both.
    expect((await get(`${hub.url}/api/state`, "agent-secret")).status).toBe(401);
    expect((await get(`${hub.url}/api/stats`, "agent-secret")).status).toBe(401);
    expect(await uiHandshake(hub.url, "agent-secret")).toBe("unauthorized");
    expect(await uiHandshake(hub.url, "admin-secret")).toBe("connected");

    // --max-agents 1: the hub says so, and a second agent (with a valid token) is refused.
    const stats = (await (await get(`${hub.url}/api/stats`, "admin-secret")).json()) as { admission: { limits: Record<string, number> } };
    expect(stats.admission.limits).toMatchObject({ maxAgents: 1, maxSemaphores: 20_000 });
    const second = await rawAgent(hub.url, { token: "agent-secret" });
    const ack = await second.hello("web-second", { service: "web-agent", instance: "w-2" });
    expect(ack.ok).toBe(false);
    expect(ack.error).toMatch(/agent limit reached/);

    // --allow-origin: that page's origin may read the API with the token, another origin may not.
    expect((await get(`${hub.url}/api/state`, "admin-secret", { Origin: "http://localhost:5173" })).status).toBe(200);
    expect((await get(`${hub.url}/api/state`, "admin-secret", { Origin: "http://localhost:5174" })).status).toBe(403);

    hub.child.kill("SIGTERM");
    expect(await hub.exit).toBe(0);
  }, 120_000);

  it("refuses a bad hub flag or a flag a replay cannot use: one line naming the flag (or variable) given, exit 2", async () => {
    const cases: [string[], RegExp, Record<string, string>?][] = [
      [["--port", "0", "--no-demo", "--agent-token", "a"], /: --agent-token needs --token \(or SEMSCOPE_TOKEN\): without it/],
      [["--port", "0", "--no-demo", "--token", "same", "--agent-token", "same"], /: --agent-token must differ from --token, or/],
      [["--port", "0", "--no-demo", "--max-semaphores-per-address", "100000001"], /: --max-semaphores-per-address must be an integer in 1\.\.100000000, got 100000001$/m],
      [["--port", "0", "--no-demo", "--webhook", "gopher://x"], /: --webhook: only http and https URLs/],
      [["--port", "0", "--no-demo", "--max-semaphores", "0"], /--max-semaphores must be an integer >= 1, got "0"/],
      [["--port", "0", "--replay", "rec.ndjson", "--agent-token", "a", "--max-agents", "3"], /--replay .* takes no agents, .*\(drop --agent-token \/ --max-agents\)/],
      [["--port", "0", "--replay", "rec.ndjson", "--keep-alive-ms", "90000"], /--replay .* serves no \/metrics \(drop --keep-alive-ms\)/],
      [["--port", "0", "--no-demo", "--keep-alive-ms", "10"], /: --keep-alive-ms must be an integer in 1000\.\.3600000, got 10$/m],
      [["--port", "0", "--static", "dir"], /Unknown option '--static'/],
      [["--port", "0", "--no-demo"], /: SEMSCOPE_AGENT_TOKEN needs --token \(or SEMSCOPE_TOKEN\): without it/, { SEMSCOPE_AGENT_TOKEN: "a" }],
    ];
    const runs = cases.map(([args, , env]) => web(args, env));
    const codes = await Promise.all(runs.map((r) => r.exit));
    cases.forEach(([args, message], i) => {
      expect(codes[i], args.join(" ")).toBe(2);
      expect(runs[i].stderr().trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
      expect(runs[i].stderr()).toMatch(/^semscope web: /);
      expect(runs[i].stderr()).toMatch(message);
    });
  }, 120_000);
});

describe("npm start's flags", () => {
  it("are web mode's: the hub's flags reach the hub, and those the desktop app would not apply are named", () => {
    const opts = parseLaunchArgs(["--web", "--port", "7431", "--token", "t", "--agent-token", "a", "--max-semaphores", "50", "--allow-origin", "http://localhost:5173", "--no-demo"]);
    expect(opts.hub).toMatchObject({ port: 7431, token: "t", agentToken: "a", admission: { maxSemaphores: 50 }, allowedOrigins: ["http://localhost:5173"] });
    expect(opts.webOnly).toEqual(["--agent-token", "--max-semaphores", "--allow-origin"]);
    expect(parseLaunchArgs(["--port", "7431", "--token", "t", "--record", "r.ndjson", "--no-demo"]).webOnly).toEqual([]);
  });
});
