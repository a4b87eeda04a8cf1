// A real Alertmanager for a test: Debian's `prometheus-alertmanager` on a free port with a
// temporary folder, no clustering, every alert routed to a receiver that sends nothing on.
import { join } from "node:path";
import { startHttpDaemon, type HttpDaemon } from "./http-daemon.js";

const CONFIG = `route:
  receiver: keep
  group_wait: 1s
  group_interval: 1s
receivers:
  - name: keep
`;

/** An alert as GET /api/v2/alerts returns it (the fields a test reads). */
export interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
  status: { state: "active" | "suppressed" | "unprocessed" };
}

export interface AlertmanagerServer extends HttpDaemon {
  /** GET /api/v2/alerts: the alerts it holds that have not ended. */
  alerts(): Promise<AmAlert[]>;
}

export async function startAlertmanager(): Promise<AlertmanagerServer> {
  const d = await startHttpDaemon({
    command: "prometheus-alertmanager",
    debianPackage: "prometheus-alertmanager",
    readyPath: "/-/ready",
    files: () => ({ "alertmanager.yml": CONFIG }),
    args: (port, dir) => [
      `--config.file=${join(dir, "alertmanager.yml")}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
      "--log.level=warn",
    ],
  });
  return Object.assign(d, {
    alerts: async () => {
      const res = await fetch(`${d.url}/api/v2/alerts`);
      if (!res.ok) throw new Error(`GET /api/v2/alerts: HTTP ${res.status}`);
      return (await res.json()) as AmAlert[];
    },
  });
}
