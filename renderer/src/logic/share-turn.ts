// A replica on its off turn. With more live replicas than a shared budget the permits rotate
// (agent/src/share/split.ts, `coordinator.turnMs`): a replica out of turn holds 0 and its acquires
// wait. Its 0 is by design, and the views say so, lest it read as a leak or a dead replica.
import type { SampleShare } from "../../../shared/protocol/types.js";

/** True while `share` (a sample's) is a rotation's off turn: target 0 of a budget the replicas outnumber. */
export function waitingForTurn(share: SampleShare | undefined): boolean {
  return share !== undefined && share.target === 0 && share.budget > 0 && share.replicas > share.budget;
}

/** The hover text of a "waiting for its turn" label. */
export function turnTitle(share: SampleShare): string {
  return `${share.replicas} live replicas share a budget of ${share.budget}: the permits rotate, and this replica holds none until its turn comes. Its acquires wait meanwhile; it is neither leaking nor dead.`;
}
