// Entry point of `npm run bench:hub`: for each server (the real hub, then the bare baseline, in
// ABBA rounds) start it in a child, drive it from simulator children, measure a window, report.
// Progress goes to stderr; stdout is the report, ending with one JSON line.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConfig } from "./config.js";
import type { ChildMessage, ServerReport, SimReport } from "./messages.js";
import { environmentLine, report, type RunResult } from "./report.js";

const config = loadConfig();
const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

interface Child {
  send(cmd: string): void;
  next<T extends ChildMessage["type"]>(type: T, timeoutMs: number): Promise<Extract<ChildMessage, { type: T }>>;
  stop(): Promise<void>;
}

function spawnChild(file: string, env: Record<string, string>, execArgv: string[] = []): Child {
  const proc = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
    execArgv: [...execArgv, "--import", "tsx"],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  children.add(proc);
  const inbox: ChildMessage[] = [];
  const waiting: (() => void)[] = [];
  proc.on("message", (m) => {
    inbox.push(m as ChildMessage);
    for (const w of waiting.splice(0)) w();
  });
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  return {
    send: (cmd) => proc.send({ cmd }),
    next: (type, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${file}: no "${type}" within ${timeoutMs} ms`)), timeoutMs);
        const look = () => {
          const i = inbox.findIndex((m) => m.type === type);
          if (i < 0) return void waiting.push(look);
          clearTimeout(timer);
          resolve(inbox.splice(i, 1)[0] as never);
        };
        proc.once("exit", () => reject(new Error(`${file} exited before "${type}"`)));
        look();
      }),
    stop: async () => {
      if (proc.connected) proc.disconnect();
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
      children.delete(proc);
    },
  };
}

async function runOnce(kind: "hub" | "bare", round: number, hourToo: boolean): Promise<RunResult> {
  const total = config.agents * config.semaphoresPerAgent;
  const server = spawnChild(`./server-${kind}.ts`, { BENCH_TOTAL_SEMAPHORES: String(total) }, ["--expose-gc"]);
  const { url } = await server.next("listening", 60_000);
  server.send("report");
  const idle = (await server.next("report", 30_000)) as ServerReport;
  const sims: Child[] = [];
  const per = Math.ceil(config.agents / config.simulators);
  for (let i = 0; i < config.simulators; i++) {
    const agents = Math.min(per, config.agents - i * per);
    if (agents <= 0) break;
    sims.push(spawnChild("./simulator.ts", {
      BENCH_URL: url, BENCH_SIM_AGENTS: String(agents), BENCH_SIM_FIRST: String(i * per),
      BENCH_SEMAPHORES: String(config.semaphoresPerAgent), BENCH_INTERVAL_MS: String(config.intervalMs),
    }));
  }
  const t0 = performance.now();
  const ready = await Promise.all(sims.map((s) => s.next("ready", 180_000)));
  log(`  ${kind} #${round + 1}: ${ready.reduce((n, r) => n + r.connected, 0)} agents connected in ${((performance.now() - t0) / 1000).toFixed(1)} s; warming up`);
  await sleep(config.warmupMs);
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
process.stdout.write(`${report(config, runs)}\n`);
process.exit(0);
