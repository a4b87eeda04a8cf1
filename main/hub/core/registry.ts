// The hub's one registry of agents and semaphores: the alert engine is handed it (the rules'
// facts: liveness, trackers; shared/alerts/registry.ts), and the hub adds what it keeps per agent
// (dedupe, connection, slots) and per semaphore (totals). /api/state, /ui and /metrics read it.
import { newRegistryAgent, RegistryBase, type RegistryAgent, type WarmHandle } from "../../../shared/alerts/index.js";
import { COUNTERS, type HistoryEntry } from "../../../shared/history/index.js";
import { LIMITS, type Hello } from "../../../shared/protocol/index.js";
import type { WatchedList } from "./alert-evidence.js";
import { SeqWindow } from "./seq-window.js";

export interface AgentRecord extends RegistryAgent {
  /** Sample batches already accepted, for dedupe. */
  readonly seqs: SeqWindow;
  /** Semaphore ids it reported, for its limit: registered ones and any seen in samples or events since. */
  ids: Set<string>;
  /** Its semaphores' slots by id: one lookup in a small map per sample (replaced with the identity). */
  slots: Map<string, SemaphoreSlot>;
  /** The connection speaking for it; a stale connection's close does not mark it down. */
  owner: number | undefined;
  disconnectedAt: number | null;
}

/** One semaphore of an agent: its key, its counter totals and the handles the store pipeline keeps on it. */
export interface SemaphoreSlot {
  /** The semaphore's id, as its agent reports it. */
  readonly id: string;
  readonly key: string;
  readonly totals: Float64Array;
  /** Whether the pipeline has counted its first sample (the history it creates costs more). */
  counted: boolean;
  /** Undefined until its first sample is stored; no longer alive once the store dropped it. */
  history: HistoryEntry | undefined;
  /** ChangeTracker.changed()'s mark. */
  changedMark: number;
  /** The engine's state of it, once the engine keeps one. */
  engineState: WarmHandle | undefined;
  /** Its diagnosed alerts as AlertEvidence follows them, once it had one (may be emptied since). */
  watched: WatchedList | undefined;
}

export class AgentRegistry extends RegistryBase<AgentRecord> {
  /** Per-semaphore running totals of the sample counters (the history's COUNTERS order), for /metrics. */
  readonly totals = new Map<string, Float64Array>();

  protected override create(agentId: string, hello: Hello, now: number, intervalMs: number): AgentRecord {
    return { ...newRegistryAgent(agentId, hello, now, intervalMs), seqs: new SeqWindow(), ids: new Set(), slots: new Map(), owner: undefined, disconnectedAt: null };
  }

  /** The engine retired the old identity's semaphores; the next register brings them back. */
  protected override renamed(rec: AgentRecord): void {
    rec.ids = new Set();
    rec.slots = new Map();
  }

  /** The connection that said hello now speaks for the agent (admitted by the engine's hello). */
  connected(agentId: string, connection: number): AgentRecord {
    const rec = this.get(agentId);
    if (rec === undefined) throw new Error(`agent ${agentId} said hello but is not registered`);
    rec.owner = connection;
    rec.disconnectedAt = null;
    return rec;
  }

  /** A register replaces the agent's list: its slots are made again as samples come. */
  register(rec: AgentRecord, ids: Iterable<string>): void {
    rec.ids = new Set(ids);
    // A slot adds its id to rec.ids once, when made: made again, an id the register dropped is counted again.
    rec.slots = new Map();
  }

  /** The slot of an agent's semaphore `id`, made if new. */
  slot(rec: AgentRecord, id: string): SemaphoreSlot {
    return rec.slots.get(id) ?? this.newSlot(rec, id);
  }

  /** The keys of every semaphore the agent reported. */
  keysOf(rec: AgentRecord): string[] {
    return [...rec.ids].map((id) => rec.keys.key(id));
  }

  /** Forgets the agent and its semaphores' totals. */
  override drop(rec: AgentRecord): void {
    for (const key of this.keysOf(rec)) this.totals.delete(key);
    super.drop(rec);
  }

  /** Why `items` would take the agent past LIMITS.maxSemaphoresPerAgent, or null. */
  overSemaphoreLimit(rec: AgentRecord, items: readonly { id: string }[]): string | null {
    // Within the limit even if every item were new: the usual batch needs no lookup here.
    if (rec.ids.size + items.length <= LIMITS.maxSemaphoresPerAgent) return null;
    let fresh = 0;
    let seen: Set<string> | undefined;
    for (const { id } of items) {
      if (rec.ids.has(id) || seen?.has(id) === true) continue;
      (seen ??= new Set()).add(id);
      fresh++;
    }
    if (rec.ids.size + fresh <= LIMITS.maxSemaphoresPerAgent) return null;
    return `too many semaphores: an agent may report at most ${LIMITS.maxSemaphoresPerAgent}`;
  }

  private newSlot(rec: AgentRecord, id: string): SemaphoreSlot {
    rec.ids.add(id);
    const key = rec.keys.key(id);
    let totals = this.totals.get(key);
    if (totals === undefined) this.totals.set(key, (totals = new Float64Array(COUNTERS.length)));
    const slot: SemaphoreSlot = { id, key, totals, counted: false, history: undefined, changedMark: 0, engineState: undefined, watched: undefined };
    rec.slots.set(id, slot);
    return slot;
  }
}
