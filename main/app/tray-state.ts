// What the tray shows: the number of active alerts (title next to the icon on macOS, tooltip and
// menu line everywhere), and a level that picks the icon's colour.
import type { Alert } from "../../shared/protocol/types.js";

export type TrayLevel = "ok" | "warning" | "critical" | "offline";

export interface TrayState {
  count: number;
  critical: number;
  level: TrayLevel;
  /** Short text beside the icon (macOS): the count, or "" when there is nothing to say. */
  title: string;
  tooltip: string;
  /** The disabled first line of the tray menu. */
  summary: string;
}

export interface TrayInput {
  /** Active alerts, or null when the hub could not be read. */
  alerts: readonly Alert[] | null;
  /** "Local hub" or the remote hub's name. */
  hubName: string;
}

export function trayState({ alerts, hubName }: TrayInput): TrayState {
  if (alerts === null) {
    return { count: 0, critical: 0, level: "offline", title: "!", tooltip: `Semscope — ${hubName} unreachable`, summary: `${hubName} unreachable` };
  }
  const active = alerts.filter((a) => a.resolvedAt === null);
  const count = active.length;
  const critical = active.filter((a) => a.severity === "critical").length;
  const level: TrayLevel = critical > 0 ? "critical" : count > 0 ? "warning" : "ok";
  const summary =
    count === 0 ? "No active alerts" : `${count} active alert${count === 1 ? "" : "s"}${critical > 0 ? ` (${critical} critical)` : ""}`;
  return { count, critical, level, title: count === 0 ? "" : String(count), tooltip: `Semscope — ${hubName}: ${summary.toLowerCase()}`, summary };
}
