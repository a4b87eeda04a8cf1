// `semscope replay <file> [--json]` (also `npm run replay --`): replays a hub recording and prints the alerts it raises,
// one line each, then a summary. A damaged line stops the replay there, with a message (exit 0:
// a recording cut short by a crash is still worth reading); a file that cannot be read exits 1.
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Alert } from "../../shared/protocol/index.js";
import { DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_TEXT_BYTES, type ReadLimits } from "./recording/recording-reader.js";
import { replayRecording } from "./recording/replay.js";

export const REPLAY_USAGE = "usage: semscope replay [-h | --help] <recording.ndjson | recording.ndjson.gz> [--json] [--max-line-mb <n>] [--max-text-mb <n>]";
/** Every flag `semscope replay` accepts (parsed strictly); REPLAY_USAGE lists each. */
export const REPLAY_OPTIONS = {
  json: { type: "boolean" },
  "max-line-mb": { type: "string" },
  "max-text-mb": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];
const MiB = 1024 * 1024;

/** The reader's limits from `--max-line-mb` / `--max-text-mb` (also web mode's, with --replay); throws on a bad value. */
export function replayLimitFlags(values: { "max-line-mb"?: string; "max-text-mb"?: string }): ReadLimits {
  const mb = (name: "max-line-mb" | "max-text-mb", fallback: number): number => {
    const v = values[name];
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!(Number.isFinite(n) && n > 0)) throw new Error(`--${name} must be a positive number of MiB, got "${v}"`);
    return Math.round(n * MiB);
  };
  return {
    maxLineBytes: mb("max-line-mb", DEFAULT_MAX_LINE_BYTES),
    maxTextBytes: mb("max-text-mb", DEFAULT_MAX_TEXT_BYTES),
    raiseWith: { maxLineBytes: "--max-line-mb", maxTextBytes: "--max-text-mb" },
  };
}

function fail(message: string, code: number): never {
  process.stderr.write(`semscope replay: ${message.split("\n")[0]}\n`);
  process.exit(code);
}

const iso = (t: number) => new Date(t).toISOString();

export function formatAlert(a: Alert): string {
  const end = a.resolvedAt === null ? "active" : `resolved ${iso(a.resolvedAt)}`;
  return `${iso(a.raisedAt)}  ${a.severity.padEnd(8)} ${a.rule.padEnd(15)} ${a.key}  ${a.message}  [${end}${a.acknowledged ? ", acknowledged" : ""}]`;
}

/** `semscope replay <argv>`. */
export async function runReplayCli(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: REPLAY_OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    fail(`${err instanceof Error ? err.message : String(err)} (${REPLAY_USAGE})`, 2);
  }
  if (parsed.values.help === true) {
    process.stdout.write(`${REPLAY_USAGE}\n`);
    return;
  }
  if (parsed.positionals.length !== 1) fail(`expected one recording file (${REPLAY_USAGE})`, 2);
  const file = parsed.positionals[0];
  let limits: ReadLimits;
  try {
    limits = replayLimitFlags(parsed.values);
  } catch (err) {
    fail(`${(err as Error).message} (${REPLAY_USAGE})`, 2);
  }
  let result;
  try {
    result = await replayRecording(file, limits);
  } catch (err) {
    fail(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, 1);
  }
  if (parsed.values.json === true) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const sorted = [...result.alerts].sort((x, y) => x.raisedAt - y.raisedAt);
  for (const a of sorted) process.stdout.write(`${formatAlert(a)}\n`);
  const active = result.alerts.filter((a) => a.resolvedAt === null).length;
  process.stdout.write(
    `replayed ${result.lines} lines (${result.sessions} hub session${result.sessions === 1 ? "" : "s"}): ` +
      `${result.alerts.length} alert${result.alerts.length === 1 ? "" : "s"}, ${active} still active at the end\n`,
  );
  if (result.stoppedAt !== undefined) {
    const msg = `stopped at line ${result.stoppedAt.line}: ${result.stoppedAt.reason}; everything before it was replayed`;
    process.stdout.write(`${msg}\n`);
    process.stderr.write(`semscope replay: ${msg}\n`);
  }
}

// Run as a script, not when imported (see cli.ts).
if (/[\\/]replay-cli\.[cm]?[jt]s$/.test(process.argv[1] ?? "")) void runReplayCli(process.argv.slice(2));
