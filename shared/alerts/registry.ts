// The agents and semaphores the rules run against: one record per agent, one tracker per
// semaphore key. The alert engine is handed a registry and keeps only its rule state (alerts,
// thresholds, fleet groups); whoever owns the agents (the hub's AgentRegistry, a replay, a test)
// owns the registry and reads /api/state's agents and semaphores from it.
import { semaphoreKey, type AgentState, type Hello, type SemaphoreInfo, type SemaphoreState, type SemaphoreStatus } from "../protocol/types.js";
import { agentKey, type AgentLiveness } from "./rules/agent-down-rule.js";
import type { SemaphoreTracker } from "./semaphore-tracker.js";

/** One semaphore of an agent, by its id: the engine's tracker, and whatever its owner adds (the hub's slot). */
export interface RegistryEntry {
  /** The semaphore's id, as its agent reports it. */
  readonly id: string;
  /** semaphoreKey(service, instance, id): made once, so a sample's lookups by key hash no new string. */
  readonly key: string;
  /**
   * Its tracker as last found for this agent. Checked on use: retired, or taken by another agent
   * under the same name, it is looked up again by key.
   */
  tracker: SemaphoreTracker | undefined;
}

/** What the registry keeps of one agent for the rules and for reading. */
export interface RegistryAgent<E extends RegistryEntry = RegistryEntry> extends AgentLiveness {
  service: string;
  instance: string;
  connected: boolean;
  live: boolean;
  lastSeen: number;
  intervalMs: number;
  /** Latest batch `t`: the agent-clock time used when its semaphores go away. */
  lastSampleT: number | null;
  /**
   * Its semaphores by id: registered, or seen in its samples or events since (replaced with the
   * identity; a register drops the ids it leaves out). Its semaphore limit counts them.
   */
  entries: Map<string, E>;
}

/** A new (or renamed) agent's facts: connected and live, heard from at `now`, no semaphores yet. */
function freshFacts(hello: Hello, now: number, intervalMs: number): Omit<RegistryAgent, "agentId"> {
  return {
    service: hello.service,
    instance: hello.instance,
    connected: true,
    live: true,
    lastSeen: now,
    intervalMs,
    lastSampleT: null,
    entries: new Map(),
  };
}

/** The plain record: a subclass's `create` spreads it into its own (one object shape per record). */
export function newRegistryAgent(agentId: string, hello: Hello, now: number, intervalMs: number): RegistryAgent {
  return { agentId, ...freshFacts(hello, now, intervalMs) };
}

/** The plain entry: a subclass's `newEntry` spreads it into its own. */
export function newRegistryEntry(a: RegistryAgent, id: string): RegistryEntry {
  return { id, key: semaphoreKey(a.service, a.instance, id), tracker: undefined };
}

export abstract class RegistryBase<A extends RegistryAgent<E>, E extends RegistryEntry = RegistryEntry> {
  private readonly byId = new Map<string, A>();
  /** Agent ids by `<service>/<instance>`: several processes can share a name (agent_down's peers). */
  private readonly byName = new Map<string, Set<string>>();
  /** Every semaphore's tracker by key, in first-seen order. */
  private readonly sems = new Map<string, SemaphoreTracker>();

  /** Makes the record of a new agent (from newRegistryAgent, plus the owner's fields). */
  protected abstract create(agentId: string, hello: Hello, now: number, intervalMs: number): A;

  /** Makes the entry of an agent's new semaphore id (from newRegistryEntry, plus the owner's fields). */
  protected abstract newEntry(a: A, id: string): E;

  get(agentId: string): A | undefined {
    return this.byId.get(agentId);
  }

  get size(): number {
    return this.byId.size;
  }

  values(): IterableIterator<A> {
    return this.byId.values();
  }

  /** The agent's entry for semaphore `id`, made if new. */
  entry(a: A, id: string): E {
    let e = a.entries.get(id);
    if (e === undefined) a.entries.set(id, (e = this.newEntry(a, id)));
    return e;
  }

