// The active-alert index the rows read (logic/row-alerts.ts), built once per change of the
// store's alerts and shared by every row of both lists.
import { useApp, useStoreValue } from "../app/context.js";
import type { DashboardStore } from "../data/dashboard-store.js";
import { rowAlertIndex, type RowAlerts } from "../logic/row-alerts.js";

const built = new WeakMap<DashboardStore, { version: number; index: Map<string, RowAlerts> }>();

export function rowAlertsOf(store: DashboardStore): Map<string, RowAlerts> {
  const version = store.version("alerts");
  let c = built.get(store);
  if (c?.version !== version) {
    c = { version, index: rowAlertIndex(store.alertList(), (key) => store.item(key)?.name) };
    built.set(store, c);
  }
  return c.index;
}

/** One row's active alerts, re-rendering the row when they change. */
export function useRowAlerts(key: string): RowAlerts | undefined {
  const { store } = useApp();
  return useStoreValue("alerts", () => rowAlertsOf(store).get(key));
}
