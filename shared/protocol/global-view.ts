// The fleet view of a global semaphore (scope "global", e.g. redis-semaphore): the fleet-wide
// in-use read from the shared store against the global cap, and the leases no live agent stands
// behind. A pure function of what the hub already keeps per semaphore (the latest sample of each
// replica, live or not), so /api/state and the dashboard compute the same thing from the same data.
//
// Each replica's sample says what it read from the store (`global.holders`) and which of those
// leases are its own (`global.own`). For every lease in the freshest read:
// - claimed by a connected agent: a normal holder;
// - last claimed by an agent that is no longer connected (killed, hung, cut off): an ORPHAN. Its
//   lease is still live in the store (the read counts only unexpired leases), so it keeps a
//   permit from the fleet until it lapses (at most the lease time after its last refresh), then
//   it leaves the read and the list by itself;
// - claimed by no agent: held by a process without an agent, or granted less than one sample
//   interval ago (not yet in its owner's sample). Counted, not flagged.
import { fleetKey, type SampleGlobal } from "./types.js";

/** What the view needs of a semaphore: SemaphoreState and the dashboard's UiSemaphore both fit. */
export interface GlobalMemberInput {
  readonly agentId: string;
  readonly service: string;
  readonly instance: string;
  readonly name: string;
  readonly kind: string;
  readonly cap: number;
  readonly inUse: number;
  readonly last: { readonly global?: SampleGlobal } | null;
  /** Sample time of `last`, when known: the freshest read is the one shown. */
  readonly t?: number | null;
}

export interface GlobalOrphan {
  /** The lease's identifier in the store. */
  readonly id: string;
  /** The replica that last reported it as its own. */
  readonly instance: string;
}

export interface GlobalView {
  /** `<service>/<name>`, as FleetEntry's key. */
  readonly key: string;
  readonly service: string;
  readonly name: string;
  /** The global cap (the largest any replica reports; they all report the same one). */
  readonly cap: number;
  /** Permits held fleet-wide, read from the store; null while no live replica could read it. */
  readonly inUse: number | null;
  /** The replica whose read is shown. */
  readonly readBy: string | null;
  /** Permits the live replicas report holding themselves (each replica's inUse, summed). */
  readonly agentsInUse: number;
  readonly replicas: number;
  /** Leases held in the store by no live agent, last claimed by one that went away. */
  readonly orphans: GlobalOrphan[];
  /** Leases in the store that no agent claims (processes without an agent, or just granted). */
  readonly unattributed: number;
}

/** True when this semaphore is reported as global (a `global` read, or a kind known to be). */
function isGlobal(m: GlobalMemberInput): boolean {
  return m.last?.global !== undefined || m.kind === "redis-semaphore";
}

/**
 * One view per (service, name) with a global member, sorted by key. `connected(agentId)` says
 * whether an agent is live now; members of agents that are not still count as claimants.
 */
export function globalViews(members: readonly GlobalMemberInput[], connected: (agentId: string) => boolean): GlobalView[] {
  const groups = new Map<string, GlobalMemberInput[]>();
  for (const m of members) {
    const key = fleetKey(m.service, m.name);
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push(m);
  }
  const out: GlobalView[] = [];
  for (const [key, group] of groups) {
    if (!group.some(isGlobal)) continue;
    const live = group.filter((m) => connected(m.agentId));
    if (live.length === 0) continue;
    let read: GlobalMemberInput | undefined;
    for (const m of live) {
      if (m.last?.global === undefined) continue;
      if (read === undefined || (m.t ?? -Infinity) > (read.t ?? -Infinity)) read = m;
    }
    // Who claims each lease: a live claimant wins over a gone one.
    const claims = new Map<string, { instance: string; live: boolean }>();
    for (const m of group) {
      const isLive = connected(m.agentId);
      for (const id of m.last?.global?.own ?? []) {
        const prev = claims.get(id);
        if (prev === undefined || (!prev.live && isLive)) claims.set(id, { instance: m.instance, live: isLive });
      }
    }
    const orphans: GlobalOrphan[] = [];
    let unattributed = 0;
    const g = read?.last?.global;
    if (g !== undefined) {
      for (const id of g.holders) {
        const c = claims.get(id);
        if (c === undefined) unattributed++;
        else if (!c.live) orphans.push({ id, instance: c.instance });
      }
      // Leases beyond the listed identifiers cannot be attributed.
      unattributed += Math.max(0, g.inUse - g.holders.length);
    }
    out.push({
      key,
      service: group[0].service,
      name: group[0].name,
      cap: Math.max(...live.map((m) => m.cap)),
      inUse: g === undefined ? null : g.inUse,
      readBy: read?.instance ?? null,
      agentsInUse: live.reduce((sum, m) => sum + m.inUse, 0),
      replicas: live.length,
      orphans,
      unattributed,
    });
  }
  return out.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
}
