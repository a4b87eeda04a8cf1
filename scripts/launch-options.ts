// The options `semscope web` (`npm run web`) and `npm start` share: every flag of `semscope hub` but
// --static (main/hub/hub-flags.ts, one table for both commands), plus web mode's own. Parsed
// strictly: a typo is an error, not a silently ignored flag.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { DEFAULT_HUB_PORT } from "../shared/protocol/index.js";
import { forCommandLine, HUB_FLAG_USAGE, HUB_FLAGS, type HubFlagOptions, hubOptionsOf, LIVE_HUB_FLAGS, usageLines } from "../main/hub/hub-flags.js";
import { resolveHubOptions } from "../main/hub/options.js";
import type { ReadLimits } from "../main/hub/recording/recording-reader.js";
import { replayLimitFlags } from "../main/hub/replay-cli.js";

export interface LaunchOptions {
  /** The hub's options from the flags `semscope hub` shares, its port always set (default 7420). */
  hub: HubFlagOptions & { port: number };
  /** Web mode: rolling compact recordings in this folder (as the app makes), within recordCapBytes. */
  recordDir: string | undefined;
  recordCapBytes: number | undefined;
  /** Web mode: serve this recording in replay mode instead of a live hub. */
  replay: string | undefined;
  /** With --replay: the reader's line and text limits (--max-line-mb, --max-text-mb). */
  replayLimits: ReadLimits;
  demo: boolean;
  /** `npm start` only: skip the Electron check and serve web mode. */
  web: boolean;
  /** The flags given that the desktop app does not take (`npm start` without --web refuses them). */
  webOnly: string[];
}

/** Every flag `semscope web` (`npm run web`) accepts; WEB_USAGE lists each. */
export const WEB_OPTIONS = {
  ...HUB_FLAGS,
  "record-dir": { type: "string" },
  "record-cap-mb": { type: "string" },
  replay: { type: "string" },
  "max-line-mb": { type: "string" },
  "max-text-mb": { type: "string" },
  "no-demo": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

/** `npm start` takes web mode's flags, and --web to skip the Electron check. */
export const START_OPTIONS = { ...WEB_OPTIONS, web: { type: "boolean" } } as const satisfies ParseArgsConfig["options"];

/** What `semscope --help` shows of WEB_OPTIONS (WEB_USAGE adds its --help). */
export const WEB_USAGE_FLAGS: readonly string[] = [
  "[--no-demo]",
  ...HUB_FLAG_USAGE,
  "[--record-dir <dir> [--record-cap-mb <n>]]",
  "[--replay <recording> [--max-line-mb <n>] [--max-text-mb <n>]]",
];
export const WEB_USAGE = usageLines("usage: semscope web", ["[-h | --help]", ...WEB_USAGE_FLAGS]);

/** The flags the desktop app applies when `npm start` launches it (web mode takes every flag). */
const DESKTOP_FLAGS: readonly string[] = ["port", "token", "record", "no-demo"];

export const START_USAGE = `${usageLines("usage: npm start --", ["[-h | --help]", "[--web]", ...WEB_USAGE_FLAGS])}
  The desktop app with its hub and the built-in demo; with --web, or where Electron cannot start,
  web mode (semscope web) instead. The desktop app takes ${DESKTOP_FLAGS.map((f) => `--${f}`).join(", ")};
  the others are web mode's: where Electron starts, it refuses them without --web.`;

/** Whether a command line asks for --help (answered before its other flags are read or checked). */
export function asksHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

/** `command`: which set of flags is accepted, `semscope web`'s or `npm start`'s (the same plus --web). */
export function parseLaunchArgs(argv: readonly string[], command: "web" | "start" = "start"): LaunchOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    // Web mode's flags are START_OPTIONS' without `web`: its value is then never set.
    options: (command === "web" ? WEB_OPTIONS : START_OPTIONS) as typeof START_OPTIONS,
  });
  const hub = hubOptionsOf(values);
  const capMb = values["record-cap-mb"] === undefined ? undefined : Number(values["record-cap-mb"]);
  if (capMb !== undefined && !(Number.isFinite(capMb) && capMb >= 1)) throw new Error(`--record-cap-mb must be a number of MiB >= 1, got ${values["record-cap-mb"]}`);
  if (capMb !== undefined && values["record-dir"] === undefined) throw new Error("--record-cap-mb needs --record-dir");
  if (values.replay === undefined && (values["max-line-mb"] !== undefined || values["max-text-mb"] !== undefined)) throw new Error("--max-line-mb and --max-text-mb are limits of a replay: they need --replay");
  if (values.replay !== undefined && (values.record !== undefined || values["record-dir"] !== undefined)) throw new Error("--replay serves a recording: it records nothing (drop --record / --record-dir)");
  const live = LIVE_HUB_FLAGS.filter((flag) => values[flag] !== undefined);
  if (values.replay !== undefined && live.length > 0) {
    throw new Error(`--replay serves a recording: it takes no agents, sends no alerts and serves no /metrics (drop ${live.map((f) => `--${f}`).join(" / ")})`);
  }
  // The hub's checks (tokens, host, URLs) now, not after a dashboard build: a refused setup fails at once.
  if (values.replay === undefined) {
    try {
      resolveHubOptions(hub);
    } catch (err) {
      throw forCommandLine(err, values);
    }
  }
  return {
    hub: { ...hub, port: hub.port ?? DEFAULT_HUB_PORT },
    recordDir: values["record-dir"],
    recordCapBytes: capMb === undefined ? undefined : Math.floor(capMb * 1024 * 1024),
    replay: values.replay,
    replayLimits: replayLimitFlags(values),
    demo: values["no-demo"] !== true,
    web: values.web === true,
    webOnly: Object.keys(values).filter((name) => ![...DESKTOP_FLAGS, "web", "help"].includes(name)).map((name) => `--${name}`),
  };
}
