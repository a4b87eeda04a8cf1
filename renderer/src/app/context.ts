// What every view reaches for: the store, the hub client, local mutes and navigation. Made once
// in main.tsx; a context only so that tests and views do not import singletons.
import { createContext, useCallback, useContext, useSyncExternalStore } from "react";
import type { Channel, DashboardStore } from "../data/dashboard-store.js";
import type { HubTarget } from "../data/hub-target.js";
import type { MuteStore } from "../data/mute-store.js";
import type { UiClient } from "../data/ui-client.js";
import type { Route } from "../logic/route.js";

export interface AppServices {
  store: DashboardStore;
  client: UiClient;
  mutes: MuteStore;
  target: HubTarget;
  navigate(route: Route, opts?: { replace?: boolean }): void;
  /** Back to where the user came from inside the app, else the overview. */
  back(): void;
}

export const AppContext = createContext<AppServices | null>(null);

export function useApp(): AppServices {
  const app = useContext(AppContext);
  if (app === null) throw new Error("AppContext missing");
  return app;
}

/** Re-render when a store channel changes; returns its version (use it as a memo key). */
export function useChannel(channel: Channel): number {
  const { store } = useApp();
  // Stable per channel, so switching channels resubscribes and nothing else does.
  const subscribe = useCallback((fn: () => void) => store.subscribe(channel, fn), [store, channel]);
  return useSyncExternalStore(subscribe, () => store.version(channel));
}

/**
 * A value derived from the store, re-rendering when a change on `channel` changes it (compared
 * with Object.is): `select` must return a primitive or an object it keeps while nothing it shows
 * changed. For what depends on one part of a busy channel.
 */
export function useStoreValue<T>(channel: Channel, select: () => T): T {
  const { store } = useApp();
  const subscribe = useCallback((fn: () => void) => store.subscribe(channel, fn), [store, channel]);
  return useSyncExternalStore(subscribe, select);
}

export function useMutesVersion(): number {
  const { mutes } = useApp();
  return useSyncExternalStore(mutes.subscribe, mutes.getVersion);
}
