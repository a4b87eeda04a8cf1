// The fleet as the last /ui delta saw it, kept per group and brought up to date from what changed.
// Recomputing the whole fleet() (a merged histogram per group) on every delta blocked the event
// loop for as long as the fleet was big; a delta mostly moves a few groups.
import type { Changes } from "../core/change-tracker.js";
import type { HubCore } from "../core/hub-core.js";
import type { UiFleetEntry } from "../../../shared/ui-protocol/index.js";
import { uiFleet } from "./views.js";

export class FleetView {
  private readonly entries = new Map<string, UiFleetEntry>();
  /** Each agent's liveness as of the last update: a flip moves every group it has a member in. */
  private readonly live = new Map<string, boolean>();
  /** entries as a list sorted by key, until the next change. */
  private sorted: UiFleetEntry[] | undefined;
  private valid = false;

  constructor(private readonly core: HubCore) {}

  /**
   * Brings the view up to date with `changes` (taken since the last update). Returns the groups
   * that moved (undefined: gone), or undefined when it recomputed the whole fleet (the first
   * update, or semaphores or agents went away): then list() is the news.
   */
  update(changes: Changes): Map<string, UiFleetEntry | undefined> | undefined {
    const core = this.core;
    if (!this.valid || changes.structure || changes.removedAgents.size > 0) {
      this.entries.clear();
      this.live.clear();
      for (const a of core.registry.values()) this.live.set(a.agentId, a.live);
      const all = uiFleet(core.engine.fleet());
      for (const f of all) this.entries.set(f.key, f);
      this.sorted = all;
      this.valid = true;
      return undefined;
    }
    const groups = new Set<string>();
    for (const key of changes.keys) {
      // Alert keys (an agent's, a group's) have no tracker: their semaphores are marked on their own.
      const gk = core.registry.tracker(key)?.groupKey;
      if (gk !== undefined) groups.add(gk);
    }
    for (const a of core.registry.values()) {
      if (this.live.get(a.agentId) === a.live) continue;
      this.live.set(a.agentId, a.live);
      for (const gk of core.engine.groupsOf(a.agentId)) groups.add(gk);
    }
    const moved = new Map<string, UiFleetEntry | undefined>();
    for (const [gk, entry] of core.engine.fleetOf(groups)) {
      if (entry === undefined) {
        if (this.entries.delete(gk)) moved.set(gk, undefined);
        continue;
      }
      const [f] = uiFleet([entry]);
      this.entries.set(gk, f);
      moved.set(gk, f);
    }
    if (moved.size > 0) this.sorted = undefined;
    return moved;
  }

  /** The fleet as of the last update, sorted by key (as fleet() gives it). */
  list(): UiFleetEntry[] {
    this.sorted ??= [...this.entries.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
    return this.sorted;
  }

  /** No dashboard is left: the next update recomputes everything. */
  clear(): void {
    this.valid = false;
    this.entries.clear();
    this.live.clear();
    this.sorted = undefined;
  }
}
