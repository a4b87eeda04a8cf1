// A real Prometheus for a test: Debian's `prometheus` on a free port with a temporary data folder,
// a config the caller writes, stopped when the process exits. Queries go through its HTTP API.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

export const PROMETHEUS_NOT_INSTALLED = "prometheus not installed: apt-get install prometheus (.ci/run does this)";
const START_TIMEOUT_MS = 30_000;

/** One series of an instant query's result: its labels (with __name__ when it has one) and value. */
export interface PromSeries {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusServer {
  readonly url: string;
  /** An instant query through /api/v1/query; throws on an error answer. */
  query(expr: string): Promise<PromSeries[]>;
  /** The rule groups Prometheus loaded, as /api/v1/rules reports them. */
  ruleNames(): Promise<string[]>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHooked = false;

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Starts prometheus with `config` (YAML text) as its config file, written in a fresh folder that
 * also holds its data; `files` are written beside it (rule files the config names).
 */
export async function startPrometheus(config: string, files: Record<string, string> = {}): Promise<PrometheusServer> {
  const probe = spawnSync("prometheus", ["--version"], { encoding: "utf8" });
  if (probe.error !== undefined || probe.status !== 0) throw new Error(PROMETHEUS_NOT_INSTALLED);
  if (!exitHooked) {
    exitHooked = true;
    process.on("exit", () => {
      for (const c of running) c.kill("SIGKILL");
    });
  }
  const dir = mkdtempSync(join(tmpdir(), "semscope-prometheus-"));
  writeFileSync(join(dir, "prometheus.yml"), config);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  running.add(child);
  child.once("exit", () => running.delete(child));
  let out = "";
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-4000));
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const stop = async () => {
    child.kill("SIGTERM");
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const end = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}) on port ${port}: ${out}`);
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > end) {
      await stop();
      throw new Error(`prometheus was not ready on port ${port} within ${START_TIMEOUT_MS} ms: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    query: async (expr) => {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    ruleNames: async () => {
      const data = await api<{ groups: { rules: { name: string }[] }[] }>("/api/v1/rules");
      return data.groups.flatMap((g) => g.rules.map((r) => r.name));
    },
    stop,
  };
}
