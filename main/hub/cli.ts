// `semscope hub [options]` (also `npm run hub --`): the hub without Electron. HUB_OPTIONS are the
// flags it accepts, HUB_USAGE what --help prints of them (a test holds the two together). First
// stdout line: `semscope hub listening on http://<host>:<port>`. Bad arguments: one line on stderr,
// exit 2. SIGINT/SIGTERM: close cleanly, exit 0.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { createHub, type Hub } from "./hub.js";
import { HubConfigError } from "./options.js";

export const HUB_USAGE =
  "usage: semscope hub [-h | --help] [--port <p>] [--host 127.0.0.1] [--token <t>] [--agent-token <t>] [--record <file>] [--static <dir>] [--allow-origin <origin>]... [--alertmanager <url>]... [--webhook <url>]... [--dashboard-url <url>] [--max-agents <n>] [--max-agents-per-address <n>] [--max-semaphores <n>] [--max-semaphores-per-address <n>]";
/** --max-* flag → HubOptions.admission field. */
const CAP_FLAGS = {
  "max-agents": "maxAgents",
  "max-agents-per-address": "maxAgentsPerAddress",
  "max-semaphores": "maxSemaphores",
  "max-semaphores-per-address": "maxSemaphoresPerAddress",
} as const;
/** A close that takes longer than this is abandoned (exit 1) rather than leaving a hung process. */
const CLOSE_TIMEOUT_MS = 5000;

function fail(message: string, code = 2): never {
  process.stderr.write(`semscope hub: ${message.split("\n")[0]}\n`);
  process.exit(code);
}

/** Every flag `semscope hub` accepts (parsed strictly: any other is an error); HUB_USAGE lists each. */
export const HUB_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  token: { type: "string" },
  "agent-token": { type: "string" },
  "max-agents": { type: "string" },
  "max-agents-per-address": { type: "string" },
  "max-semaphores": { type: "string" },
  "max-semaphores-per-address": { type: "string" },
  record: { type: "string" },
  static: { type: "string" },
  "allow-origin": { type: "string", multiple: true },
  alertmanager: { type: "string", multiple: true },
  webhook: { type: "string", multiple: true },
  "dashboard-url": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: HUB_OPTIONS,
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    fail(`${err instanceof Error ? err.message : String(err)} (${HUB_USAGE})`);
  }
}

function portOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) fail(`--port must be an integer 0..65535, got "${text}"`);
  return Number(text);
}

function countOf(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) fail(`--${flag} must be an integer >= 1, got "${text}"`);
  return Number(text);
}

/** A flag, else the environment variable when set and not empty. */
function orEnv(value: string | undefined, name: string): string | undefined {
  const env = process.env[name];
  return value ?? (env !== undefined && env !== "" ? env : undefined);
}

/** `semscope hub <argv>`: starts the hub and keeps it running until SIGINT/SIGTERM. */
export async function runHubCli(argv: string[]): Promise<void> {
  const args = parse(argv);
  if (args.help === true) {
    process.stdout.write(`${HUB_USAGE}\n`);
    return;
  }
  const admission: Record<string, number | undefined> = {};
  for (const [flag, field] of Object.entries(CAP_FLAGS)) admission[field] = countOf(flag, args[flag as keyof typeof CAP_FLAGS]);
  let hub: Hub;
  try {
    hub = await createHub({
      port: portOf(args.port),
      host: args.host,
      token: orEnv(args.token, "SEMSCOPE_TOKEN"),
      agentToken: orEnv(args["agent-token"], "SEMSCOPE_AGENT_TOKEN"),
      admission,
      record: args.record,
      staticDir: args.static,
      allowedOrigins: args["allow-origin"],
      alertForwarding: { alertmanager: args.alertmanager, webhooks: args.webhook, dashboardUrl: args["dashboard-url"] },
    });
  } catch (err) {
    if (err instanceof HubConfigError) fail(err.message);
    const code = (err as { code?: unknown }).code;
    fail(`cannot start: ${err instanceof Error ? err.message : String(err)}${code === "EADDRINUSE" ? " (port in use)" : ""}`, 1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const timer = setTimeout(() => fail(`${signal}: close took over ${CLOSE_TIMEOUT_MS} ms, exiting anyway`, 1), CLOSE_TIMEOUT_MS);
    timer.unref();
    hub.close().then(
      () => process.exit(0),
      (err: unknown) => fail(`close failed: ${err instanceof Error ? err.message : String(err)}`, 1),
    );
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  // Only now: a signal sent on seeing this line finds its handler, not the default that ends the
  // process with the recording unflushed.
  process.stdout.write(`semscope hub listening on ${hub.url}\n`);
}

// Run as a script (tests and benches spawn this file), not when imported: in the bundled semscope
// command every module's import.meta.url is the bundle's, so the file name decides.
if (/[\\/]cli\.[cm]?[jt]s$/.test(process.argv[1] ?? "")) void runHubCli(process.argv.slice(2));
