// Alerts to one Alertmanager (POST /api/v2/alerts). Alertmanager keeps only the latest state of
// each alert, so this keeps one waiting entry per alert, not a list of changes: an outage costs
// memory in proportion to the alerts, not to their updates. Active alerts are re-sent every
// `resendMs` with an end time ahead of it, as Prometheus does, so Alertmanager resolves them by
// itself if this hub goes away; after an outage every active alert is re-sent at once, since a
// restarted Alertmanager has forgotten them.
import type { AlertChange } from "../../../shared/alerts/index.js";
import type { Alert } from "../../../shared/protocol/index.js";
import { toAlertmanager } from "./alert-payloads.js";
import { DeliveryLoop, postJson, type DeliveryStats, type RetryPolicy } from "./delivery-loop.js";

/** Alerts in one POST at most. */
const BATCH = 500;

export interface SinkOptions {
  readonly retry: RetryPolicy;
  /** Alerts waiting for delivery at most; past it the oldest waiting one is dropped and counted. */
  readonly maxWaiting: number;
  /** The base of links in alerts, null for none. */
  readonly dashboardUrl: () => string | null;
  readonly now: () => number;
}

export interface AlertmanagerOptions extends SinkOptions {
  /** How often active alerts are re-sent. Their endsAt is 4 of these ahead. */
  readonly resendMs: number;
}

export interface SinkStats extends DeliveryStats {
  readonly url: string;
  /** Alerts (Alertmanager) or events (webhook) waiting to be delivered. */
  waiting: number;
  /** Dropped because too many waited while the destination was away. */
  dropped: number;
}

export class AlertmanagerSink {
  private readonly endpoint: string;
  /** Alerts whose latest state it has not yet accepted, by id, oldest change first. */
  private readonly waiting = new Map<string, Alert>();
  private readonly active = new Map<string, Alert>();
  private readonly loop: DeliveryLoop;
  private readonly resendTimer: NodeJS.Timeout;
  private dropped = 0;

  constructor(
    readonly url: string,
    private readonly opts: AlertmanagerOptions,
  ) {
    this.endpoint = new URL("api/v2/alerts", url.endsWith("/") ? url : `${url}/`).href;
    this.loop = new DeliveryLoop(
      {
        hasWork: () => this.waiting.size > 0,
        sendOnce: (timeoutMs) => this.sendOnce(timeoutMs),
        recovered: () => this.resendActive(),
      },
      opts.retry,
    );
    this.resendTimer = setInterval(() => this.resendActive(), opts.resendMs);
    this.resendTimer.unref();
  }

  offer(change: AlertChange): void {
    const a = change.alert;
    if (a.resolvedAt === null) this.active.set(a.id, a);
    else this.active.delete(a.id);
    this.wait(a);
    this.loop.kick();
  }

  stats(): SinkStats {
    return { url: this.url, ...this.loop.stats, waiting: this.waiting.size, dropped: this.dropped };
  }

  close(deadlineMs: number): Promise<void> {
    clearInterval(this.resendTimer);
    return this.loop.close(deadlineMs);
  }

  private wait(a: Alert): void {
    this.waiting.delete(a.id);
    this.waiting.set(a.id, a);
    if (this.waiting.size <= this.opts.maxWaiting) return;
    const oldest = this.waiting.keys().next().value;
    if (oldest !== undefined) this.waiting.delete(oldest);
    this.dropped++;
  }

  private resendActive(): void {
    for (const a of this.active.values()) if (!this.waiting.has(a.id)) this.wait(a);
    this.loop.kick();
  }

  private async sendOnce(timeoutMs: number): Promise<void> {
    const batch: Alert[] = [];
    for (const a of this.waiting.values()) {
      batch.push(a);
      if (batch.length === BATCH) break;
    }
    const endsAt = this.opts.now() + 4 * this.opts.resendMs;
    await postJson(this.endpoint, batch.map((a) => toAlertmanager(a, endsAt, this.opts.dashboardUrl())), timeoutMs);
    // What changed while the request was out waits for the next one.
    for (const a of batch) if (this.waiting.get(a.id) === a) this.waiting.delete(a.id);
  }
}
