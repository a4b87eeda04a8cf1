// Builders for the renderer's unit tests: semaphores, samples and alerts as the hub sends them.
import type { Alert, Sample, SemaphoreStatus } from "../../shared/protocol/types.js";
import type { UiSemaphore } from "../../shared/ui-protocol/types.js";
import { toItem, type SemaphoreItem } from "../../renderer/src/logic/overview-item.js";

export function sample(over: Partial<Sample> = {}): Sample {
  const summary = { count: 0, p50: 0, p90: 0, p99: 0, max: 0, hist: [] as [number, number][] };
  return {
    id: "db",
    cap: 10,
    inUse: 0,
    available: 10,
    waiters: 0,
    oldestWaitMs: 0,
    acquired: 0,
    released: 0,
    timeouts: 0,
    rejections: 0,
    aborts: 0,
    doubleReleases: 0,
    leaseExpiries: 0,
    waitMs: { ...summary },
    holdMs: { ...summary },
    longestHoldMs: 0,
    ...over,
  };
}

export function sem(service: string, instance: string, id: string, over: Partial<UiSemaphore> = {}, status: SemaphoreStatus = "ok"): UiSemaphore {
  const inUse = over.inUse ?? 0;
  const cap = over.cap ?? 10;
  return {
    key: `${service}/${instance}/${id}`,
    agentId: `${service}-${instance}`,
    service,
    instance,
    id,
    name: id,
    kind: "semaphore",
    cap,
    inUse,
    available: cap - inUse,
    waiters: 0,
    oldestWaitMs: 0,
    status,
    last: sample({ id, cap, inUse, available: cap - inUse }),
    t: 1_700_000_000_000,
    ...over,
  };
}

export function item(service: string, instance: string, id: string, over: Partial<UiSemaphore> = {}, status: SemaphoreStatus = "ok", connected = true): SemaphoreItem {
  return toItem(sem(service, instance, id, over, status), connected);
}

export function alert(over: Partial<Alert> = {}): Alert {
  return {
    id: "a1",
    rule: "leak",
    severity: "critical",
    key: "checkout/web-1/db",
    service: "checkout",
    instance: "web-1",
    semaphore: "db",
    message: "db on checkout/web-1: 1 permit held > 30 s and not released",
    raisedAt: 1_700_000_000_000,
    resolvedAt: null,
    acknowledged: false,
    ...over,
  };
}
