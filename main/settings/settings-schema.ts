// The settings file's shape and rules as one zod schema, checked against the shared type, so a
// file on disk and a save from the dashboard are held to the same rules.
import { z } from "zod";
import { applyThresholds, DEFAULT_THRESHOLDS } from "../../shared/alerts/index.js";
import type { Settings } from "../../shared/ipc/ipc-contract.js";
import { DEFAULT_HUB_PORT, LIMITS, type AlertRule } from "../../shared/protocol/types.js";
import { thresholdsPatchSchema } from "../../shared/ui-protocol/schemas.js";
import { isLoopbackHost } from "../app/origin.js";

export const SETTINGS_VERSION = 1;
export const MAX_REMOTE_HUBS = 32;
/** Alertmanagers, and webhooks, the local hub may send to. */
export const MAX_ALERT_DESTINATIONS = 8;

const ALERT_RULES = [
  "leak",
  "convoy",
  "starvation",
  "timeouts",
  "double_release",
  "agent_down",
  "over_budget",
  "order_inversion",
] as const satisfies readonly AlertRule[];
const _allRulesListed: [Exclude<AlertRule, (typeof ALERT_RULES)[number]>] extends [never] ? true : false = true;
void _allRulesListed;

/**
 * Frozen defaults: the local hub on the protocol's port, no token, notify critical alerts. A
 * first run (no settings file) and a replaced unusable file get a new token over these
 * (settings-store.ts); `token: null` is what a user saves to run the local hub open.
 */
export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  version: SETTINGS_VERSION,
  hub: Object.freeze({ port: DEFAULT_HUB_PORT, token: null }),
  remoteHubs: [],
  activeRemoteId: null,
  thresholds: {},
  notifications: Object.freeze({ enabled: true, minSeverity: "critical", mutedRules: [], silent: false }),
  runDemo: true,
  recording: Object.freeze({ enabled: true, capBytes: 1024 * 1024 * 1024 }),
  alertForwarding: Object.freeze({ alertmanager: [], webhooks: [] }),
}) as Readonly<Settings>;

/** A fresh, mutable copy of the defaults. */
export function defaultSettings(): Settings {
  return structuredClone(DEFAULT_SETTINGS) as Settings;
}

/**
 * Why `url` cannot name a hub, or null when it can. An origin only (no path, query, credentials);
 * plain http only for loopback hosts, because the token travels in every request.
 */
export function hubUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "is not a URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "must start with http:// or https://";
  if (u.username !== "" || u.password !== "") return "must not carry credentials (use the token field)";
  if ((u.pathname !== "/" && u.pathname !== "") || u.search !== "" || u.hash !== "") return "must be an origin only (scheme://host:port)";
  if (u.protocol === "http:" && !isLoopbackHost(u.hostname)) return "plain http is allowed only for loopback hosts: use https";
  return null;
}

// A bearer token goes in an HTTP header and a socket.io handshake: visible ASCII, protocol-bounded.
const token = z
  .string({ error: "must be a string or null" })
  .min(1, { error: "must not be empty (use null for no token)" })
  .max(LIMITS.maxString, { error: `must be at most ${LIMITS.maxString} characters` })
  .regex(/^[\x21-\x7e]+$/, { error: "must be visible ASCII characters only" })
  .nullable();

const mustBeObject = { error: "must be an object" };

const remoteHubSchema = z.strictObject(
  {
    id: z.string({ error: "must be a string" }).regex(/^[a-z0-9][a-z0-9-]{0,31}$/, { error: "must be 1-32 of a-z, 0-9, - (not starting with -)" }),
    name: z
      .string({ error: "must be a string" })
      .trim()
      .min(1, { error: "must not be empty" })
      .max(64, { error: "must be at most 64 characters" }),
    url: z
      .string({ error: "must be a string" })
      .max(2048, { error: "is too long" })
      .superRefine((url, ctx) => {
        const problem = hubUrlProblem(url);
        if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
      })
      .transform((url) => new URL(url).origin),
    token,
  },
  mustBeObject,
);

// Alertmanager or a webhook receives alert text and stacks: any http(s) URL the user names.
const destination = z
  .string({ error: "must be a string" })
  .max(2048, { error: "is too long" })
  .refine((url) => URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol), { error: "must be an http:// or https:// URL" });
