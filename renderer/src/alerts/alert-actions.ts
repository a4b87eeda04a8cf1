// What the alert views do with an alert: acknowledge it on the hub, and open what it is about
// at the moment it was raised (in a replay, with the replay's cursor moved there, so the cursor
// and the view say the same time).
import { splitKey, type Alert } from "../../../shared/protocol/types.js";
import type { AppServices } from "../app/context.js";
import { alertTarget } from "../logic/alert-target.js";
import type { ReplayClient } from "../replay/replay-client.js";

export async function acknowledge(app: AppServices, alert: Alert): Promise<void> {
  const { alert: updated } = await app.client.request("alert:ack", { id: alert.id });
  // The next delta says the same; applying the answer now makes the button respond at once.
  app.store.upsertAlert(updated);
}

/** In a replay, moves its cursor to where `alert` was raised (a failure is only logged: the view opens anyway). */
export function seekReplayToAlert(replay: ReplayClient | null, alert: Alert): void {
  replay?.seekToAlert(alert).catch((err: unknown) => console.warn("semscope: replay seek failed", err));
}

export function openAlert(app: AppServices, alert: Alert, replay: ReplayClient | null = null): void {
  seekReplayToAlert(replay, alert);
  const t = alertTarget(alert);
  switch (t.kind) {
    case "semaphore":
      app.navigate({ view: "semaphore", key: t.key, at: alert.raisedAt });
      return;
    case "fleet":
      app.navigate({ view: "fleet", service: t.service, name: t.name, at: alert.raisedAt });
      return;
    case "instance":
      app.navigate({ view: "overview", mode: "instances", q: `svc:${t.service} inst:${t.instance}` });
  }
}

/** "db on checkout/web-1", "search/upstream (fleet)", "checkout/web-1 (agent)". */
export function targetLabel(alert: Alert): string {
  const t = alertTarget(alert);
  if (t.kind === "fleet") return `${t.service} / ${t.name} (fleet)`;
  if (t.kind === "instance") return `${t.service} / ${t.instance}`;
  return alert.instance !== undefined ? `${alert.service} / ${alert.instance} / ${alert.semaphore ?? splitKey(t.key).at(-1)}` : t.key;
}
