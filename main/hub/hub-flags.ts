// The command-line flags `semscope hub` and `semscope web` share (one table, one reading of it):
// where the hub listens, who may connect, the admission caps, what it records and where alerts go.
// Each command adds its own flags to HUB_FLAGS and its own lines to HUB_FLAG_USAGE.
import type { ParseArgsConfig } from "node:util";
import { DEFAULT_HUB_PORT } from "../../shared/protocol/index.js";
import { HubConfigError, type HubOptions } from "./options.js";

export const HUB_FLAGS = {
  port: { type: "string" },
  host: { type: "string" },
  token: { type: "string" },
  "agent-token": { type: "string" },
  "max-agents": { type: "string" },
  "max-agents-per-address": { type: "string" },
  "max-semaphores": { type: "string" },
  "max-semaphores-per-address": { type: "string" },
  record: { type: "string" },
  "allow-origin": { type: "string", multiple: true },
  alertmanager: { type: "string", multiple: true },
  webhook: { type: "string", multiple: true },
  "dashboard-url": { type: "string" },
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
];

/** HUB_FLAGS as parseArgs gives them. */
export type HubFlagValues = { [K in keyof typeof HUB_FLAGS]?: (typeof HUB_FLAGS)[K] extends { multiple: true } ? string[] : string };

/** The HubOptions the shared flags set (createHub checks them as a whole: tokens, host, URLs). */
export type HubFlagOptions = Pick<HubOptions, "port" | "host" | "token" | "agentToken" | "admission" | "record" | "allowedOrigins" | "alertForwarding">;

/** --max-* flag → HubOptions.admission field. */
const CAP_FLAGS = {
  "max-agents": "maxAgents",
  "max-agents-per-address": "maxAgentsPerAddress",
  "max-semaphores": "maxSemaphores",
  "max-semaphores-per-address": "maxSemaphoresPerAddress",
} as const;

/** The shared flags that act on agents or their alerts: a replay hub, which takes no agents, refuses them. */
export const LIVE_HUB_FLAGS: readonly (keyof typeof HUB_FLAGS)[] = ["agent-token", ...(Object.keys(CAP_FLAGS) as (keyof typeof CAP_FLAGS)[]), "alertmanager", "webhook", "dashboard-url"];

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

/** A flag, else the environment variable when set and not empty. */
function orEnv(value: string | undefined, name: string): string | undefined {
  const env = process.env[name];
  return value ?? (env !== undefined && env !== "" ? env : undefined);
}

/** The hub's options from the shared flags (and SEMSCOPE_TOKEN, SEMSCOPE_AGENT_TOKEN); a bad number throws HubConfigError naming its flag. */
export function hubOptionsOf(values: HubFlagValues): HubFlagOptions {
  const admission: NonNullable<HubOptions["admission"]> = {};
  for (const [flag, field] of Object.entries(CAP_FLAGS)) admission[field] = countOf(flag, values[flag as keyof typeof CAP_FLAGS]);
  return {
    port: portOf(values.port),
    host: values.host,
    token: orEnv(values.token, "SEMSCOPE_TOKEN"),
    agentToken: orEnv(values["agent-token"], "SEMSCOPE_AGENT_TOKEN"),
    admission,
    record: values.record,
    allowedOrigins: values["allow-origin"],
    alertForwarding: { alertmanager: values.alertmanager, webhooks: values.webhook, dashboardUrl: values["dashboard-url"] },
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
