// The headless hub as a process: `node --import tsx main/hub/cli.ts`, its first stdout line,
// clean exits on SIGTERM/SIGINT with the recording flushed, and exit 2 on bad arguments.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { io } from "socket.io-client";

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

function startCli(args: string[], env: Record<string, string> = {}): { child: ChildProcessWithoutNullStreams; firstLine: Promise<string>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", "main/hub/cli.ts", ...args], { env: { ...process.env, ...env } });
  children.push(child);
  const firstLine = new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`exited ${code}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, firstLine, exit };
}

function runCli(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "main/hub/cli.ts", ...args], { env: { ...process.env, SEMSCOPE_TOKEN: "", SEMSCOPE_AGENT_TOKEN: "", ...env } });
    children.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("npm run hub", () => {
  it("prints its address first and exits 0 on SIGTERM, the recording flushed", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "semscope-cli-")), "rec.ndjson");
    const { child, firstLine, exit } = startCli(["--port", "0", "--record", file]);
    const line = await firstLine;
    expect(line).toMatch(/^semscope hub listening on http:\/\/127\.0\.0\.1:\d+$/);
    const url = line.slice("semscope hub listening on ".length);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ ok: true });

    // An agent connected at shutdown: its disconnect is the last thing recorded.
    const s = io(`${url}/agent`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
    const ack = (await s.timeout(5000).emitWithAck("hello", {
      agentId: "cli-agent", service: "svc", instance: "i1", pid: 1, host: "h", runtime: "node", agentVersion: "0", startedAt: 1,
    })) as { ok: boolean };
    expect(ack.ok).toBe(true);
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
    s.disconnect();
    const kinds = readFileSync(file, "utf8").trimEnd().split("\n").map((l) => (JSON.parse(l) as { k: string }).k);
    expect(kinds[0]).toBe("start");
    expect(kinds).toContain("hello");
    expect(kinds.at(-1)).toBe("disconnect");
  });

  it("exits 0 on SIGINT and takes the token from SEMSCOPE_TOKEN", async () => {
    const { child, firstLine, exit } = startCli(["--port", "0"], { SEMSCOPE_TOKEN: "envtok" });
    const url = (await firstLine).slice("semscope hub listening on ".length);
    expect((await fetch(`${url}/api/state`)).status).toBe(401);
    expect((await fetch(`${url}/api/state`, { headers: { Authorization: "Bearer envtok" } })).status).toBe(200);
    child.kill("SIGINT");
    expect(await exit).toBe(0);
  });

  it("takes the agent token and the caps from flags: the agent token opens /agent and not the API", async () => {
    const { child, firstLine, exit } = startCli(["--port", "0", "--token", "t", "--agent-token", "a", "--max-agents", "7", "--max-pending-agents-per-address", "9", "--hello-timeout-ms", "4000"]);
    const url = (await firstLine).slice("semscope hub listening on ".length);
    expect((await fetch(`${url}/api/state`, { headers: { Authorization: "Bearer a" } })).status).toBe(401);
    const state = (await (await fetch(`${url}/api/state`, { headers: { Authorization: "Bearer t" } })).json()) as { hub: { admission: { limits: Record<string, number> } } };
    expect(state.hub.admission.limits).toMatchObject({ maxAgents: 7, maxPendingAgentsPerAddress: 9, helloTimeoutMs: 4000 });
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  it("takes the dashboard caps from flags: a cap set low refuses the next dashboard with its reason", async () => {
    const { child, firstLine, exit } = startCli(["--port", "0", "--max-dashboards-per-address", "1", "--max-dashboards", "2", "--dashboard-handshake-burst", "9"]);
    const url = (await firstLine).slice("semscope hub listening on ".length);
    const sockets: ReturnType<typeof io>[] = [];
    const dashboard = (from: string) => {
      const s = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 }, localAddress: from } as object);
      sockets.push(s);
      return new Promise<string>((resolve) => {
        s.once("connect", () => resolve("connected"));
        s.once("connect_error", (err) => resolve(err.message));
      });
    };
    expect(await dashboard("127.0.0.1")).toBe("connected");
    expect(await dashboard("127.0.0.1")).toBe("too many dashboards from this address (at most 1)");
    expect(await dashboard("127.0.0.2")).toBe("connected");
    expect(await dashboard("127.0.0.3")).toBe("too many dashboards connected to this hub (at most 2)");
    for (const s of sockets) s.disconnect();
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  it("exits 2 with one line on stderr for bad arguments, naming the flags (or environment variables) that were set", async () => {
    const cases: [string[], RegExp, Record<string, string>?][] = [
      [["--port", "abc"], /--port must be an integer/],
      [["--bogus"], /Unknown option '--bogus'/],
      [["extra"], /positional/i],
      [["--port", "0", "--host", "0.0.0.0"], /refusing to listen on 0\.0\.0\.0 without a token: anything but loopback needs --token \(or SEMSCOPE_TOKEN\)$/m],
      [["--port", "0", "--host", ""], /: --host must be a non-empty string$/m],
      [["--port", "0", "--token", "x".repeat(300)], /: --token must be at most 256 characters/],
      [["--port", "0", "--token", ""], /: --token must be a non-empty string$/m],
      [["--port", "0", "--agent-token", "a"], /: --agent-token needs --token \(or SEMSCOPE_TOKEN\): without it/],
      [["--port", "0", "--token", "same", "--agent-token", "same"], /: --agent-token must differ from --token, or/],
      [["--port", "0"], /: SEMSCOPE_AGENT_TOKEN needs --token \(or SEMSCOPE_TOKEN\)/, { SEMSCOPE_AGENT_TOKEN: "a" }],
      [["--port", "0", "--agent-token", "same"], /: --agent-token must differ from SEMSCOPE_TOKEN, or/, { SEMSCOPE_TOKEN: "same" }],
      [["--port", "0", "--token", "same"], /: SEMSCOPE_AGENT_TOKEN must differ from --token, or/, { SEMSCOPE_AGENT_TOKEN: "same" }],
      [["--port", "0", "--max-semaphores", "0"], /--max-semaphores must be an integer >= 1, got "0"/],
      [["--port", "0", "--max-agents", "200000000"], /: --max-agents must be an integer in 1\.\.100000000, got 200000000$/m],
      [["--port", "0", "--max-agents-per-address", "x"], /--max-agents-per-address must be an integer >= 1/],
      [["--port", "0", "--hello-timeout-ms", "0"], /--hello-timeout-ms must be an integer >= 1/],
      [["--port", "0", "--max-dashboards", "0"], /--max-dashboards must be an integer >= 1, got "0"/],
      [["--port", "0", "--dashboard-handshakes-per-second-per-address", "20000"], /: --dashboard-handshakes-per-second-per-address must be an integer in 1\.\.10000, got 20000$/m],
      [["--port", "0", "--webhook", "not a url"], /: --webhook: not a URL: "not a url"$/m],
      [["--port", "0", "--alertmanager", "ftp://am"], /: --alertmanager: only http and https URLs/],
      [["--port", "0", "--dashboard-url", "nope"], /: --dashboard-url: not a URL/],
      [["--port", "0", "--keep-alive-ms", "5s"], /--keep-alive-ms must be an integer >= 1, got "5s"/],
      [["--port", "0", "--keep-alive-ms", "500"], /: --keep-alive-ms must be an integer in 1000\.\.3600000, got 500$/m],
    ];
    const results = await Promise.all(cases.map(([args, , env]) => runCli(args, env)));
    cases.forEach(([args, message], i) => {
      const r = results[i];
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/^semscope hub: /);
      // The user typed flags: no createHub field (agentToken, admission.maxAgents, dashboardUrl) in sight.
      expect(r.stderr, args.join(" ")).not.toMatch(/agentToken|admission\.|dashboardUrl|[^-]\btoken needs|from token\b/);
    });
  }, 120_000);
});
