// Which alerts deserve a native notification: an alert is notified once, the first time it is
// seen active, unacknowledged and passing the preferences (a convoy that turns critical while
// open counts then). Alerts already active when a hub is first read are the baseline: the
// dashboard shows them, and a notification storm at start helps nobody.
import type { NotificationPrefs } from "../../shared/ipc/ipc-contract.js";
import type { Alert, Severity } from "../../shared/protocol/types.js";

/** More new alerts than this in one look become one summary notification. */
export const MAX_NOTIFICATIONS_PER_UPDATE = 3;

const RANK: Readonly<Record<Severity, number>> = { warning: 0, critical: 1 };

export function passesPrefs(alert: Alert, prefs: NotificationPrefs): boolean {
  return (
    prefs.enabled &&
    alert.resolvedAt === null &&
    !alert.acknowledged &&
    RANK[alert.severity] >= RANK[prefs.minSeverity] &&
    !prefs.mutedRules.includes(alert.rule)
  );
}

export interface NotificationText {
  title: string;
  body: string;
}

/**
 * `platform`: Linux notification servers read a body as markup, so there an agent-chosen name
 * like `<a href=…>` is escaped to show as written; elsewhere the body is plain text already.
 */
export function notificationText(alert: Alert, platform: string): NotificationText {
  const where = alert.semaphore !== undefined ? `${alert.semaphore} on ${alert.service}${alert.instance !== undefined ? `/${alert.instance}` : ""}` : alert.key;
  const rule = alert.rule.replace(/_/g, " ");
  return { title: `${alert.severity === "critical" ? "Critical" : "Warning"}: ${rule} — ${where}`, body: platform === "linux" ? escapeMarkup(alert.message) : alert.message };
}

function escapeMarkup(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export interface NotificationPlan {
  /** One notification each, oldest raisedAt first. */
  notify: Alert[];
  /** Further new alerts folded into one "and N more" notification (0: none). */
  more: number;
}

export function summaryText(more: number): NotificationText {
  return { title: `${more} more alert${more === 1 ? "" : "s"}`, body: "Open Semscope to see them all." };
}

export class AlertNotifier {
  private readonly notified = new Set<string>();
  private primed = false;

  /** Feed the full list of active alerts; returns what to notify now. */
  update(active: readonly Alert[], prefs: NotificationPrefs): NotificationPlan {
    const fresh: Alert[] = [];
    const live = new Set<string>();
    for (const alert of active) {
      live.add(alert.id);
      if (this.notified.has(alert.id) || !passesPrefs(alert, prefs)) continue;
      this.notified.add(alert.id);
      fresh.push(alert);
    }
    // Forget alerts no longer active, so the set stays as small as the active list.
    for (const id of this.notified) if (!live.has(id)) this.notified.delete(id);
    if (!this.primed) {
      this.primed = true;
      return { notify: [], more: 0 };
    }
    fresh.sort((a, b) => a.raisedAt - b.raisedAt);
    if (fresh.length <= MAX_NOTIFICATIONS_PER_UPDATE) return { notify: fresh, more: 0 };
    const shown = MAX_NOTIFICATIONS_PER_UPDATE - 1;
    return { notify: fresh.slice(0, shown), more: fresh.length - shown };
  }

  /** A new hub (reconnect): the next update is a baseline again. */
  reset(): void {
    this.notified.clear();
    this.primed = false;
  }
}
