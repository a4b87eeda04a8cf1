// The alert engine: a deterministic function of the calls made to it. Feed it what the hub
// received, in the order it received it, each with the hub's receive time `now`; replaying a
// recording of those calls raises exactly the same alerts, with the same ids and times.
//
// Clocks. Per-semaphore alerts are raised and resolved on sample time (a batch's `t`, an event's
// `t`: the agent's clock), as docs/protocol.md requires. agent_down uses the hub clock (`now`; a
// silence found by tick is dated when it crossed the limit, `lastSeen + 3 × intervalMs`).
// over_budget uses the hub clock too: it sums replicas whose agent clocks differ, and most of
// what moves it (register, replicas going down and coming back) has no sample time at all, so
// mixing clocks would date its resolution before its raise. Acknowledging an order_inversion
// resolves it at the `now` given to acknowledge (a person's act on the hub).
//
// So a recording replays identically when it keeps every call's `now`, tick and disconnect
// included, as well as the payloads.
//
// Payloads must already be valid (the hub parses each one with the zod schemas): the engine
// checks nothing a schema checks. A message from an agent that never said hello is ignored.
import type { Alert, EventsBatch, Hello, SampleShare, SamplesBatch, SemaphoreInfo } from "../protocol/types.js";
import { AlertBook, DEFAULT_MAX_RESOLVED } from "./alert-book.js";
import { fleetCounts, fleetEntry, fleetFigures, type FleetCounts, type FleetEntry, type FleetFigures, type FleetMember } from "./fleet.js";
import { agentKey, evaluateAgentDown, type DownCause } from "./rules/agent-down-rule.js";
import { evaluateOverBudget } from "./rules/over-budget-rule.js";
import { Registry, type RegistryAgent, type RegistryBase, type RegistryEntry } from "./registry.js";
import { implicitInfo, SEMAPHORE_RULES, SemaphoreTracker, trackerPools } from "./semaphore-tracker.js";
import { applyThresholds, DEFAULT_THRESHOLDS, type AlertThresholds, type ThresholdsPatch } from "./thresholds.js";
import type { AlertChange } from "./types.js";

function shareChanged(a: SampleShare | undefined, b: SampleShare | undefined): boolean {
  return a?.replicas !== b?.replicas || a?.reachable !== b?.reachable;
}

/** The rules raised on one semaphore, keyed by its semaphoreKey. */
const PER_SEMAPHORE: ReadonlySet<string> = new Set(SEMAPHORE_RULES);

export interface AlertEngineOptions {
  /** Changes to DEFAULT_THRESHOLDS from the start. */
  readonly thresholds?: ThresholdsPatch;
  /** Resolved alerts kept for allAlerts(), oldest dropped first. Default 1000. */
  readonly maxResolved?: number;
  /** The agents and semaphores the rules run against (the hub's registry); a fresh Registry when absent. */
  readonly registry?: RegistryBase<RegistryAgent>;
}

interface Group {
  readonly service: string;
  readonly name: string;
  readonly keys: Set<string>;
}

/** A store pipeline's reused buffers for one feed() call, index i for the batch's item i. */
export interface SampleFeed {
  /** The item's entry in its agent's registry record (registry.entry()), as the caller found it: saves the lookup by id. */
  readonly entries: readonly RegistryEntry[];
  /** Filled with the rules (RULE_BIT) active on the item's semaphore once it is applied (0 for an unknown agent). */
  readonly activeRules: Uint8Array;
}

export class AlertEngine {
  private readonly book: AlertBook;
  private th: AlertThresholds;
  /** Who is known, agents and semaphore trackers: the rest of the engine's fields are rule state. */
  readonly registry: RegistryBase<RegistryAgent>;
  private readonly groups = new Map<string, Group>();
  /** Where its trackers' rule state comes from. */
  private readonly pools = trackerPools();
  /** Whether the last trackerFor() made its tracker. */
  private created = false;
  /** forgetInParts() calls with semaphores still to retire: out of the registry, their alerts hidden from reads. */
  private retiring = 0;
  /**
   * Whether a read leaves an alert out: an active per-semaphore alert whose semaphore is out of
   * the registry, which only a forgetInParts() still to retire it leaves so (retire() resolves them).
   */
  private readonly hidden = (a: Readonly<Alert>): boolean => a.resolvedAt === null && PER_SEMAPHORE.has(a.rule) && this.registry.tracker(a.key) === undefined;

