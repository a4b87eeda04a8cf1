// The command-line flags `semscope hub` and `semscope web` share (one table, one reading of it):
// where the hub listens, who may connect, the admission caps, what it records and where alerts go.
// Each command adds its own flags to HUB_FLAGS and its own lines to HUB_FLAG_USAGE.
import type { ParseArgsConfig } from "node:util";
import { DEFAULT_HUB_PORT } from "../../shared/protocol/index.js";
import { HubConfigError, type HubOptions, type OptionNamer } from "./options.js";

export const HUB_FLAGS = {
  port: { type: "string" },
  host: { type: "string" },
  token: { type: "string" },
  "agent-token": { type: "string" },
  "max-agents": { type: "string" },
  "max-agents-per-address": { type: "string" },
  "max-semaphores": { type: "string" },
  "max-semaphores-per-address": { type: "string" },
  "max-pending-agents": { type: "string" },
  "max-pending-agents-per-address": { type: "string" },
  "hello-timeout-ms": { type: "string" },
  "max-dashboards": { type: "string" },
  "max-dashboards-per-address": { type: "string" },
  "dashboard-handshakes-per-second": { type: "string" },
  "dashboard-handshake-burst": { type: "string" },
  "dashboard-handshakes-per-second-per-address": { type: "string" },
  "dashboard-handshake-burst-per-address": { type: "string" },
  record: { type: "string" },
  "allow-origin": { type: "string", multiple: true },
  alertmanager: { type: "string", multiple: true },
  webhook: { type: "string", multiple: true },
  "dashboard-url": { type: "string" },
  "keep-alive-ms": { type: "string" },
} as const satisfies ParseArgsConfig["options"];

/** What a command's --help shows of HUB_FLAGS (a test holds each command's help to its table). */
export const HUB_FLAG_USAGE: readonly string[] = [
  `[--port ${DEFAULT_HUB_PORT}]`,
  "[--host 127.0.0.1]",
  "[--token <t>]",
  "[--agent-token <t>]",
  "[--record <file>]",
  "[--allow-origin <origin>]...",
  "[--alertmanager <url>]...",
  "[--webhook <url>]...",
  "[--dashboard-url <url>]",
  "[--max-agents <n>]",
  "[--max-agents-per-address <n>]",
  "[--max-semaphores <n>]",
  "[--max-semaphores-per-address <n>]",
  "[--keep-alive-ms <ms>]",
  "[--max-pending-agents <n>]",
  "[--max-pending-agents-per-address <n>]",
  "[--hello-timeout-ms <ms>]",
  "[--max-dashboards <n>]",
  "[--max-dashboards-per-address <n>]",
  "[--dashboard-handshakes-per-second <n>]",
  "[--dashboard-handshake-burst <n>]",
  "[--dashboard-handshakes-per-second-per-address <n>]",
  "[--dashboard-handshake-burst-per-address <n>]",
];

/** HUB_FLAGS as parseArgs gives them. */
export type HubFlagValues = { [K in keyof typeof HUB_FLAGS]?: (typeof HUB_FLAGS)[K] extends { multiple: true } ? string[] : string };

/** The HubOptions the shared flags set (createHub checks them as a whole: tokens, host, URLs). */
export type HubFlagOptions = Pick<HubOptions, "port" | "host" | "token" | "agentToken" | "admission" | "record" | "allowedOrigins" | "alertForwarding" | "keepAliveTimeoutMs">;

/** --max-*, --hello-timeout-ms and --dashboard-handshake* flag → HubOptions.admission field. */
const CAP_FLAGS = {
  "max-agents": "maxAgents",
  "max-agents-per-address": "maxAgentsPerAddress",
  "max-semaphores": "maxSemaphores",
  "max-semaphores-per-address": "maxSemaphoresPerAddress",
  "max-pending-agents": "maxPendingAgents",
  "max-pending-agents-per-address": "maxPendingAgentsPerAddress",
  "hello-timeout-ms": "helloTimeoutMs",
  "max-dashboards": "maxDashboards",
  "max-dashboards-per-address": "maxDashboardsPerAddress",
  "dashboard-handshakes-per-second": "dashboardHandshakesPerSecond",
  "dashboard-handshake-burst": "dashboardHandshakeBurst",
  "dashboard-handshakes-per-second-per-address": "dashboardHandshakesPerSecondPerAddress",
  "dashboard-handshake-burst-per-address": "dashboardHandshakeBurstPerAddress",
} as const;

