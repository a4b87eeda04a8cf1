// A real Prometheus for a test: Debian's `prometheus` on a free port with a temporary data folder
// and a config the caller writes (http-daemon.ts). Queries go through its HTTP API.
import { join } from "node:path";
import { startHttpDaemon } from "./http-daemon.js";

/** One series of an instant query's result: its labels (with __name__ when it has one) and value. */
export interface PromSeries {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusServer {
  readonly url: string;
  /** An instant query through /api/v1/query; throws on an error answer. */
  query(expr: string): Promise<PromSeries[]>;
  /** The names of the rules Prometheus loaded, as /api/v1/rules reports them. */
  ruleNames(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Starts prometheus with `config` (YAML) as its config file; `files` are written beside it (rule files it names). */
export async function startPrometheus(config: string, files: Record<string, string> = {}): Promise<PrometheusServer> {
  const d = await startHttpDaemon({
    command: "prometheus",
    debianPackage: "prometheus",
    readyPath: "/-/ready",
    files: () => ({ "prometheus.yml": config, ...files }),
    args: (port, dir) => [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
  });
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${d.url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url: d.url,
    query: async (expr) => {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    ruleNames: async () => {
      const data = await api<{ groups: { rules: { name: string }[] }[] }>("/api/v1/rules");
      return data.groups.flatMap((g) => g.rules.map((r) => r.name));
    },
    stop: d.stop,
  };
}
