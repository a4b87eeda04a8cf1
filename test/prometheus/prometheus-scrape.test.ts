// A real Prometheus scraping real Semscope processes with the shipped config and rules
// (docs/prometheus/): a service's own agent endpoint and its hub give the same series, the rules
// load and record from them, two hubs each holding a slice of a fleet sum to the whole, and the
// hub's gzip'd /metrics (what Prometheus asks for) gives exactly the series of its plain text.
import { readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startPrometheus, type PrometheusServer, type PromSeries } from "../../scripts/support/prometheus.js";
import { cleanupAll, forkChild, onCleanup, startHubCli, until } from "../e2e/stream/harness.js";

const docs = (name: string) => readFileSync(fileURLToPath(new URL(`../../docs/prometheus/${name}`, import.meta.url)), "utf8");
const FIXTURE = fileURLToPath(new URL("./fixtures/metrics-service.ts", import.meta.url));
const DEADLINE_MS = 30_000;

interface GrafanaDashboard {
  panels: { type: string; title: string; targets?: { expr: string }[] }[];
  templating: { list: { query?: string | { query: string } }[] };
  annotations: { list: { expr: string }[] };
}

type Ready = { type: "ready"; metricsPort: number; held: number };

async function startService(hubUrl: string, service: string, instance: string, cap: number, hold: number): Promise<number> {
  const c = forkChild<Ready>(FIXTURE, { HUB_URL: hubUrl, SERVICE: service, INSTANCE: instance, CAP: String(cap), HOLD: String(hold) });
  const ready = await c.next("ready");
  expect(ready.held).toBe(hold);
  return ready.metricsPort;
}

/** The shipped prometheus.yml with its targets replaced and its intervals shortened for a test. */
function config(hubs: number[], agents: number[]): string {
  const targets = (ports: number[]) => `targets: [${ports.map((p) => `"127.0.0.1:${p}"`).join(", ")}]`;
  const shipped = docs("prometheus.yml");
  const [hubJob, agentJob] = shipped.split("job_name: semscope-agents");
  expect(agentJob).toBeDefined();
  const out = `${hubJob.replace(/targets: \[[^\]]*\]/, targets(hubs))}job_name: semscope-agents${agentJob.replace(/targets: \[[^\]]*\]/, targets(agents))}`
    .replace(/scrape_interval: 15s/, "scrape_interval: 1s")
    .replace(/evaluation_interval: 15s/, "evaluation_interval: 1s");
  expect(out).toContain("honor_labels: true");
  return out;
}

async function startScraper(hubs: number[], agents: number[]): Promise<PrometheusServer> {
  const prom = await startPrometheus(config(hubs, agents), { "semscope.rules.yml": docs("semscope.rules.yml") });
  onCleanup(() => prom.stop());
  return prom;
}

/** Polls a query until `accept` takes its result (Prometheus needs a scrape or two first). */
function queryUntil(prom: PrometheusServer, expr: string, accept: (r: PromSeries[]) => boolean): Promise<PromSeries[]> {
  return until(
    async () => {
      const r = await prom.query(expr);
      return accept(r) ? r : undefined;
    },
    `prometheus: ${expr}`,
    DEADLINE_MS,
    250,
  );
}

const only = (r: PromSeries[]) => (r.length === 1 ? r[0].value : undefined);

afterEach(cleanupAll);

interface Exchange {
  readonly acceptEncoding: string | undefined;
  readonly contentEncoding: string | undefined;
  bytes: number;
}

