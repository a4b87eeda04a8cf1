// React's view of the detail feed and store: slow state only. The feed's status changes on a
// load or a pause; its data changes every second but panels that read it (the Little's-law
// readout) re-render at most once per `ms`.
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { UiFleetEntry } from "../../../shared/ui-protocol/types.js";
import type { UiSemaphore } from "../../../shared/ui-protocol/types.js";
import { useApp, useStoreValue } from "../app/context.js";
import type { DetailFeed, FeedStatus } from "../data/detail-feed.js";

export function useFeedStatus(feed: DetailFeed): FeedStatus {
  return useSyncExternalStore(feed.subscribeStatus, feed.getStatus);
}

/** A counter that moves at most once per `ms` while the feed's data changes. */
export function useFeedTick(feed: DetailFeed, ms: number): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    let last = 0;
    const fire = () => {
      timer = null;
      last = performance.now();
      setTick((t) => t + 1);
    };
    const unsub = feed.subscribe(() => {
      if (timer !== null) return;
      timer = setTimeout(fire, Math.max(0, last + ms - performance.now()));
    });
    return () => {
      unsub();
      if (timer !== null) clearTimeout(timer);
    };
  }, [feed, ms]);
  return tick;
}

/** The semaphore, re-rendering on every change of it (the numbers now). */
export function useSemaphore(key: string): UiSemaphore | undefined {
  const { store } = useApp();
  return useSyncExternalStore(
    (fn) => store.subscribe("semaphores", fn),
    () => store.semaphore(key),
  );
}

export function useFleetEntry(service: string, name: string): UiFleetEntry | undefined {
  const { store } = useApp();
  return useSyncExternalStore(
    (fn) => store.subscribe("fleet", fn),
    // A semaphore's view asks with no fleet: no search through the fleet on every delta.
    () => (service === "" ? undefined : store.fleetEntry(service, name)),
  );
}

/**
 * The semaphore as of its last change of status (or of the set of semaphores): for what is
 * slow (name, status, instance), so the view around the charts does not re-render per sample.
 */
export function useSemaphoreSlow(key: string): UiSemaphore | undefined {
  const { store } = useApp();
  // The structure channel moves whenever any semaphore of the fleet changes status (about every
  // delta with 500 of them): this one is kept until its own status, agent connection or presence
  // changes, so the view re-renders only then.
  const held = useRef<{ key: string; sem: UiSemaphore | undefined; connected: boolean } | null>(null);
  return useStoreValue("structure", () => {
    const sem = store.semaphore(key);
    const connected = sem !== undefined && store.agentConnected(sem.agentId);
    const h = held.current;
    const same = h !== null && h.key === key && (h.sem === sem || (h.sem !== undefined && sem !== undefined && h.sem.status === sem.status && h.sem.agentId === sem.agentId)) && h.connected === connected;
    if (!same) held.current = { key, sem, connected };
    return held.current?.sem;
  });
}
