// The hub's one registry of agents and semaphores: the alert engine is handed it (the rules'
// facts: liveness, trackers; shared/alerts/registry.ts), and the hub adds what it keeps per agent
// (dedupe, connection) and per semaphore (its slot: totals, history, evidence). /api/state, /ui
// and /metrics read it.
import { agentKey, newRegistryAgent, RegistryBase, type RegistryAgent, type RegistryEntry } from "../../../shared/alerts/index.js";
import type { HistoryEntry } from "../../../shared/history/index.js";
import { HUB_FEATURES, MANY_SEMAPHORES_PER_AGENT, SAMPLE_COUNTERS, semaphoreKey, semaphoreLimit, type Hello, type SemaphoreInfo } from "../../../shared/protocol/index.js";
import type { WatchedList } from "./alert-evidence.js";
import { SeqWindow } from "./seq-window.js";

export interface AgentRecord extends RegistryAgent<SemaphoreSlot> {
  /** Sample batches already accepted, for dedupe. */
  readonly seqs: SeqWindow;
  /** The connection speaking for it; a stale connection's close does not mark it down. */
  owner: number | undefined;
  disconnectedAt: number | null;
  /** Semaphores it may report: 1,000, or 10,000 once its hello offered "many_semaphores". */
  maxSemaphores: number;
  /** The parts of a `register` sent in parts, until its "end" (dropped by the next hello). */
  registerParts: SemaphoreInfo[] | undefined;
}

/** One semaphore of an agent, its registry entry: its tracker, and the handles the store pipeline keeps on it. */
export interface SemaphoreSlot extends RegistryEntry {
  /** Its counter totals; NO_TOTALS until its first sample (slot() makes them). */
  totals: Float64Array;
  /** Whether the pipeline has counted its first sample (the history it creates costs more). */
  counted: boolean;
  /** Undefined until its first sample is stored; no longer alive once the store dropped it. */
  history: HistoryEntry | undefined;
  /** ChangeTracker.changed()'s mark. */
  changedMark: number;
  /** Its diagnosed alerts as AlertEvidence follows them, once it had one (may be emptied since). */
  watched: WatchedList | undefined;
}

/** A slot's totals before its first sample: a registered semaphore has no /metrics series until then. */
const NO_TOTALS = new Float64Array(0);

export class AgentRegistry extends RegistryBase<AgentRecord, SemaphoreSlot> {
  /** Per-semaphore running totals of the sample counters (SAMPLE_COUNTERS order), for /metrics. */
  readonly totals = new Map<string, Float64Array>();

  protected override create(agentId: string, hello: Hello, now: number, intervalMs: number): AgentRecord {
    return { ...newRegistryAgent(agentId, hello, now, intervalMs), entries: new Map(), seqs: new SeqWindow(), owner: undefined, disconnectedAt: null, maxSemaphores: 0, registerParts: undefined };
  }

  protected override newEntry(rec: AgentRecord, id: string): SemaphoreSlot {
    // One literal with every field, so that every slot has the one shape the store path expects.
    return { id, key: semaphoreKey(rec.service, rec.instance, id), tracker: undefined, totals: NO_TOTALS, counted: false, history: undefined, changedMark: 0, watched: undefined };
  }

  /** The connection that said hello now speaks for the agent (admitted by the engine's hello). */
  connected(agentId: string, connection: number, features: readonly string[] | undefined): AgentRecord {
    const rec = this.get(agentId);
    if (rec === undefined) throw new Error(`agent ${agentId} said hello but is not registered`);
    rec.owner = connection;
    rec.disconnectedAt = null;
    rec.maxSemaphores = semaphoreLimit(features?.filter((f) => HUB_FEATURES.includes(f)));
    rec.registerParts = undefined;
    return rec;
  }

  /** The slot of an agent's semaphore `id` as a sample is stored into it: made if new, with its totals. */
  slot(rec: AgentRecord, id: string): SemaphoreSlot {
    const slot = this.entry(rec, id);
    if (slot.totals === NO_TOTALS) {
      let totals = this.totals.get(slot.key);
      if (totals === undefined) this.totals.set(slot.key, (totals = new Float64Array(SAMPLE_COUNTERS.length)));
      slot.totals = totals;
    }
    return slot;
  }

  /**
   * The keys of the agent's semaphores it still owns: what forgetting it may take. A restarted
   * service (a new agentId under the same service/instance) takes its earlier run's semaphores
   * over, same keys, and the earlier run, kept disconnected, is forgotten while the later one holds
   * them; and the other way round. A key is the agent's while its tracker is (the engine's owner:
   * the last agent that registered or reported it), or, without a tracker, while no other agent
   * under its name holds its id. Call it before the engine forgets the agent (which drops trackers).
   */
  ownKeysOf(rec: AgentRecord): string[] {
    let others: AgentRecord[] | undefined;
    const heldByAnother = (id: string) => (others ??= this.peers(agentKey(rec.service, rec.instance)).filter((p) => p !== rec)).some((p) => p.entries.has(id));
    const keys: string[] = [];
    for (const e of rec.entries.values()) {
      const owner = this.tracker(e.key)?.agentId;
      if (owner === undefined ? !heldByAnother(e.id) : owner === rec.agentId) keys.push(e.key);
    }
    return keys;
  }

  /** Forgets the totals of the semaphores `keys` (an agent's own, as it is forgotten). */
  dropTotals(keys: readonly string[]): void {
    for (const key of keys) this.totals.delete(key);
  }

  /**
   * The whole list a `register` gives, or undefined while its parts are still coming; an error
   * for a list over the agent's limit or with an id twice across parts (the parts are dropped).
   */
  registerList(rec: AgentRecord, semaphores: SemaphoreInfo[], partial: "more" | "end" | undefined): SemaphoreInfo[] | undefined | { error: string } {
    // A message without `partial` is a whole list: parts before it, if any, were abandoned.
    const parts = partial === undefined ? undefined : rec.registerParts;
    const list = parts === undefined ? semaphores : parts.concat(semaphores);
    rec.registerParts = undefined;
    if (list.length > rec.maxSemaphores) return { error: tooMany(rec) };
    if (parts !== undefined) {
      const ids = new Set<string>();
      for (const s of list) {
        if (ids.has(s.id)) return { error: `duplicate id across register parts: ${s.id}` };
        ids.add(s.id);
      }
    }
    if (partial !== "more") return list;
    rec.registerParts = list;
    return undefined;
  }

  /** Why `items` would take the agent past its semaphore limit, or null. */
  overSemaphoreLimit(rec: AgentRecord, items: readonly { id: string }[]): string | null {
    // Within the limit even if every item were new: the usual batch needs no lookup here.
    if (rec.entries.size + items.length <= rec.maxSemaphores) return null;
    if (rec.entries.size + freshIds(rec, items) <= rec.maxSemaphores) return null;
    return tooMany(rec);
  }
}

/** How many of `items`' ids `rec` does not hold yet (each counted once). */
export function freshIds(rec: AgentRecord, items: readonly { id: string }[]): number {
  let seen: Set<string> | undefined;
  for (const { id } of items) {
    if (rec.entries.has(id) || seen?.has(id) === true) continue;
    (seen ??= new Set()).add(id);
  }
  return seen?.size ?? 0;
}

function tooMany(rec: AgentRecord): string {
  const more = rec.maxSemaphores < MANY_SEMAPHORES_PER_AGENT ? ` (${MANY_SEMAPHORES_PER_AGENT} with the "many_semaphores" feature)` : "";
  return `too many semaphores: an agent may report at most ${rec.maxSemaphores}${more}`;
}
