// What changed since dashboards last heard: marked by the hub as inputs arrive, taken (and
// cleared) by the /ui delta timer. Sets of keys, not lists of events, so it stays bounded by
// the number of semaphores, agents and alerts however fast agents send.
import type { AlertChange } from "../../shared/alerts/index.js";

export interface Changes {
  readonly keys: ReadonlySet<string>;
  readonly agents: ReadonlySet<string>;
  readonly removedAgents: ReadonlySet<string>;
  /** A register or forget happened: semaphores may have gone. */
  readonly structure: boolean;
  readonly alerts: readonly AlertChange[];
  readonly thresholds: boolean;
}

export class ChangeTracker {
  private keys = new Set<string>();
  private agents = new Set<string>();
  private removedAgents = new Set<string>();
  private structure = false;
  private alerts = new Map<string, AlertChange>();
  private thresholds = false;

  key(key: string): void {
    this.keys.add(key);
  }

  agent(agentId: string): void {
    this.agents.add(agentId);
    this.removedAgents.delete(agentId);
  }

  agentRemoved(agentId: string): void {
    this.agents.delete(agentId);
    this.removedAgents.add(agentId);
    this.structure = true;
  }

  structural(): void {
    this.structure = true;
  }

  alert(changes: readonly AlertChange[]): void {
    for (const c of changes) {
      // The latest change per alert is all a dashboard needs; re-inserting keeps the order they happened in.
      this.alerts.delete(c.alert.id);
      this.alerts.set(c.alert.id, c);
      // A semaphore's status follows its alerts.
      this.keys.add(c.alert.key);
    }
  }

  thresholdsChanged(): void {
    this.thresholds = true;
  }

  get empty(): boolean {
    return (
      this.keys.size === 0 &&
      this.agents.size === 0 &&
      this.removedAgents.size === 0 &&
      !this.structure &&
      this.alerts.size === 0 &&
      !this.thresholds
    );
  }

  take(): Changes {
    const out: Changes = {
      keys: this.keys,
      agents: this.agents,
      removedAgents: this.removedAgents,
      structure: this.structure,
      alerts: [...this.alerts.values()],
      thresholds: this.thresholds,
    };
    this.keys = new Set();
    this.agents = new Set();
    this.removedAgents = new Set();
    this.structure = false;
    this.alerts = new Map();
    this.thresholds = false;
    return out;
  }
}
