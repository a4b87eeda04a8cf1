// What changed since dashboards last heard: marked by the hub as inputs arrive, taken (and
// cleared) by the /ui delta timer. Sets of keys, not lists of events, so it stays bounded by
// the number of semaphores, agents and alerts however fast agents send.
import type { AlertChange } from "../../../shared/alerts/index.js";

export interface Changes {
  readonly keys: ReadonlySet<string>;
  readonly agents: ReadonlySet<string>;
  readonly removedAgents: ReadonlySet<string>;
  /** A register or forget happened: semaphores may have gone. */
  readonly structure: boolean;
  readonly alerts: readonly AlertChange[];
  readonly thresholds: boolean;
}

/** What the store path marks: a semaphore, with the mark of the last take() that saw it changed. */
export interface Markable {
  readonly key: string;
  changedMark: number;
}

export class ChangeTracker {
  private keys = new Set<string>();
  /**
   * Keys marked through changed() since the last take(), each once (its changedMark is this.mark):
   * the first `markedCount` of `marked`. Two arrays written in turn and never shrunk, so no array
   * grows per take(); a take()'s Changes reads its keys before the next take() writes them over.
   */
  private marked: string[] = [];
  private markedCount = 0;
  private spare: string[] = [];
  private mark = 1;
  private agents = new Set<string>();
  private removedAgents = new Set<string>();
  private structure = false;
  private alerts = new Map<string, AlertChange>();
  private thresholds = false;
  /** Between watch() and unwatch(): every key marked meanwhile (take() or not), and whether anything went away. */
  private watching: { keys: Set<string>; structure: boolean } | undefined;

  key(key: string): void {
    this.keys.add(key);
    this.watching?.keys.add(key);
  }

  /**
   * key() for the store path, once per sample: a field compare and, the first time since the last
   * take(), an array push, where key() costs a hash insert into a set rebuilt after every take().
   */
  changed(m: Markable): void {
    // Watched, a key marked before counts again: what moved during the watch, not since the last take().
    if (this.watching !== undefined) this.watching.keys.add(m.key);
    if (m.changedMark === this.mark) return;
    m.changedMark = this.mark;
    this.marked[this.markedCount++] = m.key;
  }

  agent(agentId: string): void {
    this.agents.add(agentId);
    this.removedAgents.delete(agentId);
  }

  agentRemoved(agentId: string): void {
    this.agents.delete(agentId);
    this.removedAgents.add(agentId);
    this.structural();
  }

  structural(): void {
    this.structure = true;
    if (this.watching !== undefined) this.watching.structure = true;
  }

  alert(changes: readonly AlertChange[]): void {
    for (const c of changes) {
      // The latest change per alert is all a dashboard needs; re-inserting keeps the order they happened in.
      this.alerts.delete(c.alert.id);
      this.alerts.set(c.alert.id, c);
      // A semaphore's status follows its alerts.
      this.key(c.alert.key);
    }
  }

  thresholdsChanged(): void {
    this.thresholds = true;
  }

  get empty(): boolean {
    return (
      this.keys.size === 0 &&
      this.markedCount === 0 &&
      this.agents.size === 0 &&
      this.removedAgents.size === 0 &&
      !this.structure &&
      this.alerts.size === 0 &&
      !this.thresholds
    );
  }

  /**
   * Without taking anything: the keys marked since the last take() (a copy), and whether
   * semaphores or agents went away meanwhile. A /ui snapshot brings its fleet up to date with them.
   */
  pending(): { keys: string[]; structure: boolean } {
    const keys = [...this.keys];
    for (let i = 0; i < this.markedCount; i++) keys.push(this.marked[i]);
    return { keys, structure: this.structure || this.removedAgents.size > 0 };
  }

  /**
   * Starts collecting the keys marked from now on, and whether semaphores or agents go away, apart
   * from take(): work done a slice at a time (a /ui fleet:get) learns what moved while it ran. One
   * watch at a time: a second replaces the first.
   */
  watch(): void {
    this.watching = { keys: new Set(), structure: false };
  }

  /** What was marked since watch() (nothing without one), and the watch ended. */
  unwatch(): { keys: string[]; structure: boolean } {
    const w = this.watching;
    this.watching = undefined;
    return w === undefined ? { keys: [], structure: false } : { keys: [...w.keys], structure: w.structure };
  }

  /** What changed since the last take(). Its `keys` must be read before the next take(). */
  take(): Changes {
    const { keys, marked, markedCount } = this;
    const taken = this.mark;
    const takenSince = () => this.mark !== taken + 1;
    let all: Set<string> | undefined;
    const out: Changes = {
      // Built only if read: with no dashboard connected nobody does.
      get keys(): ReadonlySet<string> {
        if (all === undefined) {
          if (takenSince()) throw new Error("ChangeTracker: a take()'s keys were read after the next take()");
          all = keys;
          for (let i = 0; i < markedCount; i++) all.add(marked[i]);
        }
        return all;
      },
      agents: this.agents,
      removedAgents: this.removedAgents,
      structure: this.structure,
      alerts: [...this.alerts.values()],
      thresholds: this.thresholds,
    };
    this.keys = new Set();
    this.marked = this.spare;
    this.spare = marked;
    this.markedCount = 0;
    this.mark++;
    this.agents = new Set();
    this.removedAgents = new Set();
    this.structure = false;
    this.alerts = new Map();
    this.thresholds = false;
    return out;
  }
}
