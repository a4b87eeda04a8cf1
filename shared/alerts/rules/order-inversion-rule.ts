// Rule `order_inversion`: an `order_inversion` event, two semaphores acquired in both orders (a
// deadlock waiting to happen). Nothing in the data can show it fixed, so only a person resolves
// it: acknowledging it (AlertEngine.acknowledge) resolves it. Repeats while active update it.
import type { AgentEvent } from "../../protocol/types.js";
import type { AlertBook } from "../alert-book.js";
import { detailString, firstFrame } from "../format.js";
import type { SemaphoreContext } from "../types.js";

export class OrderInversionRule {
  private count = 0;

  onEvent(sem: SemaphoreContext, ev: AgentEvent, book: AlertBook): void {
    const key = sem.target.key;
    const active = book.get("order_inversion", key);
    this.count = active === undefined ? 1 : this.count + 1;
    // The agent's detail is { holding, acquiring } (names); other agents may say `other`.
    const other = detailString(ev.detail, "holding", "other", "with");
    let message = `${sem.label}: acquired in both orders with ${other !== undefined ? `"${other}"` : "another semaphore"}: a deadlock waiting to happen`;
    const frame = firstFrame(ev.stack);
    if (frame !== undefined) message += `; at ${frame}`;
    if (this.count > 1) message += ` (${this.count} reports)`;
    const evidence: Record<string, unknown> = {
      reports: this.count,
      lastAt: ev.t,
      ...(other !== undefined ? { other } : {}),
      ...(ev.detail !== undefined ? { detail: ev.detail } : {}),
      ...(ev.stack !== undefined ? { stack: ev.stack } : {}),
    };
    if (active === undefined) book.raise(sem.target, { rule: "order_inversion", severity: "warning", message, evidence }, ev.t);
    else book.update("order_inversion", key, { message, evidence });
  }

  reset(): void {
    this.count = 0;
  }
}