/** An HTTP proxy to the hub on `port` that notes each exchange: what was asked, what came, the bytes on the wire. */
async function watchedProxy(port: number): Promise<{ port: number; exchanges: Exchange[] }> {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const up = request({ host: "127.0.0.1", port, path: req.url, method: req.method, headers: req.headers }, (hubRes) => {
      const x: Exchange = { acceptEncoding: req.headers["accept-encoding"], contentEncoding: hubRes.headers["content-encoding"], bytes: 0 };
      exchanges.push(x);
      res.writeHead(hubRes.statusCode ?? 502, hubRes.headers);
      hubRes.on("data", (b: Buffer) => (x.bytes += b.length));
      hubRes.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  onCleanup(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { port: (server.address() as AddressInfo).port, exchanges };
}

/** Each series of an exposition as `name{label="value",...}` with its labels sorted (values as written, escaped). */
function seriesOf(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(l);
      if (m === null) throw new Error(`not a series line: ${l}`);
      const labels = [...(m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}="${v}"`);
      return `${m[1]}{${labels.sort().join(",")}}`;
    })
    .sort();
}

/** A Prometheus series as seriesOf writes it, without the labels the scrape added (job, and instance when it is the target). */
function promSeries(s: PromSeries, target: string): string {
  const escape = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
  const labels = Object.entries(s.metric)
    .filter(([k, v]) => k !== "__name__" && k !== "job" && !(k === "instance" && v === target))
    .map(([k, v]) => `${k}="${escape(v)}"`);
  return `${s.metric.__name__}{${labels.sort().join(",")}}`;
}

describe("Prometheus scraping Semscope with the shipped config and rules", () => {
  it("reads the same semaphore from its agent and its hub, loads every rule, records one series from both, and the dashboard asks for nothing else", async () => {
    const hub = await startHubCli(0);
    const metricsPort = await startService(hub.url, "shop", "a", 5, 2);
    const prom = await startScraper([hub.port], [metricsPort]);

    const sel = 'service="shop",instance="a",semaphore="db"';
    for (const job of ["semscope-agents", "semscope-hubs"]) {
      const r = await queryUntil(prom, `semscope_semaphore_in_use{job="${job}",${sel}}`, (x) => only(x) === 2);
      expect(r[0].metric.instance).toBe("a");
      const cap = await queryUntil(prom, `semscope_semaphore_cap{job="${job}",${sel}}`, (x) => x.length === 1);
      expect(cap[0].value).toBe(5);
    }
    // The recording rules fold both sources into one series per semaphore, and find the books balanced.
    await queryUntil(prom, `semscope:in_use{${sel}}`, (x) => only(x) === 2);
    await queryUntil(prom, `semscope:unaccounted_permits{${sel}}`, (x) => only(x) === 0);
    await queryUntil(prom, `semscope_hub_agent_up{service="shop",instance="a"}`, (x) => only(x) === 1);
    await queryUntil(prom, `up{job="semscope-agents"}`, (x) => only(x) === 1);

    const shipped = [...docs("semscope.rules.yml").matchAll(/^\s*- (?:record|alert): (\S+)$/gm)].map((m) => m[1]);
    const loaded = await prom.ruleNames();
    expect(loaded.sort()).toEqual(shipped.sort());
    expect(await prom.query('ALERTS{alertname="leak"}')).toEqual([]);

    // The Grafana dashboard asks only for what exists: families the hub and the agent define
    // (with a histogram's series), the rules' records, and Prometheus's own `up` and `ALERTS`.
    const defined = new Set(["up", "ALERTS", ...shipped]);
    for (const text of [await (await fetch(`${hub.url}/metrics`)).text(), await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()]) {
      for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        defined.add(name);
        if (type === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) defined.add(name + suffix);
      }
    }
    const dashboard = JSON.parse(docs("grafana-dashboard.json")) as GrafanaDashboard;
    const queries = [
      ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
      ...dashboard.templating.list.flatMap((v) => (typeof v.query === "object" ? [v.query.query] : [])),
      ...dashboard.annotations.list.map((a) => a.expr),
    ];
    expect(queries.length).toBeGreaterThan(20);
    const used = new Set(queries.flatMap((q) => [...q.matchAll(/\b(semscope[_:][A-Za-z0-9_:]*|up|ALERTS)\b/g)].map((m) => m[1])));
    expect([...used].filter((name) => !defined.has(name))).toEqual([]);
    // One row per rule's signal.
    const rows = dashboard.panels.filter((p) => p.type === "row").map((p) => p.title);
    for (const rule of ["leak", "convoy", "saturated", "timeouts", "double_release", "over_budget", "agent_down"]) {
      expect(rows.some((r) => r.includes(rule)), `a row for ${rule}`).toBe(true);
    }
  });

  it("scrapes the hub gzip'd, in a fraction of the bytes, and holds exactly the series of its plain text", async () => {
    const hub = await startHubCli(0);
    await startService(hub.url, "shop", "a", 5, 2);
    await startService(hub.url, 'odd "shop"\\', "b\nc", 3, 1);
    const proxy = await watchedProxy(hub.port);
    const prom = await startScraper([proxy.port], []);
    const target = `127.0.0.1:${proxy.port}`;
    await queryUntil(prom, 'semscope_semaphore_in_use{service="shop",instance="a",semaphore="db"}', (x) => only(x) === 2);
    // The scrape's series and the hub's plain text agree once both are of the same moment (a
    // series comes and goes with what the latest sample counted).
    const same = await until(
      async () => {
        const scraped = (await prom.query('{job="semscope-hubs"}')).filter((s) => s.metric.__name__.startsWith("semscope_")).map((s) => promSeries(s, target)).sort();
        const plain = seriesOf(await (await fetch(`${hub.url}/metrics`, { headers: { "accept-encoding": "identity" } })).text());
        return scraped.join("\n") === plain.join("\n") ? scraped : undefined;
      },
      "Prometheus' series and the plain text to agree",
      DEADLINE_MS,
      500,
    );
    expect(same.length).toBeGreaterThan(40);
    expect(same).toContain('semscope_semaphore_in_use{instance="b\\nc",semaphore="db",service="odd \\"shop\\"\\\\"}');
    // Every scrape asked for gzip and got it.
    const scrapes = proxy.exchanges.filter((x) => x.acceptEncoding !== undefined);
    expect(scrapes.length).toBeGreaterThan(0);
    expect(scrapes.every((x) => /\bgzip\b/.test(x.acceptEncoding ?? "") && x.contentEncoding === "gzip")).toBe(true);
    const plainBytes = Buffer.byteLength(await (await fetch(`${hub.url}/metrics`, { headers: { "accept-encoding": "identity" } })).text());
    expect(Math.max(...scrapes.map((x) => x.bytes))).toBeLessThan(plainBytes / 3);
  });

  it("sums a fleet split across two hubs into one fleet-wide figure", async () => {
    const [hubA, hubB] = await Promise.all([startHubCli(0), startHubCli(0)]);
    await Promise.all([
      startService(hubA.url, "billing", "r1", 5, 2),
      startService(hubA.url, "billing", "r2", 5, 3),
      startService(hubB.url, "billing", "r3", 5, 4),
    ]);
    const prom = await startScraper([hubA.port, hubB.port], []);

    // Each hub sees only its slice...
    const slices = await queryUntil(prom, 'semscope_fleet_in_use{service="billing",semaphore="db"}', (x) => x.length === 2 && x.every((s) => s.value > 0));
    expect(slices.map((s) => s.value).sort()).toEqual([4, 5]);
    // ...and the fleet-wide queries add the slices up: 2 + 3 + 4 held, 3 × 5 admitted.
    await queryUntil(prom, 'semscope:fleet_in_use{service="billing",semaphore="db"}', (x) => only(x) === 9);
    await queryUntil(prom, 'semscope:fleet_cap{service="billing",semaphore="db"}', (x) => only(x) === 15);
    const perInstance = await queryUntil(prom, 'sum by (service) (semscope_semaphore_in_use{service="billing"})', (x) => only(x) === 9);
    expect(perInstance[0].metric.service).toBe("billing");
  });
});