  /** The key of the agent's semaphore `id`, without making an entry for it. */
  keyOf(a: A, id: string): string {
    return a.entries.get(id)?.key ?? semaphoreKey(a.service, a.instance, id);
  }

  /** The trackers of the agent's semaphores that it owns and that are live. */
  *owned(a: A): Generator<SemaphoreTracker> {
    for (const e of a.entries.values()) {
      const sem = e.tracker;
      if (sem !== undefined && !sem.retired && sem.agentId === a.agentId) yield sem;
    }
  }

  /** The agents under `<service>/<instance>`. */
  peers(name: string): A[] {
    const out: A[] = [];
    for (const id of this.byName.get(name) ?? []) {
      const p = this.byId.get(id);
      if (p !== undefined) out.push(p);
    }
    return out;
  }

  /** A new agent, or a known one (already unlisted) under a new identity, with fresh facts. */
  admit(agentId: string, hello: Hello, now: number, intervalMs: number): A {
    let a = this.byId.get(agentId);
    if (a === undefined) {
      a = this.create(agentId, hello, now, intervalMs);
      this.byId.set(agentId, a);
    } else {
      Object.assign(a, freshFacts(hello, now, intervalMs));
    }
    const name = agentKey(a.service, a.instance);
    let ids = this.byName.get(name);
    if (ids === undefined) this.byName.set(name, (ids = new Set()));
    ids.add(agentId);
    return a;
  }

  /** Takes the agent out of its name's peers (it is going away, or changing its name). */
  unlist(a: A): void {
    const name = agentKey(a.service, a.instance);
    const ids = this.byName.get(name);
    ids?.delete(a.agentId);
    if (ids !== undefined && ids.size === 0) this.byName.delete(name);
  }

  /** Drops the agent for good (unlisted first). */
  drop(a: A): void {
    this.unlist(a);
    this.byId.delete(a.agentId);
  }

  tracker(key: string): SemaphoreTracker | undefined {
    return this.sems.get(key);
  }

  addTracker(sem: SemaphoreTracker): void {
    this.sems.set(sem.key, sem);
  }

  deleteTracker(key: string): void {
    this.sems.delete(key);
  }

  trackers(): IterableIterator<SemaphoreTracker> {
    return this.sems.values();
  }

  // ---- reading (/api/state, /ui) ----

  /** Every known agent in first-hello order. */
  agents(): AgentState[] {
    return [...this.byId.values()].map((a) => ({
      agentId: a.agentId,
      service: a.service,
      instance: a.instance,
      connected: a.connected,
      lastSeen: a.lastSeen,
    }));
  }

  /** Whether any known agent is connected: the hub's tick asks every second, without a copy of agents(). */
  anyConnected(): boolean {
    for (const a of this.byId.values()) if (a.connected) return true;
    return false;
  }

  /** Every known semaphore in first-seen order. */
  semaphores(): SemaphoreState[] {
    return [...this.sems.values()].map((s) => s.state());
  }

  /** Status of `<service>/<instance>/<id>`; undefined for a key never seen. */
  status(key: string): SemaphoreStatus | undefined {
    return this.sems.get(key)?.status();
  }

  /** What the agent registered for `key` (replaced by each register); undefined if never registered. */
  semaphoreInfo(key: string): SemaphoreInfo | undefined {
    const sem = this.sems.get(key);
    return sem?.registered === true ? sem.info : undefined;
  }
}

/** A registry of plain records: a replay's, a test's, or the engine's own when it is handed none. */
export class Registry extends RegistryBase<RegistryAgent> {
  protected override create(agentId: string, hello: Hello, now: number, intervalMs: number): RegistryAgent {
    return newRegistryAgent(agentId, hello, now, intervalMs);
  }

  protected override newEntry(a: RegistryAgent, id: string): RegistryEntry {
    return newRegistryEntry(a, id);
  }
}
