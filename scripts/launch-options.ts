// The options `npm start` and `npm run web` share (docs/protocol.md, "Headless hub": web mode takes the
// hub's options plus --no-demo). Parsed strictly: a typo is an error, not a silently ignored flag.
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { ReadLimits } from "../main/hub/recording/recording-reader.js";
import { replayLimitFlags } from "../main/hub/replay-cli.js";

export interface LaunchOptions {
  port: number;
  host: string;
  token: string | undefined;
  record: string | undefined;
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
  /** Where every alert change is sent besides the dashboard (createHub's alertForwarding). */
  alertmanager: string[];
  webhooks: string[];
  dashboardUrl: string | undefined;
}

export const DEFAULT_PORT = 7420;

/** Every flag `semscope web` (`npm run web`) accepts; WEB_USAGE lists each (and its --help). */
export const WEB_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  token: { type: "string" },
  record: { type: "string" },
  "record-dir": { type: "string" },
  "record-cap-mb": { type: "string" },
  replay: { type: "string" },
  "max-line-mb": { type: "string" },
  "max-text-mb": { type: "string" },
  "no-demo": { type: "boolean" },
  alertmanager: { type: "string", multiple: true },
  webhook: { type: "string", multiple: true },
  "dashboard-url": { type: "string" },
} as const satisfies ParseArgsConfig["options"];

/** `npm start` takes web mode's flags, and --web to skip the Electron check. */
export const START_OPTIONS = { ...WEB_OPTIONS, web: { type: "boolean" } } as const satisfies ParseArgsConfig["options"];

export const WEB_USAGE = `usage: semscope web [-h | --help] [--port 7420] [--host 127.0.0.1] [--token <t>] [--no-demo] [--record <file>]
               [--record-dir <dir> [--record-cap-mb <n>]] [--replay <recording> [--max-line-mb <n>] [--max-text-mb <n>]]
               [--alertmanager <url>]... [--webhook <url>]... [--dashboard-url <url>]`;

/** `command`: which set of flags is accepted, `semscope web`'s or `npm start`'s (the same plus --web). */
export function parseLaunchArgs(argv: readonly string[], command: "web" | "start" = "start"): LaunchOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    // Web mode's flags are START_OPTIONS' without `web`: its value is then never set.
    options: (command === "web" ? WEB_OPTIONS : START_OPTIONS) as typeof START_OPTIONS,
  });
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer from 0 to 65535, got ${values.port}`);
  const capMb = values["record-cap-mb"] === undefined ? undefined : Number(values["record-cap-mb"]);
  if (capMb !== undefined && !(Number.isFinite(capMb) && capMb >= 1)) throw new Error(`--record-cap-mb must be a number of MiB >= 1, got ${values["record-cap-mb"]}`);
  if (capMb !== undefined && values["record-dir"] === undefined) throw new Error("--record-cap-mb needs --record-dir");
  if (values.replay === undefined && (values["max-line-mb"] !== undefined || values["max-text-mb"] !== undefined)) throw new Error("--max-line-mb and --max-text-mb are limits of a replay: they need --replay");
  if (values.replay !== undefined && (values.record !== undefined || values["record-dir"] !== undefined)) throw new Error("--replay serves a recording: it records nothing (drop --record / --record-dir)");
  return {
    port,
    host: values.host ?? "127.0.0.1",
    token: values.token ?? process.env.SEMSCOPE_TOKEN,
    record: values.record,
    recordDir: values["record-dir"],
    recordCapBytes: capMb === undefined ? undefined : Math.floor(capMb * 1024 * 1024),
    replay: values.replay,
    replayLimits: replayLimitFlags(values),
    demo: values["no-demo"] !== true,
    web: values.web === true,
    alertmanager: values.alertmanager ?? [],
    webhooks: values.webhook ?? [],
    dashboardUrl: values["dashboard-url"],
  };
}
