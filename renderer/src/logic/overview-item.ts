// One overview row's numbers, derived once per change of its semaphore (the store keeps the
// item beside the UiSemaphore it came from, so unchanged rows keep their identity and a
// memoized row skips rendering).
import type { SampleShare } from "../../../shared/protocol/types.js";
import type { UiSemaphore } from "../../../shared/ui-protocol/types.js";
import { displayStatus, utilization, type DisplayStatus } from "./status.js";
import type { Filterable } from "./filter.js";

export interface SemaphoreItem extends Filterable {
  key: string;
  agentId: string;
  cap: number;
  inUse: number;
  oldestWaitMs: number;
  holdP99: number;
  connected: boolean;
  /** Sample time of the latest sample, null before the first. */
  t: number | null;
  status: DisplayStatus;
  /** Its share of a budget split across replicas, when it has one (the latest sample's). */
  share?: SampleShare;
  /** Connections its pool is opening for waiters (the latest sample's `opening`; 0 when absent). */
  opening: number;
}

export function toItem(s: UiSemaphore, agentConnected: boolean): SemaphoreItem {
  return {
    key: s.key,
    agentId: s.agentId,
    service: s.service,
    instance: s.instance,
    name: s.name,
    id: s.id,
    kind: s.kind,
    cap: s.cap,
    inUse: s.inUse,
    waiters: s.waiters,
    oldestWaitMs: s.oldestWaitMs,
    util: utilization(s.inUse, s.cap),
    waitP99: s.last?.waitMs.p99 ?? 0,
    holdP99: s.last?.holdMs.p99 ?? 0,
    connected: agentConnected,
    t: s.t,
    status: displayStatus(s.status, agentConnected),
    opening: s.last?.opening ?? 0,
    ...(s.last?.share !== undefined ? { share: s.last.share } : {}),
  };
}
