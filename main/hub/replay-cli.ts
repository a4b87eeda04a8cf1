// `semscope replay <file> [--json]` (also `npm run replay --`): replays a hub recording and prints the alerts it raises,
// one line each, then a summary. A damaged line stops the replay there, with a message (exit 0:
// a recording cut short by a crash is still worth reading); a file that cannot be read exits 1.
import { parseArgs } from "node:util";
import type { Alert } from "../../shared/protocol/index.js";
import { replayRecording } from "./recording/replay.js";

const USAGE = "usage: semscope replay <recording.ndjson | recording.ndjson.gz> [--json]";

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
    parsed = parseArgs({ args: argv, options: { json: { type: "boolean" } }, allowPositionals: true, strict: true });
  } catch (err) {
    fail(`${err instanceof Error ? err.message : String(err)} (${USAGE})`, 2);
  }
  if (parsed.positionals.length !== 1) fail(`expected one recording file (${USAGE})`, 2);
  const file = parsed.positionals[0];
  let result;
  try {
    result = await replayRecording(file);
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
