// `semscope hub [options]` (also `npm run hub --`): the hub without Electron. HUB_OPTIONS are the
// flags it accepts, HUB_USAGE what --help prints of them (a test holds the two together). First
// stdout line: `semscope hub listening on http://<host>:<port>`. Bad arguments: one line on stderr,
// exit 2. SIGINT/SIGTERM: close cleanly, exit 0.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { createHub, type Hub } from "./hub.js";
import { forCommandLine, HUB_FLAG_USAGE, HUB_FLAGS, hubOptionsOf, usageLines } from "./hub-flags.js";
import { HubConfigError } from "./options.js";

/** Every flag `semscope hub` accepts (parsed strictly: any other is an error): the flags it shares with `semscope web`, and --static. */
export const HUB_OPTIONS = {
  ...HUB_FLAGS,
  static: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

/** What `semscope --help` shows of HUB_OPTIONS (HUB_USAGE adds its --help). */
export const HUB_USAGE_FLAGS: readonly string[] = [...HUB_FLAG_USAGE, "[--static <dir>]"];
export const HUB_USAGE = usageLines("usage: semscope hub", ["[-h | --help]", ...HUB_USAGE_FLAGS]);

/** A close that takes longer than this is abandoned (exit 1) rather than leaving a hung process. */
const CLOSE_TIMEOUT_MS = 5000;

function fail(message: string, code = 2): never {
  process.stderr.write(`semscope hub: ${message.split("\n")[0]}\n`);
  process.exit(code);
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: HUB_OPTIONS,
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    fail(`${err instanceof Error ? err.message : String(err)} (semscope hub --help lists the flags)`);
  }
}

/** `semscope hub <argv>`: starts the hub and keeps it running until SIGINT/SIGTERM. */
export async function runHubCli(argv: string[]): Promise<void> {
  const args = parse(argv);
  if (args.help === true) {
    process.stdout.write(`${HUB_USAGE}\n`);
    return;
  }
  let hub: Hub;
  try {
    hub = await createHub({ ...hubOptionsOf(args), staticDir: args.static });
  } catch (err) {
    const shown = forCommandLine(err, args);
    if (shown instanceof HubConfigError) fail(shown.message);
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
