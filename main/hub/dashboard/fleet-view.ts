// The fleet as the last /ui delta saw it, kept per group and brought up to date from what changed.
// Recomputing the whole fleet() (a merged histogram per group) on every delta blocked the event
// loop for as long as the fleet was big; a delta mostly moves a few groups. When most groups move
// (every semaphore of a big fleet samples each second) the work still scales with the fleet, so
// it is a generator: the caller runs it a slice at a time (see slices.ts) and yields between.
import type { Changes } from "../core/change-tracker.js";
import type { HubCore } from "../core/hub-core.js";
import type { FleetFigures } from "../../../shared/alerts/index.js";
import { sameFleetEntry, type UiFleetEntry } from "../../../shared/ui-protocol/index.js";
import { uiFleet } from "./views.js";
import { runToEnd } from "./slices.js";

/** Semaphores looked at for their group between two yields. */
const SCAN_BATCH = 512;
/** Groups recomputed between two yields. */
const BATCH = 16;

/** Group key → its entry now, or undefined: the group is gone (no live member left). */
export type MovedGroups = Map<string, UiFleetEntry | undefined>;

export class FleetView {
  private entries = new Map<string, UiFleetEntry>();
  /** Each agent's liveness as of the last update: a flip moves every group it has a member in. */
  private readonly live = new Map<string, boolean>();
  /** The keys sorted, until a group comes or goes (a value changing keeps the order). */
  private sortedKeys: string[] | undefined;
  private valid = false;
  /**
   * Groups freshen() recomputed since the last update: still news for it even when what moved
   * them is gone by then (an agent that left and came back flips nothing the update can see).
   */
  private readonly freshened = new Set<string>();

  constructor(private readonly core: HubCore) {}

  /** Whether the view holds the whole fleet (false after clear(), until the next update). */
  get current(): boolean {
    return this.valid;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Brings the view up to date with `changes` (taken since the last update), writing each group
   * that moved into `moved`. `groups` are the group keys of the changed semaphores when the caller
   * has them (else they are looked up here). Recomputes every group when the view is not current,
   * or semaphores or agents went away; then every entry is in `moved`, and so is every key gone.
   */
  *update(changes: Changes | undefined, moved: MovedGroups, groups?: ReadonlySet<string>): Generator<void, void, void> {
    const core = this.core;
    if (changes === undefined || !this.valid || changes.structure || changes.removedAgents.size > 0) return yield* this.rebuild(moved);
    let touched = groups;
    if (touched === undefined) {
      const found = new Set<string>();
      for (const key of changes.keys) {
        // Alert keys (an agent's, a group's) have no tracker: their semaphores are marked on their own.
        const gk = core.registry.tracker(key)?.groupKey;
        if (gk !== undefined) found.add(gk);
      }
      touched = found;
    }
    if (this.freshened.size > 0) {
      const all = new Set(touched);
      for (const gk of this.freshened) all.add(gk);
      touched = all;
      this.freshened.clear();
    }
    const flipped = new Set<string>();
    for (const a of core.registry.values()) {
      if (this.live.get(a.agentId) === a.live) continue;
      this.live.set(a.agentId, a.live);
      for (const gk of core.engine.groupsOf(a.agentId)) if (!touched.has(gk)) flipped.add(gk);
    }
    yield* this.recompute(touched, moved);
    yield* this.recompute(flipped, moved);
  }

  /**
   * For a snapshot: recomputes the groups of `keys` (changed since the last update) and of agents
   * whose liveness flipped, and everything when `structure` (semaphores or agents went away) or
   * the view is not current. What it recomputes is still news for the next update, which
   * recomputes those groups again (their keys and flips are still pending) and reports them.
   */
  *freshen(keys: readonly string[], structure: boolean): Generator<void, void, void> {
    if (structure || !this.valid) {
      const rebuilt: MovedGroups = new Map();
      yield* this.rebuild(rebuilt);
      for (const gk of rebuilt.keys()) this.freshened.add(gk);
      return;
    }
    const core = this.core;
    const groups = new Set<string>();
    for (const key of keys) {
      const gk = core.registry.tracker(key)?.groupKey;
      if (gk !== undefined) groups.add(gk);
    }
    for (const a of core.registry.values()) if (this.live.get(a.agentId) !== a.live) for (const gk of core.engine.groupsOf(a.agentId)) groups.add(gk);
    for (const gk of groups) this.freshened.add(gk);
    yield* this.recompute(groups, new Map());
  }

  /** update() in one piece (tests, and a replay's resync). */
  updateNow(changes: Changes | undefined): MovedGroups {
    const moved: MovedGroups = new Map();
    runToEnd(this.update(changes, moved));
    return moved;
  }

  /** `held`: the entries before, when not the view's own (a rebuild). */
  private *recompute(groups: Iterable<string>, moved: MovedGroups, held = this.entries): Generator<void, void, void> {
    const batch: string[] = [];
    const flush = () => {
      for (const [gk, entry] of this.core.engine.fleetOf(batch)) this.set(gk, entry, moved, held.get(gk));
      batch.length = 0;
    };
    for (const gk of groups) {
      batch.push(gk);
      if (batch.length < BATCH) continue;
      flush();
      yield;
    }
    flush();
  }

  private set(gk: string, entry: FleetFigures | undefined, moved: MovedGroups, held: UiFleetEntry | undefined): void {
    if (entry === undefined) {
      if (this.entries.delete(gk)) this.sortedKeys = undefined;
      // Said even when the view did not hold it: a snapshot may have dropped it from the view first.
      moved.set(gk, undefined);
      return;
    }
    const [made] = uiFleet([entry]);
    if (!this.entries.has(gk)) this.sortedKeys = undefined;
    // The entry held stays when nothing in it changed: it is old already, and a new copy of each
    // group's entry (a rebuild recomputes every one) would live until the next, through young GCs.
    const f = held !== undefined && sameFleetEntry(held, made) ? held : made;
    this.entries.set(gk, f);
    moved.set(gk, f);
  }

  /** Every group recomputed, the old entries kept until the new ones are all made. */
  private *rebuild(moved: MovedGroups): Generator<void, void, void> {
    const core = this.core;
    const old = this.entries;
    this.entries = new Map();
    this.sortedKeys = undefined;
    this.live.clear();
    for (const a of core.registry.values()) this.live.set(a.agentId, a.live);
    const groups = new Set<string>();
    let n = 0;
    for (const t of core.registry.trackers()) {
      groups.add(t.groupKey);
      if (++n % SCAN_BATCH === 0) yield;
    }
    yield;
    yield* this.recompute(groups, moved, old);
    for (const k of old.keys()) if (!this.entries.has(k)) moved.set(k, undefined);
    this.valid = true;
    this.freshened.clear();
  }

  /** The group keys, sorted (as fleet() orders its entries). */
  keys(): readonly string[] {
    this.sortedKeys ??= [...this.entries.keys()].sort();
    return this.sortedKeys;
  }

  entry(key: string): UiFleetEntry | undefined {
    return this.entries.get(key);
  }

  /** The fleet as of the last update, sorted by key (as fleet() gives it). */
  list(): UiFleetEntry[] {
    const out: UiFleetEntry[] = [];
    for (const k of this.keys()) out.push(this.entries.get(k)!);
    return out;
  }

  /** No dashboard is left: the next update recomputes everything. */
  clear(): void {
    this.valid = false;
    this.entries.clear();
    this.live.clear();
    this.freshened.clear();
    this.sortedKeys = undefined;
  }
}
