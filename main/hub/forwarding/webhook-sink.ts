// Alert changes to one webhook, in the order they happened (raised, updated..., resolved), a
// batch per POST (alert-payloads.ts WebhookBody). While the receiver is away the events wait, at
// most `maxWaiting` of them: past it the oldest is dropped and counted. An update waiting behind
// another update of the same alert replaces it, so a chatty alert does not fill the queue.
import type { AlertChange } from "../../../shared/alerts/index.js";
import { toWebhookEvent, WEBHOOK_VERSION, type WebhookBody, type WebhookEvent } from "./alert-payloads.js";
import type { SinkOptions, SinkStats } from "./alertmanager-sink.js";
import { DeliveryLoop, postJson } from "./delivery-loop.js";

const BATCH = 200;

export class WebhookSink {
  private queue: WebhookEvent[] = [];
  /** Events at the front of the queue in the request under way: never replaced or dropped. */
  private sending = 0;
  private dropped = 0;
  private readonly loop: DeliveryLoop;

  constructor(
    readonly url: string,
    private readonly opts: SinkOptions,
  ) {
    this.loop = new DeliveryLoop(
      { hasWork: () => this.queue.length > 0, sendOnce: (timeoutMs) => this.sendOnce(timeoutMs), recovered: () => undefined },
      opts.retry,
    );
  }

  offer(change: AlertChange): void {
    const event = toWebhookEvent(change.kind, change.alert, this.opts.now(), this.opts.dashboardUrl());
    const last = this.queue.length > this.sending ? this.queue[this.queue.length - 1] : undefined;
    if (last !== undefined && event.kind === "updated" && last.kind === "updated" && last.alert.id === event.alert.id) {
      this.queue[this.queue.length - 1] = event;
    } else {
      this.queue.push(event);
      if (this.queue.length > this.opts.maxWaiting && this.queue.length > this.sending) {
        this.queue.splice(this.sending, 1);
        this.dropped++;
      }
    }
    this.loop.kick();
  }

  stats(): SinkStats {
    return { url: this.url, ...this.loop.stats, waiting: this.queue.length, dropped: this.dropped };
  }

  close(deadlineMs: number): Promise<void> {
    return this.loop.close(deadlineMs);
  }

  private async sendOnce(timeoutMs: number): Promise<void> {
    const events = this.queue.slice(0, BATCH);
    this.sending = events.length;
    const body: WebhookBody = { version: WEBHOOK_VERSION, source: "semscope", events };
    try {
      await postJson(this.url, body, timeoutMs);
      this.queue.splice(0, events.length);
    } finally {
      this.sending = 0;
    }
  }
}