const destinations = z
  .array(destination, { error: "must be an array" })
  .max(MAX_ALERT_DESTINATIONS, { error: `must have at most ${MAX_ALERT_DESTINATIONS} URLs` });

/** The overrides, each field checked against the rules (settings-repair.ts checks them one by one). */
export const thresholdsSchema = thresholdsPatchSchema.superRefine((patch, ctx) => {
  try {
    applyThresholds(DEFAULT_THRESHOLDS, patch);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: err instanceof Error ? err.message : String(err) });
  }
});

export const settingsSchema = z
  .strictObject({
    version: z.literal(SETTINGS_VERSION, { error: `must be ${SETTINGS_VERSION}` }),
    hub: z.strictObject(
      {
        port: z
          .number({ error: "must be a number" })
          .int({ error: "must be an integer" })
          .min(1, { error: "must be in 1..65535" })
          .max(65535, { error: "must be in 1..65535" }),
        token,
      },
      mustBeObject,
    ),
    remoteHubs: z.array(remoteHubSchema, { error: "must be an array" }).max(MAX_REMOTE_HUBS, { error: `must have at most ${MAX_REMOTE_HUBS} hubs` }),
    activeRemoteId: z.string({ error: "must be a string or null" }).nullable(),
    thresholds: thresholdsSchema,
    notifications: z.strictObject(
      {
        enabled: z.boolean({ error: "must be true or false" }),
        minSeverity: z.enum(["warning", "critical"], { error: 'must be "warning" or "critical"' }),
        mutedRules: z.array(z.enum(ALERT_RULES, { error: `must be one of ${ALERT_RULES.join(", ")}` }), { error: "must be an array" }),
        silent: z.boolean({ error: "must be true or false" }),
      },
      mustBeObject,
    ),
    // Absent from files written before the setting existed: those users get the demo as a new one does.
    runDemo: z.boolean({ error: "must be true or false" }).default(true),
    recording: z
      .strictObject(
        {
          enabled: z.boolean({ error: "must be true or false" }),
          capBytes: z
            .number({ error: "must be a number" })
            .int({ error: "must be an integer" })
            .min(16 * 1024 * 1024, { error: "must be at least 16 MiB (16777216)" })
            .max(2 ** 50, { error: "is too large" }),
        },
        mustBeObject,
      )
      .default({ enabled: true, capBytes: 1024 * 1024 * 1024 }),
    // Absent from files written before the setting existed: nothing is forwarded.
    alertForwarding: z.strictObject({ alertmanager: destinations, webhooks: destinations }, mustBeObject).default({ alertmanager: [], webhooks: [] }),
  })
  .superRefine((s, ctx) => {
    const seen = new Set<string>();
    s.remoteHubs.forEach((h, i) => {
      if (seen.has(h.id)) ctx.addIssue({ code: "custom", path: ["remoteHubs", i, "id"], message: `duplicates the id "${h.id}"` });
      seen.add(h.id);
    });
    if (s.activeRemoteId !== null && !seen.has(s.activeRemoteId)) {
      ctx.addIssue({ code: "custom", path: ["activeRemoteId"], message: `names no remote hub ("${s.activeRemoteId}")` });
    }
  }) satisfies z.ZodType<Settings>;

export type ParsedSettings = { ok: true; settings: Settings } | { ok: false; error: string };

/** `input` checked against every rule; the error names each bad field by its path. */
export function parseSettings(input: unknown): ParsedSettings {
  const r = settingsSchema.safeParse(input);
  if (r.success) return { ok: true, settings: r.data };
  return { ok: false, error: formatIssues(r.error) };
}

/** "remoteHubs[0].url" for a zod path. */
export function pathText(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, seg) => (typeof seg === "number" ? `${acc}[${seg}]` : acc === "" ? String(seg) : `${acc}.${String(seg)}`), "");
}

/** "hub.port: must be in 1..65535; remoteHubs[0].url: …", at most a few issues. */
export function formatIssues(error: z.ZodError, max = 5): string {
  const parts = error.issues.slice(0, max).map((issue) => {
    const path = pathText(issue.path);
    return path === "" ? issue.message : `${path}: ${issue.message}`;
  });
  const more = error.issues.length - max;
  return more > 0 ? `${parts.join("; ")} (and ${more} more)` : parts.join("; ");
}