/**
 * Each shared flag's option as createHub's errors name it (options.ts), and the environment
 * variable read when the flag is not given: an error the user sees names what they set.
 */
const FLAG_OPTIONS: { readonly [F in keyof typeof HUB_FLAGS]: { readonly field: string; readonly env?: string } } = {
  port: { field: "port" },
  host: { field: "host" },
  token: { field: "token", env: "SEMSCOPE_TOKEN" },
  "agent-token": { field: "agentToken", env: "SEMSCOPE_AGENT_TOKEN" },
  ...(Object.fromEntries(Object.entries(CAP_FLAGS).map(([flag, field]) => [flag, { field: `admission.${field}` }])) as Record<keyof typeof CAP_FLAGS, { field: string }>),
  record: { field: "record" },
  "allow-origin": { field: "allowedOrigins" },
  alertmanager: { field: "alertmanager" },
  webhook: { field: "webhook" },
  "dashboard-url": { field: "dashboardUrl" },
  "keep-alive-ms": { field: "keepAliveTimeoutMs" },
};

/**
 * The shared flags that act on agents, their alerts or /metrics' scrapers: a replay hub, which
 * takes no agents and serves no /metrics, refuses them.
 */
export const LIVE_HUB_FLAGS: readonly (keyof typeof HUB_FLAGS)[] = ["agent-token", ...(Object.keys(CAP_FLAGS) as (keyof typeof CAP_FLAGS)[]), "alertmanager", "webhook", "dashboard-url", "keep-alive-ms"];

function portOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new HubConfigError(`--port must be an integer 0..65535, got "${text}"`);
  return Number(text);
}

function countOf(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new HubConfigError(`--${flag} must be an integer >= 1, got "${text}"`);
  return Number(text);
}

/** The environment variable `name` when set and not empty. */
function envOf(name: string | undefined): string | undefined {
  const env = name === undefined ? undefined : process.env[name];
  return env !== undefined && env !== "" ? env : undefined;
}

/**
 * Names an option as the command line set it: its flag when given, else its environment variable
 * when that was read; one neither set is named by its flag (and variable). An option no flag sets
 * keeps its field's name.
 */
export function flagNamer(values: HubFlagValues): OptionNamer {
  const byField = new Map(Object.entries(FLAG_OPTIONS).map(([flag, o]) => [o.field, { flag: flag as keyof typeof HUB_FLAGS, env: o.env }]));
  return (field) => {
    const o = byField.get(field);
    if (o === undefined) return field;
    if (values[o.flag] !== undefined) return `--${o.flag}`;
    if (envOf(o.env) !== undefined) return o.env ?? field;
    return o.env === undefined ? `--${o.flag}` : `--${o.flag} (or ${o.env})`;
  };
}

/** `err` as the command line's user should see it: a HubConfigError names the flags and variables they set. */
export function forCommandLine(err: unknown, values: HubFlagValues): unknown {
  return err instanceof HubConfigError ? new HubConfigError(err.naming(flagNamer(values))) : err;
}

/**
 * The hub's options from the shared flags (and SEMSCOPE_TOKEN, SEMSCOPE_AGENT_TOKEN); a bad number
 * throws HubConfigError naming its flag. createHub's own checks name fields: forCommandLine names flags.
 */
export function hubOptionsOf(values: HubFlagValues): HubFlagOptions {
  const admission: NonNullable<HubOptions["admission"]> = {};
  for (const [flag, field] of Object.entries(CAP_FLAGS)) admission[field] = countOf(flag, values[flag as keyof typeof CAP_FLAGS]);
  return {
    port: portOf(values.port),
    host: values.host,
    token: values.token ?? envOf(FLAG_OPTIONS.token.env),
    agentToken: values["agent-token"] ?? envOf(FLAG_OPTIONS["agent-token"].env),
    admission,
    record: values.record,
    allowedOrigins: values["allow-origin"],
    alertForwarding: { alertmanager: values.alertmanager, webhooks: values.webhook, dashboardUrl: values["dashboard-url"] },
    keepAliveTimeoutMs: countOf("keep-alive-ms", values["keep-alive-ms"]),
  };
}

/** `head` and then the flags' usage, wrapped before `width` columns under the first flag. */
export function usageLines(head: string, flags: readonly string[], width = 100): string {
  const lines = [head];
  for (const flag of flags) {
    const last = lines.length - 1;
    if (lines[last].length + 1 + flag.length > width && lines[last] !== head) lines.push(`${" ".repeat(head.length)} ${flag}`);
    else lines[last] += ` ${flag}`;
  }
  return lines.join("\n");
}
