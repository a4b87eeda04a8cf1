// Entry point of `npm run bench:hub`: for each server (the real hub, then the bare baseline, in
// ABBA rounds) start it in a child, drive it from simulator children, measure a window, report.
// Progress goes to stderr; stdout is the report, ending with one JSON line.
import { spawnChild as spawn, type Child } from "./child.js";
import { HUB_NODE_FLAGS } from "../../main/hub/node-flags.js";
import { loadConfig } from "./config.js";
import { fairness } from "./fairness.js";
import { capFlood, capFloodLines } from "./cap-flood.js";
import { metricsScrape, metricsScrapeLines } from "./metrics-scrape.js";
import { nameFlood } from "./name-flood.js";
import { parseCost } from "./parse-cost.js";
import { uiSiege } from "./ui-siege.js";
import type { ChildMessage, ServerReport, SimReport } from "./messages.js";
import { environmentLine, report, type RunResult } from "./report.js";

const config = loadConfig();
const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const spawnChild = (file: string, env: Record<string, string>, execArgv: string[] = [], nice = 0): Child<ChildMessage> =>
  spawn<ChildMessage>(file, env, execArgv, nice);

async function runOnce(kind: "hub" | "bare", round: number, hourToo: boolean): Promise<RunResult> {
  const total = config.agents * config.semaphoresPerAgent;
  // BENCH_CPU_PROF=<dir>: a V8 CPU profile of each server child over its measured window only
  // (not start-up, connecting or the hour of history), as <dir>/<kind>-<round>.cpuprofile.
  const prof = process.env.BENCH_CPU_PROF;
  const profEnv: Record<string, string> = prof === undefined || prof === "" ? {} : { BENCH_PROFILE_FILE: `${prof}/${kind}-${round + 1}.cpuprofile` };
  // BENCH_SERVER_NODE_ARGS: more node flags for the server children (e.g. "--trace-gc").
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  // Both servers under the node flags the hub ships with, so the baseline runs as configured as the hub.
  const server = spawnChild(`./server-${kind}.ts`, { BENCH_TOTAL_SEMAPHORES: String(total), ...profEnv }, ["--expose-gc", ...HUB_NODE_FLAGS, ...extra]);
  const { url } = await server.next("listening", 60_000);
  server.send("report");
  const idle = (await server.next("report", 30_000)) as ServerReport;
  const sims: Child<ChildMessage>[] = [];
  const per = Math.ceil(config.agents / config.simulators);
  for (let i = 0; i < config.simulators; i++) {
    const agents = Math.min(per, config.agents - i * per);
    if (agents <= 0) break;
    sims.push(spawnChild("./simulator.ts", {
      BENCH_URL: url, BENCH_SIM_AGENTS: String(agents), BENCH_SIM_FIRST: String(i * per),
      BENCH_SEMAPHORES: String(config.semaphoresPerAgent), BENCH_INTERVAL_MS: String(config.intervalMs),
    }, [], config.simulatorNice));
  }
  const t0 = performance.now();
  const ready = await Promise.all(sims.map((s) => s.next("ready", 180_000)));
  log(`  ${kind} #${round + 1}: ${ready.reduce((n, r) => n + r.connected, 0)} agents connected in ${((performance.now() - t0) / 1000).toFixed(1)} s; warming up`);
  await sleep(kind === "bare" ? config.bareWarmupMs : config.warmupMs);
  server.send("mark");
  for (const s of sims) s.send("mark");
  await sleep(config.measureMs);
  server.send("report");
  for (const s of sims) s.send("report");
  const [srv, ...simReports] = await Promise.all([server.next("report", 60_000), ...sims.map((s) => s.next("sim", 60_000))]);
  let hour: RunResult["hour"];
  if (hourToo) {
    server.send("hour");
    hour = await server.next("hour", 600_000);
  }
  await Promise.all(sims.map((s) => s.stop()));
  await server.stop();
  const items = (simReports as SimReport[]).reduce((n, s) => n + s.itemsAcked, 0);
  log(`  ${kind} #${round + 1}: ${items} samples acked in ${(config.measureMs / 1000).toFixed(0)} s, server cpu ${((srv as ServerReport).cpuUs / 1000).toFixed(0)} ms`);
  return { kind, round, server: srv as ServerReport, idle, sims: simReports as SimReport[], hour };
}

log(`bench:hub: ${environmentLine(config)}`);
const runs: RunResult[] = [];
for (let round = 0; round < config.rounds; round++) {
  const order: ("hub" | "bare")[] = round % 2 === 0 ? ["hub", "bare"] : ["bare", "hub"];
  for (const kind of order) runs.push(await runOnce(kind, round, kind === "hub" && round === 0));
}
log("  fairness: a real agent's acks, quiet and then under a hostile flood");
const fair = await fairness(config, log);
const parse = parseCost();
log("  name flood: hub memory after floods of new names, default caps and caps lifted");
const flood = await nameFlood(log, config.quick ? 1 : 3, config.quick ? 12 : 20);
log("  flood to the caps: hub memory after new names from four addresses, default caps and caps lifted");
const toCaps = await capFlood(log, config.quick ? 400 : undefined);
log("  /metrics: render and the event loop at 10,000 semaphores, then four scrapers beside an honest agent");
const scraped = await metricsScrape(log, config.quick ? 2000 : undefined, config.quick ? 3000 : undefined, config.quick ? 1 : undefined);
const uiRounds = Number(process.env.BENCH_UI_SIEGE_ROUNDS ?? (config.quick ? 1 : 3));
log("  /ui siege: a real agent's acks and the hub's loop while 100 dashboards ask for snapshots (10,000 semaphores)");
const siege = await uiSiege(config, log, uiRounds);
process.stdout.write(`${[...capFloodLines(toCaps), ...metricsScrapeLines(scraped)].join("\n")}\n\n`);
process.stdout.write(`${report(config, runs, fair, parse, flood, siege)}\n`);
process.exit(0);
