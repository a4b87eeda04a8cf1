// Native notifications. Each is kept referenced until closed or clicked: a notification that is
// garbage-collected loses its click handler.
import { Notification } from "electron";
import type { NotificationText } from "../app/alert-notifier.js";

const live = new Set<Notification>();

export function showNotification(text: NotificationText, opts: { silent: boolean; onClick: () => void }): void {
  if (!Notification.isSupported()) return;
  const n = new Notification({ title: text.title, body: text.body, silent: opts.silent });
  live.add(n);
  const forget = () => live.delete(n);
  n.on("click", () => {
    forget();
    opts.onClick();
  });
  n.on("close", forget);
  n.on("failed", forget);
  n.show();
}
