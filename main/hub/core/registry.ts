// The hub's one registry of agents and semaphores: the alert engine is handed it (the rules'
// facts: liveness, trackers; shared/alerts/registry.ts), and the hub adds what it keeps per agent
// (dedupe, connection, slots) and per semaphore (totals). /api/state, /ui and /metrics read it.
import { newRegistryAgent, RegistryBase, type RegistryAgent, type WarmHandle } from "../../../shared/alerts/index.js";
import type { HistoryEntry } from "../../../shared/history/index.js";
import { HUB_FEATURES, MANY_SEMAPHORES_PER_AGENT, SAMPLE_COUNTERS, semaphoreLimit, type Hello, type SemaphoreInfo } from "../../../shared/protocol/index.js";
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
  /** Semaphores it may report: 1,000, or 10,000 once its hello offered "many_semaphores". */
  maxSemaphores: number;
  /** The parts of a `register` sent in parts, until its "end" (dropped by the next hello). */
  registerParts: SemaphoreInfo[] | undefined;
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
  /** Per-semaphore running totals of the sample counters (SAMPLE_COUNTERS order), for /metrics. */
  readonly totals = new Map<string, Float64Array>();

  protected override create(agentId: string, hello: Hello, now: number, intervalMs: number): AgentRecord {
    return { ...newRegistryAgent(agentId, hello, now, intervalMs), seqs: new SeqWindow(), ids: new Set(), slots: new Map(), owner: undefined, disconnectedAt: null, maxSemaphores: 0, registerParts: undefined };
  }

  /** The engine retired the old identity's semaphores; the next register brings them back. */
  protected override renamed(rec: AgentRecord): void {
    rec.ids = new Set();
    rec.slots = new Map();
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
    if (rec.ids.size + items.length <= rec.maxSemaphores) return null;
    let fresh = 0;
    let seen: Set<string> | undefined;
    for (const { id } of items) {
      if (rec.ids.has(id) || seen?.has(id) === true) continue;
      (seen ??= new Set()).add(id);
      fresh++;
    }
    if (rec.ids.size + fresh <= rec.maxSemaphores) return null;
    return tooMany(rec);
  }

  private newSlot(rec: AgentRecord, id: string): SemaphoreSlot {
    rec.ids.add(id);
    const key = rec.keys.key(id);
    let totals = this.totals.get(key);
    if (totals === undefined) this.totals.set(key, (totals = new Float64Array(SAMPLE_COUNTERS.length)));
    const slot: SemaphoreSlot = { id, key, totals, counted: false, history: undefined, changedMark: 0, engineState: undefined, watched: undefined };
    rec.slots.set(id, slot);
    return slot;
  }
}

function tooMany(rec: AgentRecord): string {
  const more = rec.maxSemaphores < MANY_SEMAPHORES_PER_AGENT ? ` (${MANY_SEMAPHORES_PER_AGENT} with the "many_semaphores" feature)` : "";
  return `too many semaphores: an agent may report at most ${rec.maxSemaphores}${more}`;
}
