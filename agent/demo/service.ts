// One demo process = one service instance that embeds the real agent:
//   node --import tsx agent/demo/service.ts --service <name> --instance <name> \
//     --scenarios a,b,c --url <hub> [--speed 1] [--interval-ms 1000]
// The token, if the hub wants one, comes from SEMSCOPE_TOKEN (kept out of argv and `ps`).
// SIGTERM/SIGINT, or the launcher going away (IPC disconnect), stop the scenarios, close the
// agent (it flushes within 2 s) and exit 0. Bad arguments: one line on stderr, exit 2.
import { parseArgs } from "node:util";
import { connect, type Agent } from "../src/index.js";
import { isScenario, SCENARIOS } from "./scenarios/index.js";
import { Timers, type HubLink, type Scenario } from "./runtime.js";

const USAGE = "usage: service.ts --service <name> --instance <name> --scenarios a,b,c --url <hub> [--speed <x>] [--interval-ms <ms>]";
/** A shutdown that takes longer than this (agent.close() gives up at 2 s) exits anyway. */
const SHUTDOWN_TIMEOUT_MS = 4000;

function fail(message: string): never {
  process.stderr.write(`semscope demo: ${message}\n`);
  process.exit(2);
}

function parse(): { service: string; instance: string; scenarios: string[]; url: string; speed: number; intervalMs: number | undefined } {
  let v;
  try {
    v = parseArgs({
      options: {
        service: { type: "string" },
        instance: { type: "string" },
        scenarios: { type: "string" },
        url: { type: "string" },
        speed: { type: "string" },
        "interval-ms": { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    fail(`${err instanceof Error ? err.message : String(err)} (${USAGE})`);
  }
  if (v.service === undefined || v.instance === undefined || v.scenarios === undefined || v.url === undefined) fail(`missing an argument (${USAGE})`);
  const scenarios = v.scenarios.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const unknown = scenarios.filter((s) => !isScenario(s));
  if (scenarios.length === 0 || unknown.length > 0) fail(`unknown scenario ${JSON.stringify(unknown[0] ?? "")}; known: ${Object.keys(SCENARIOS).join(", ")}`);
  const speed = v.speed === undefined ? 1 : Number(v.speed);
  if (!Number.isFinite(speed) || speed <= 0 || speed > 100) fail(`--speed must be a number in (0, 100], got ${JSON.stringify(v.speed)}`);
  const intervalMs = v["interval-ms"] === undefined ? undefined : Number(v["interval-ms"]);
  if (intervalMs !== undefined && !(Number.isFinite(intervalMs) && intervalMs >= 10)) fail(`--interval-ms must be ≥ 10, got ${JSON.stringify(v["interval-ms"])}`);
  return { service: v.service, instance: v.instance, scenarios, url: v.url, speed, intervalMs };
}

function main(): void {
  const args = parse();
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const connectOptions = { url: args.url, service: args.service, instance: args.instance, intervalMs: args.intervalMs };
  let agent: Agent | undefined;
  let stopping = false;
  try {
    agent = connect(connectOptions);
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }

  const hub: HubLink = {
    disconnect: async () => {
      const a = agent;
      agent = undefined;
      await a?.close();
    },
    reconnect: () => {
      if (agent === undefined && !stopping) agent = connect(connectOptions);
    },
  };

  const running: Scenario[] = [];
  for (const name of args.scenarios) {
    running.push(SCENARIOS[name]({ speed: args.speed, log: (line) => log(`[${name}] ${line}`), timers: new Timers(), hub }));
  }

  const shutdown = (why: string): void => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(1), SHUTDOWN_TIMEOUT_MS);
    force.unref();
    for (const s of running) s.stop();
    void (agent?.close() ?? Promise.resolve()).then(() => {
      if (why !== "disconnect") log(`stopped (${why})`);
      process.exit(0);
    });
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
  // Started by the launcher: when it goes (even killed), the IPC channel closes and so do we.
  if (process.send !== undefined) process.once("disconnect", () => shutdown("disconnect"));
}

main();
