// Builders for the renderer's unit tests: semaphores, samples and alerts as the hub sends them.
import type { SemaphoreStatus } from "../../shared/protocol/types.js";
import type { UiSemaphore } from "../../shared/ui-protocol/types.js";
import { toItem, type SemaphoreItem } from "../../renderer/src/logic/overview-item.js";
import { makeAlert, makeSample, T0 } from "../fixtures/protocol.js";

export { makeAlert as alert, makeSample as sample };

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
    last: makeSample({ id, cap, inUse }),
    t: T0,
    ...over,
  };
}

export function item(service: string, instance: string, id: string, over: Partial<UiSemaphore> = {}, status: SemaphoreStatus = "ok", connected = true): SemaphoreItem {
  return toItem(sem(service, instance, id, over, status), connected);
}
