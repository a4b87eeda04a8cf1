// What the hub sends about an alert: Alertmanager's v2 shape (labels name the alert, annotations
// say what it is and where to look) and the webhook's own versioned shape (docs/integrations.md).
import type { Alert } from "../../../shared/protocol/index.js";

/** Annotation and webhook text is trimmed to this many characters (a stack can be 16 KiB). */
export const DETAIL_MAX_CHARS = 2000;

/** The dashboard's address of what the alert is about, at the moment it was raised. */
export function dashboardLink(base: string, a: Alert): string {
  const root = base.replace(/\/+$/, "");
  const enc = encodeURIComponent;
  const at = `at=${a.raisedAt}`;
  if (a.instance !== undefined && a.semaphore !== undefined) return `${root}/#/s/${enc(a.key)}?w=5m&${at}`;
  if (a.rule === "over_budget" && a.semaphore !== undefined) return `${root}/#/f/${enc(a.service)}/${enc(a.semaphore)}?w=5m&${at}`;
  return `${root}/#/alerts?id=${enc(a.id)}`;
}

function trim(text: string): string {
  return text.length <= DETAIL_MAX_CHARS ? text : `${text.slice(0, DETAIL_MAX_CHARS - 1)}…`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The evidence a person on call reads first: a diagnosis (convoy, starvation), else the first
 * holder's or the offending call's stack (leak, double release, order inversion), trimmed.
 */
export function alertDetail(a: Alert): string | undefined {
  const e = a.evidence;
  if (e === undefined) return undefined;
  const d = e.diagnosis;
  if (isRecord(d) && typeof d.headline === "string") {
    const parts = [d.headline, d.detail, d.fix].filter((p): p is string => typeof p === "string" && p !== "");
    return trim(parts.join("\n"));
  }
  const holders = Array.isArray(e.holders) ? e.holders : [];
  const first = holders.find((h): h is Record<string, unknown> => isRecord(h) && typeof h.stack === "string");
  if (first !== undefined) return trim(`acquired at:\n${String(first.stack)}`);
  if (typeof e.stack === "string") return trim(e.stack);
  return undefined;
}

/** Alertmanager's PostableAlert (api/v2/openapi.yaml). */
export interface AlertmanagerAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * An alert for Alertmanager. Its labels are what Alertmanager groups, routes and silences by, and
 * stay the same while it lasts; an active alert's endsAt is `activeEndsAt` (Alertmanager then
 * resolves it by itself if the hub stops re-sending), a resolved one's is when it resolved.
 */
export function toAlertmanager(a: Alert, activeEndsAt: number, dashboardUrl: string | null): AlertmanagerAlert {
  const labels: Record<string, string> = { alertname: a.rule, severity: a.severity, service: a.service, source: "semscope" };
  if (a.instance !== undefined) labels.instance = a.instance;
  if (a.semaphore !== undefined) labels.semaphore = a.semaphore;
  const [summary, ...rest] = a.message.split("\n");
  const annotations: Record<string, string> = { summary: trim(summary), acknowledged: String(a.acknowledged), alert_id: a.id };
  const detail = [rest.join("\n").trim(), alertDetail(a) ?? ""].filter((s) => s !== "").join("\n\n");
  if (detail !== "") annotations.description = trim(detail);
  const out: AlertmanagerAlert = {
    labels,
    annotations,
    startsAt: iso(a.raisedAt),
    // Alertmanager refuses an end before the start (an agent's clock may lag the hub's).
    endsAt: iso(Math.max(a.resolvedAt ?? activeEndsAt, a.raisedAt + 1)),
  };
  if (dashboardUrl !== null) {
    const link = dashboardLink(dashboardUrl, a);
    out.generatorURL = link;
    annotations.dashboard = link;
  }
  return out;
}

export const WEBHOOK_VERSION = 1;

/** One change to one alert, as a webhook receives it. */
export interface WebhookEvent {
  kind: "raised" | "updated" | "resolved";
  /** Hub time of the change (epoch ms). */
  at: number;
  alert: Omit<Alert, "evidence"> & { detail?: string; dashboard?: string };
}

/** A webhook POST's body: the events since the last one, oldest first. */
export interface WebhookBody {
  version: typeof WEBHOOK_VERSION;
  source: "semscope";
  events: WebhookEvent[];
}

export function toWebhookEvent(kind: WebhookEvent["kind"], a: Alert, at: number, dashboardUrl: string | null): WebhookEvent {
  const { evidence: _evidence, ...rest } = a;
  const alert: WebhookEvent["alert"] = { ...rest };
  const detail = alertDetail(a);
  if (detail !== undefined) alert.detail = detail;
  if (dashboardUrl !== null) alert.dashboard = dashboardLink(dashboardUrl, a);
  return { kind, at, alert };
}
