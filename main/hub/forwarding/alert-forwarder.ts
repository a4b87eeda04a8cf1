// The hub's alerts, sent where the team already looks: each Alertmanager and webhook named in the
// hub's options gets every alert change (raised, updated, acknowledged, resolved) as it happens.
// Nothing here can slow or stop the hub: sending is asynchronous, bounded and retried.
import type { AlertChange } from "../../../shared/alerts/index.js";
import { AlertmanagerSink, type SinkStats } from "./alertmanager-sink.js";
import { DEFAULT_RETRY, type RetryPolicy } from "./delivery-loop.js";
import { WebhookSink } from "./webhook-sink.js";

export interface AlertForwardingOptions {
  /** Alertmanager base URLs (e.g. http://127.0.0.1:9093); alerts go to <url>/api/v2/alerts. */
  readonly alertmanager?: readonly string[];
  /** Webhook URLs that receive WebhookBody POSTs. */
  readonly webhooks?: readonly string[];
  /** The dashboard's base URL for links in alerts; default the hub's own in web mode, else none. */
  readonly dashboardUrl?: string;
  /** How often active alerts are re-sent to Alertmanager. Default 60 s. */
  readonly resendMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** Alerts (Alertmanager) or events (webhook) each destination may hold while it is away. Default 10,000. */
  readonly maxWaiting?: number;
}

export interface ForwardingStats {
  alertmanager: SinkStats[];
  webhooks: SinkStats[];
}

export const DEFAULT_RESEND_MS = 60_000;
export const DEFAULT_MAX_WAITING = 10_000;

/** Why a destination URL is refused, or null for an http(s) URL. */
export function forwardingUrlError(option: string, text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${option}: not a URL: "${text}"`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${option}: only http and https URLs, got "${text}"`;
  return null;
}

export class AlertForwarder {
  private readonly alertmanagers: AlertmanagerSink[];
  private readonly webhooks: WebhookSink[];

  /** `dashboardUrl`: the base of links in alerts (null: none), read as each alert is sent. */
  constructor(opts: AlertForwardingOptions, now: () => number, dashboardUrl: () => string | null) {
    const retry: RetryPolicy = { ...DEFAULT_RETRY, ...opts.retry };
    const sink = { retry, maxWaiting: opts.maxWaiting ?? DEFAULT_MAX_WAITING, dashboardUrl, now };
    const resendMs = opts.resendMs ?? DEFAULT_RESEND_MS;
    this.alertmanagers = (opts.alertmanager ?? []).map((url) => new AlertmanagerSink(url, { ...sink, resendMs }));
    this.webhooks = (opts.webhooks ?? []).map((url) => new WebhookSink(url, sink));
  }

  get enabled(): boolean {
    return this.alertmanagers.length + this.webhooks.length > 0;
  }

  onChanges(changes: readonly AlertChange[]): void {
    for (const c of changes) {
      for (const s of this.alertmanagers) s.offer(c);
      for (const s of this.webhooks) s.offer(c);
    }
  }

  stats(): ForwardingStats {
    return { alertmanager: this.alertmanagers.map((s) => s.stats()), webhooks: this.webhooks.map((s) => s.stats()) };
  }

  /** Stops re-sending; one last attempt for what waits, within `deadlineMs`. Never rejects. */
  async close(deadlineMs = 2000): Promise<void> {
    await Promise.all([...this.alertmanagers, ...this.webhooks].map((s) => s.close(deadlineMs)));
  }
}
