#!/usr/bin/env node
// `semscope`: the command the npm package installs (bundled into dist/cli/semscope.js by
// `npm run build:cli`), and what `npm run hub`, `npm run web` and `npm run replay` call from the
// sources. Each subcommand keeps the flags and output lines it had as an npm script. The hub and
// the web mode are imported only once the process runs with the hub's flags (a relaunching parent
// stays small).
import { spawn } from "node:child_process";
import { HUB_NODE_FLAGS } from "../main/hub/node-flags.js";

/** What `semscope --help` prints: each command with its flags (from the tables its parser takes). */
async function usage(): Promise<string> {
  const [{ usageLines }, { HUB_USAGE_FLAGS }, { WEB_USAGE_FLAGS }] = await Promise.all([
    import("../main/hub/hub-flags.js"),
    import("../main/hub/cli.js"),
    import("./launch-options.js"),
  ]);
  return `usage: semscope <command> [options]

${usageLines("  semscope hub", HUB_USAGE_FLAGS)}
      the headless hub: agents stream to it; dashboards and tools read it (HTTP API, /ui)
${usageLines("  semscope web", WEB_USAGE_FLAGS)}
      the hub with the dashboard at / and a built-in demo fleet (--no-demo: only real agents);
      --replay serves a recording to the dashboard instead of a live hub
  semscope replay <recording.ndjson | recording.ndjson.gz> [--json] [--max-line-mb <n>] [--max-text-mb <n>]
      replays a recording and prints the alerts it raises (stopping at a line over 12 MiB or text
      over 1024 MiB unless raised)
  semscope --help | --version
  semscope <command> --help: that command's usage

SEMSCOPE_TOKEN is read when --token is not given (SEMSCOPE_AGENT_TOKEN when --agent-token is not:
a token that opens /agent only, so an agent's token cannot open the dashboard). Without a token the
hub listens on loopback only: any other --host needs --token. With one, the API, /metrics and
dashboards need it; /healthz and the dashboard's files do not. Port 0 picks a free port.
--alertmanager and --webhook (repeatable) send every alert change there (docs/integrations.md).`;
}

/**
 * The hub's V8 flags (main/hub/node-flags.ts) are read when the heap is made, so a process that
 * was not started with them (the installed command under plain node) runs itself again with
 * them, passing signals on and exiting as the child does. True when it did.
 */
function relaunchedWithHubFlags(): boolean {
  if (HUB_NODE_FLAGS.every((f) => process.execArgv.includes(f))) return false;
  const script = process.argv[1];
  if (script === undefined) return false;
  const child = spawn(process.execPath, [...process.execArgv, ...HUB_NODE_FLAGS, script, ...process.argv.slice(2)], { stdio: "inherit" });
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const sig of signals) process.on(sig, () => child.kill(sig));
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      for (const sig of signals) process.removeAllListeners(sig);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
  child.on("error", (err) => {
    process.stderr.write(`semscope: cannot start node: ${err.message}\n`);
    process.exit(1);
  });
  return true;
}

async function webCommand(argv: string[]): Promise<void> {
  const { parseLaunchArgs } = await import("./launch-options.js");
  const { serveWeb } = await import("./web.js");
  let opts;
  try {
    opts = parseLaunchArgs(argv, "web");
  } catch (err) {
    process.stderr.write(`semscope web: ${(err as Error).message}\n`);
    process.exit(2);
  }
  await serveWeb(opts, "semscope web");
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case "hub":
      if (rest.includes("--help") || rest.includes("-h") || !relaunchedWithHubFlags()) await (await import("../main/hub/cli.js")).runHubCli(rest);
      return;
    case "web":
      if (rest.includes("--help") || rest.includes("-h")) {
        process.stdout.write(`${(await import("./launch-options.js")).WEB_USAGE}\n`);
        return;
      }
      if (!relaunchedWithHubFlags()) await webCommand(rest);
      return;
    case "replay":
      await (await import("../main/hub/replay-cli.js")).runReplayCli(rest);
      return;
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(`${await usage()}\n`);
      return;
    case "--version":
    case "-v":
      process.stdout.write(`${(await import("../main/hub/index.js")).HUB_VERSION}\n`);
      return;
    default:
      process.stderr.write(`semscope: unknown command ${JSON.stringify(command)} (semscope --help lists them)\n`);
      process.exit(2);
  }
}

await main(process.argv.slice(2));