  constructor(options: AlertEngineOptions = {}) {
    this.book = new AlertBook(options.maxResolved ?? DEFAULT_MAX_RESOLVED);
    this.th = applyThresholds(DEFAULT_THRESHOLDS, options.thresholds ?? {});
    this.registry = options.registry ?? new Registry();
  }

  // ---- inputs: each returns the alert changes it caused, in order ----

  /** An agent's `hello` (also on resume: a known agentId keeps its semaphores). */
  hello(agentId: string, hello: Hello, now: number): AlertChange[] {
    const a = this.registry.get(agentId);
    const renamed = a !== undefined && (a.service !== hello.service || a.instance !== hello.instance);
    // Its semaphores' keys name the old identity: retire them; the next register re-adds them.
    if (renamed) this.removeAgent(a, now, "agent identity changed", false);
    if (a === undefined || renamed) {
      const made = this.registry.admit(agentId, hello, now, this.th.agentDown.defaultIntervalMs);
      // A new process under a name that was down brings that name back.
      this.evalDown(made, now, undefined);
    } else {
      this.heard(a, now);
    }
    return this.book.drain();
  }

  /** An agent's `register`: the full list, replacing the previous one. */
  register(agentId: string, semaphores: readonly SemaphoreInfo[], now: number): AlertChange[] {
    const a = this.registry.get(agentId);
    if (a === undefined) return [];
    this.heard(a, now);
    const touched = new Set<string>();
    const next = new Set<string>();
    for (const info of semaphores) {
      next.add(info.id);
      const e = this.registry.entry(a, info.id);
      const sem = this.registry.tracker(e.key);
      if (sem === undefined) {
        const created = (e.tracker = new SemaphoreTracker(agentId, a.service, a.instance, info, true, a.intervalMs, this.book, this.pools));
        this.registry.addTracker(created);
        this.joinGroup(created);
        touched.add(created.groupKey);
        continue;
      }
      this.adopt(a, sem);
      e.tracker = sem;
      touched.add(sem.groupKey);
      this.leaveGroup(sem);
      sem.setInfo(info);
      this.joinGroup(sem);
      touched.add(sem.groupKey);
    }
    // The ids the list leaves out go: their semaphores, where this agent holds them, retire.
    for (const e of a.entries.values()) {
      if (next.has(e.id)) continue;
      const sem = e.tracker;
      if (sem !== undefined && !sem.retired && sem.agentId === a.agentId) touched.add(this.retire(sem, a.lastSampleT ?? now, "unregistered"));
      a.entries.delete(e.id);
    }
    for (const g of touched) this.evalGroup(g, now);
    return this.book.drain();
  }

  /** An agent's `samples` batch; `batch.t` is sample time, `now` the hub's receive time. */
  samples(agentId: string, batch: SamplesBatch, now: number): AlertChange[] {
    return this.feed(agentId, batch, now, undefined);
  }

