// A semaphore's identity as /ui dashboards hold it: a delta's entry leaves it out once dashboards
// have it (UiSemaphorePatch), so the delta builder keeps what it sent, and what each snapshot
// showed is compared with that when dashboards take the snapshot.
import { UI_IDENTITY_FIELDS, type UiIdentityField } from "../../../shared/ui-protocol/index.js";
import type { SemaphoreState } from "../../../shared/protocol/index.js";

export type UiIdentity = Pick<SemaphoreState, UiIdentityField>;

/** `s`'s identity fields alone (what is kept of it, not the whole semaphore). */
export function identityOf(s: UiIdentity): UiIdentity {
  return { agentId: s.agentId, service: s.service, instance: s.instance, id: s.id, name: s.name, kind: s.kind };
}

export function sameIdentity(a: UiIdentity, b: UiIdentity): boolean {
  return UI_IDENTITY_FIELDS.every((f) => a[f] === b[f]);
}