  /** samples(), as a store pipeline calls it: with the items' entries it found (SampleFeed). */
  feed(agentId: string, batch: SamplesBatch, now: number, feed: SampleFeed | undefined): AlertChange[] {
    const activeRules = feed?.activeRules;
    const entries = feed?.entries;
    const a = this.registry.get(agentId);
    if (a === undefined) {
      activeRules?.fill(0, 0, batch.items.length);
      return [];
    }
    this.heard(a, now);
    if (batch.intervalMs > 0) a.intervalMs = batch.intervalMs;
    a.lastSampleT = a.lastSampleT === null ? batch.t : Math.max(a.lastSampleT, batch.t);
    const items = batch.items;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      const sem = this.trackerFor(a, entries?.[i] ?? this.registry.entry(a, item.id), item.cap);
      const created = this.created;
      const capBefore = sem.cap;
      const shareBefore = sem.share;
      const applied = sem.sample(item, batch.t, batch.intervalMs, this.book, this.th);
      if (activeRules !== undefined) activeRules[i] = sem.target.active ?? 0;
      if (!applied) continue;
      // Evaluated per item, so a batch split into several changes exactly the same way. A split
      // budget's membership settling changes the verdict without changing a cap (fleet.ts).
      if (created || sem.cap !== capBefore || shareChanged(shareBefore, item.share)) this.evalGroup(sem.groupKey, now);
    }
    return this.book.drain();
  }

  /** An agent's `events` batch; each event carries its own sample-time `t`. */
  events(agentId: string, batch: EventsBatch, now: number): AlertChange[] {
    const a = this.registry.get(agentId);
    if (a === undefined) return [];
    this.heard(a, now);
    for (const ev of batch.items) {
      const sem = this.trackerFor(a, this.registry.entry(a, ev.id), 0);
      sem.event(ev, this.book);
      if (this.created) this.evalGroup(sem.groupKey, now);
    }
    return this.book.drain();
  }

  /** Any other message from the agent, refused ones included: it proves the agent alive. */
  touch(agentId: string, now: number): AlertChange[] {
    const a = this.registry.get(agentId);
    if (a !== undefined) this.heard(a, now);
    return this.book.drain();
  }

  /** The agent's socket closed: agent_down at once (unless another agent holds its name). */
  disconnect(agentId: string, now: number): AlertChange[] {
    const a = this.registry.get(agentId);
    if (a === undefined) return [];
    a.connected = false;
    if (a.live) this.goDown(a, now, "disconnected");
    return this.book.drain();
  }

  /** Hub clock: finds connected agents silent for silentIntervals × intervalMs. Call it often. */
  tick(now: number): AlertChange[] {
    const k = this.th.agentDown.silentIntervals;
    for (const a of this.registry.values()) {
      // Not live covers disconnected too: a disconnect is already agent_down, not silence on top.
      if (!a.live) continue;
      const limit = k * a.intervalMs;
      // Dated when the silence crossed the limit, not when a tick noticed: tick spacing changes nothing.
      if (now - a.lastSeen >= limit) this.goDown(a, a.lastSeen + limit, "silent");
    }
    return this.book.drain();
  }

  /** Drop an agent and its semaphores for good (memory bound for churning fleets); resolves their alerts. */
  forget(agentId: string, now: number): AlertChange[] {
    const a = this.registry.get(agentId);
    if (a !== undefined) this.removeAgent(a, now, "agent forgotten", true);
    return this.book.drain();
  }

  /**
   * forget() in parts, for an agent holding many semaphores: it and its semaphores leave the
   * registry at once (no rule or read counts them; their alerts are hidden from reads), and
   * `step(n)` retires up to n of them (resolves their alerts; `left` of them to go), their groups
   * evaluated after the last. Undefined for an unknown agent. Ends as forget() does.
   */
  forgetInParts(agentId: string, now: number): { changes: AlertChange[]; step: (n: number) => AlertChange[]; readonly left: number } | undefined {
    const a = this.registry.get(agentId);
    if (a === undefined) return undefined;
    const sems = [...this.registry.owned(a)];
    for (const sem of sems) this.registry.deleteTracker(sem.key);
    if (sems.length > 0) this.retiring++;
    const at = a.lastSampleT ?? now;
    this.registry.drop(a);
    this.evalDown(a, now, undefined);
    const touched = new Set<string>();
    let next = 0;
    const step = (n: number): AlertChange[] => {
      if (next === sems.length) return this.book.drain();
      const end = Math.min(sems.length, next + n);
      for (; next < end; next++) {
        const sem = sems[next]!;
        // Another agent that took the name over since owns it now.
        if (!sem.retired && sem.agentId === agentId) touched.add(this.retire(sem, at, "agent forgotten"));
      }
      if (next === sems.length) {
        this.retiring--;
        for (const g of touched) this.evalGroup(g, now);
      }
      return this.book.drain();
    };
    return {
      changes: this.book.drain(),
      step,
      get left() {
        return sems.length - next;
      },
    };
  }

  /** Acknowledge an alert (active or resolved). An active order_inversion is resolved at `now`. */
  acknowledge(alertId: string, now: number): AlertChange[] {
    const alert = this.book.byIdGet(alertId);
    if (alert === undefined || (this.retiring > 0 && this.hidden(alert))) return [];
    this.book.acknowledge(alertId, alert.rule === "order_inversion" ? now : undefined);
    return this.book.drain();
  }

  /**
   * Adds fields to an alert's evidence (flight recorder ring, diagnosis: see main/hub/core/alert-evidence.ts).
   * A recorded input like any other: a replay that makes the same calls gets the same alerts.
   */
  annotate(alertId: string, fields: Record<string, unknown>): AlertChange[] {
    this.book.annotate(alertId, fields);
    return this.book.drain();
  }

  /** Change thresholds (validated: TypeError/RangeError); they apply from the next input on. */
  setThresholds(patch: ThresholdsPatch): AlertThresholds {
    this.th = applyThresholds(this.th, patch);
    return this.th;
  }

  // ---- reading it ----

  get thresholds(): AlertThresholds {
    return this.th;
  }

  /** Active alerts, newest raisedAt first. */
  activeAlerts(): Alert[] {
    return this.book.listActive(this.retiring > 0 ? this.hidden : undefined);
  }

  /** Active alerts and the last maxResolved resolved ones, newest raisedAt first. */
  allAlerts(): Alert[] {
    return this.book.listAll(this.retiring > 0 ? this.hidden : undefined);
  }

  alert(id: string): Alert | undefined {
    const a = this.book.byIdGet(id);
    return a === undefined || (this.retiring > 0 && this.hidden(a)) ? undefined : { ...a };
  }

  /** Typed-array bytes the rules' sample windows hold, over every semaphore. */
  windowBytes(): number {
    let n = 0;
    for (const s of this.registry.trackers()) n += s.windowBytes();
    return n;
  }

  /** One entry per (service, name) with at least one live replica, sorted by key. */
  fleet(): FleetEntry[] {
    const out: FleetEntry[] = [];
    for (const g of this.groups.values()) {
      const members = this.liveMembers(g);
      if (members.length > 0) out.push(fleetEntry(g.service, g.name, members));
    }
    return out.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  }

  /**
   * fleet()'s entries for just these group keys (a tracker's `groupKey`), each as fleet() would
   * give it but without the merged histograms, or undefined where the group has no live member
   * left: a view that follows changes recomputes what moved, not the whole fleet.
   */
  fleetOf(groupKeys: Iterable<string>): Map<string, FleetFigures | undefined> {
    const out = new Map<string, FleetFigures | undefined>();
    for (const gk of groupKeys) {
      if (out.has(gk)) continue;
      const g = this.groups.get(gk);
      const members = g === undefined ? [] : this.liveMembers(g);
      out.set(gk, g !== undefined && members.length > 0 ? fleetFigures(g.service, g.name, members) : undefined);
    }
    return out;
  }

  /** Every fleet group's key (a tracker's `groupKey`), unsorted: for taking the fleet a slice at a time. */
  groupKeys(): string[] {
    return [...this.groups.keys()];
  }

  /**
   * The sums of these groups as fleet() would give them (fleetCounts: no merged summaries), in
   * the order given, leaving out a group with no live member.
   */
  fleetCountsOf(groupKeys: readonly string[]): FleetCounts[] {
    const out: FleetCounts[] = [];
    for (const gk of groupKeys) {
      const g = this.groups.get(gk);
      if (g === undefined) continue;
      const members = this.liveMembers(g);
      if (members.length > 0) out.push(fleetCounts(g.service, g.name, members));
    }
    return out;
  }

  /** The group keys of the semaphores agent `agentId` owns (its liveness moves all of them). */
  groupsOf(agentId: string): Set<string> {
    const a = this.registry.get(agentId);
    return a === undefined ? new Set() : this.groupKeysOf(a);
  }

  // ---- internals ----

  private heard(a: RegistryAgent, now: number): void {
    a.connected = true;
    if (now > a.lastSeen) a.lastSeen = now;
    if (a.live) return;
    a.live = true;
    this.evalDown(a, now, undefined);
    this.evalGroupsOf(a, now);
  }

  private goDown(a: RegistryAgent, at: number, cause: DownCause): void {
    a.live = false;
    this.evalDown(a, at, cause);
    this.evalGroupsOf(a, at);
  }

  private evalDown(a: RegistryAgent, at: number, cause: DownCause | undefined): void {
    const key = agentKey(a.service, a.instance);
    evaluateAgentDown(this.book, key, this.registry.peers(key), at, a, cause, this.th.agentDown.silentIntervals);
  }

  /** Retires the agent's semaphores and takes it out of its name's peers; `drop`: out of the registry too. */
  private removeAgent(a: RegistryAgent, now: number, resolution: string, drop: boolean): void {
    const touched = new Set<string>();
    for (const sem of this.registry.owned(a)) touched.add(this.retire(sem, a.lastSampleT ?? now, resolution));
    if (drop) this.registry.drop(a);
    else this.registry.unlist(a);
    this.evalDown(a, now, undefined);
    for (const g of touched) this.evalGroup(g, now);
  }

  /** Retire a semaphore; returns its group key for re-evaluation. */
  private retire(sem: SemaphoreTracker, at: number, resolution: string): string {
    sem.retire(this.book, at, resolution);
    this.leaveGroup(sem);
    // forgetInParts took it out of the registry already (and nothing took its key since).
    if (this.registry.tracker(sem.key) === sem) this.registry.deleteTracker(sem.key);
    return sem.groupKey;
  }

  /**
   * The tracker of the agent's entry `e` (an id in its samples or events), created if never
   * registered (then `created` is true until the next call: no result object per sample item).
   */
  private trackerFor(a: RegistryAgent, e: RegistryEntry, cap: number): SemaphoreTracker {
    this.created = false;
    const cached = e.tracker;
    if (cached !== undefined && !cached.retired) {
      this.adopt(a, cached);
      return cached;
    }
    const sem = this.registry.tracker(e.key);
    if (sem !== undefined) {
      this.adopt(a, sem);
      return (e.tracker = sem);
    }
    const created = (e.tracker = new SemaphoreTracker(a.agentId, a.service, a.instance, implicitInfo(e.id, cap), false, a.intervalMs, this.book, this.pools));
    this.registry.addTracker(created);
    this.joinGroup(created);
    this.created = true;
    return created;
  }

  /** A semaphore reported by another agent under the same name now belongs to the reporter. */
  private adopt(a: RegistryAgent, sem: SemaphoreTracker): void {
    sem.agentId = a.agentId;
  }

  private joinGroup(sem: SemaphoreTracker): void {
    const gk = sem.groupKey;
    let g = this.groups.get(gk);
    if (g === undefined) this.groups.set(gk, (g = { service: sem.service, name: sem.info.name, keys: new Set() }));
    g.keys.add(sem.key);
  }

  private leaveGroup(sem: SemaphoreTracker): void {
    const gk = sem.groupKey;
    const g = this.groups.get(gk);
    if (g === undefined) return;
    g.keys.delete(sem.key);
    if (g.keys.size === 0) this.groups.delete(gk);
  }

  private liveMembers(g: Group): FleetMember[] {
    const out: FleetMember[] = [];
    for (const key of g.keys) {
      const sem = this.registry.tracker(key);
      if (sem !== undefined && this.registry.get(sem.agentId)?.live === true) out.push(sem.member());
    }
    return out;
  }

  private evalGroup(gk: string, at: number): void {
    const g = this.groups.get(gk);
    if (g === undefined) {
      this.book.resolve("over_budget", gk, at, { resolution: "no members left" });
      return;
    }
    // The rule raises only where a member declares a budget, and resolves only what is active:
    // with neither, its answer is known without building every member (each new name is a
    // group of its own, evaluated as it registers).
    if (this.book.get("over_budget", gk) === undefined && !this.anyBudget(g)) return;
    evaluateOverBudget(this.book, g.service, g.name, this.liveMembers(g), at);
  }

  /** Whether a member of `g`, live or not, declares a budget. */
  private anyBudget(g: Group): boolean {
    for (const key of g.keys) if (this.registry.tracker(key)?.info.budget !== undefined) return true;
    return false;
  }

  private groupKeysOf(a: RegistryAgent): Set<string> {
    const out = new Set<string>();
    for (const sem of this.registry.owned(a)) out.add(sem.groupKey);
    return out;
  }

  private evalGroupsOf(a: RegistryAgent, at: number): void {
    for (const g of this.groupKeysOf(a)) this.evalGroup(g, at);
  }
}
