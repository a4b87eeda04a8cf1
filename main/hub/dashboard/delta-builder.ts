// The /ui delta as JSON text, made a slice at a time (slices.ts), and what dashboards hold that it
// is computed against. When every semaphore of a big fleet samples each second, a delta carries
// nearly all of them and moves nearly every fleet group: shaping, recomputing and serialising
// that in one piece held agents' acks for hundreds of ms. Each entry is serialised as it is made,
// so socket.io sends the text as it is (raw-json.ts) instead of walking a big object.
import { FleetChangeTracker, toPatch } from "../../../shared/ui-protocol/index.js";
import type { SemaphoreFigures } from "../../../shared/alerts/semaphore-tracker.js";
import type { SemaphoreInfo } from "../../../shared/protocol/index.js";
import type { Changes } from "../core/change-tracker.js";
import type { HubCore } from "../core/hub-core.js";
import { FleetView, type MovedGroups } from "./fleet-view.js";
import { JsonBytes } from "./json-bytes.js";
import type { BuiltSnapshot } from "./snapshot-builder.js";
import { identityOf, sameIdentity, type UiIdentity } from "./ui-identity.js";
import { uiSemaphore } from "./views.js";

/** Semaphores shaped, or fleet entries offered, between two yields. */
const BATCH = 16;

/** Keys or fleet entries of a snapshot marked as held between two yields. */
const TAKEN_BATCH = 512;

/** A delta's JSON, as UTF-8 (json-bytes.ts), and its seq. */
export interface BuiltDelta {
  readonly seq: number;
  readonly json: JsonBytes;
}

/** A delta's fields: each `"name":value`, as text, or as bytes written while it was built. */
type Parts = (string | JsonBytes)[];

export class UiDeltas {
  /** The seq of the last delta sent. */
  seq = 0;
  private lastRejected = -1;
  /** hub.admission as last sent, as JSON (it changes seldom: compared whole). */
  private lastAdmission = "";
  /** Keys dashboards have been told about, to say which went away. */
  private known = new Set<string>();
  /** The registration each key's config was last sent in a delta with (snapshots carry every config). */
  private readonly sentInfo = new Map<string, SemaphoreInfo>();
  /** Keys dashboards may hold a config for (from a snapshot or a delta): one unregistered since is said to be. */
  private configured = new Set<string>();
  /**
   * The identity each key was last sent with in a delta (UiSemaphorePatch: later entries leave it
   * out). Dashboards that took a snapshot since hold the snapshot's instead where it differs: then
   * the key has no entry here, so the next delta carries its identity to everyone.
   */
  private readonly sentIdentity = new Map<string, UiIdentity>();
  /** The fleet entries dashboards hold: a delta carries only those that changed. */
  private readonly fleet = new FleetChangeTracker();
  /** The fleet as the last delta computed it, group by group (snapshots take it from here). */
  readonly fleetView: FleetView;

  constructor(private readonly core: HubCore) {
    this.fleetView = new FleetView(core);
  }

  /** No dashboard holds anything: forget what they were told. */
  clear(): void {
    this.fleetView.clear();
    this.known.clear();
    this.sentInfo.clear();
    this.configured.clear();
    this.sentIdentity.clear();
    this.fleet.clear();
  }

  /**
   * Dashboards now hold `built` (with `everyone`: all of them, nothing else; `alone`: no other
   * dashboard holds anything). A generator (slices.ts): a snapshot holds thousands of keys.
   */
  *taken(built: BuiltSnapshot, everyone: boolean, alone: boolean): Generator<void, void, void> {
    if (everyone) {
      this.known = new Set(built.keys);
      this.configured = new Set(built.configured);
      // Every dashboard holds every identity now; keys the snapshot dropped must not linger.
      this.sentIdentity.clear();
    } else {
      // A key the others hold that the snapshot lacks (gone while it was built in slices, maybe back
      // since) is not held by its takers: the next delta carries it whole (identity and config) if
      // it is still there, or says it went.
      const inSnapshot = new Set(built.keys);
      let n = 0;
      for (const key of this.known) {
        if (!inSnapshot.has(key)) {
          this.sentIdentity.delete(key);
          this.sentInfo.delete(key);
          this.core.changes.key(key);
        }
        if (++n % TAKEN_BATCH === 0) yield;
      }
      for (let i = 0; i < built.keys.length; i++) {
        const key = built.keys[i];
        this.known.add(key);
        // Read late in the build, the snapshot may show an identity the others were never sent (a
        // rename since the last delta, maybe undone before the next, which then sees nothing new).
        const sent = this.sentIdentity.get(key);
        if (sent !== undefined && !sameIdentity(sent, built.identities[i])) {
          this.sentIdentity.delete(key);
          this.core.changes.key(key);
        }
        if (i % TAKEN_BATCH === TAKEN_BATCH - 1) yield;
      }
      for (let i = 0; i < built.configured.length; i++) {
        this.configured.add(built.configured[i]);
        if (i % TAKEN_BATCH === TAKEN_BATCH - 1) yield;
      }
    }
    // Alone, they hold exactly this fleet; with others, the next delta brings everyone level.
    const byAll = everyone || alone;
    if (byAll) this.fleet.clear();
    for (let i = 0; i < built.fleet.length; i++) {
      this.fleet.entryTaken(built.fleet[i], byAll);
      if (i % TAKEN_BATCH === TAKEN_BATCH - 1) yield;
    }
    // Groups the snapshot lacks (gone meanwhile) are still held by the others, not by its takers.
    if (!byAll) {
      const has = new Set<string>();
      for (const f of built.fleet) has.add(f.key);
      this.fleet.missingTaken((k) => has.has(k));
    }
  }

  /**
   * The delta for `changes` (taken since the last delta), or undefined when there is nothing to
   * say. Its seq is taken when it is done, so a build abandoned half way (a replay's resync)
   * costs no seq; what it marked as sent is then reset by the snapshot that replaces it.
   */
  *build(changes: Changes): Generator<void, BuiltDelta | undefined, void> {
    const core = this.core;
    const rejected = core.rejected;
    const admission = core.admission?.();
    const admissionJson = admission === undefined ? "" : JSON.stringify(admission);
    const quiet =
      changes.keys.size === 0 && !changes.structure && changes.agents.size === 0 && changes.removedAgents.size === 0 &&
      changes.alerts.length === 0 && !changes.thresholds && rejected === this.lastRejected && admissionJson === this.lastAdmission;
    if (quiet) return undefined;
    this.lastRejected = rejected;
    const parts: Parts = [];
    if (admission !== undefined && admissionJson !== this.lastAdmission) parts.push(`"admission":${admissionJson}`);
    this.lastAdmission = admissionJson;

    const keys = [...changes.keys];
    const groups = new Set<string>();
    const removed: string[] = [];
    if (keys.length > 0 || changes.structure) {
      const registry = core.registry;
      if (changes.structure) {
        // Semaphores may have gone: compare every key dashboards know with the registry's.
        // A slice at a time: at a flood of new names every delta has structure, over 10,000 keys.
        const current = new Set<string>();
        let n = 0;
        for (const t of registry.trackers()) {
          current.add(t.key);
          if (++n % TAKEN_BATCH === 0) yield;
        }
        for (const k of this.known) {
          if (!current.has(k)) removed.push(k);
          if (++n % TAKEN_BATCH === 0) yield;
        }
        for (const k of removed) {
          this.sentInfo.delete(k);
          this.configured.delete(k);
          this.sentIdentity.delete(k);
        }
        this.known = current;
        yield;
      }
      // A config goes out once per registration: dashboards keep the one they have.
      const configChanged = (key: string, info: SemaphoreInfo): boolean => {
        if (this.sentInfo.get(key) === info) return false;
        this.sentInfo.set(key, info);
        this.configured.add(key);
        return true;
      };
      const patches = new JsonBytes(`"semaphores":[`);
      const unconfigured: string[] = [];
      for (let i = 0; i < keys.length; i++) {
        const tracker = registry.tracker(keys[i]);
        // Alert keys (an agent's, a group's) have no tracker; a semaphore gone since is in the next delta.
        if (tracker !== undefined) {
          groups.add(tracker.groupKey);
          const s = tracker.figures();
          patches.item(JSON.stringify(toPatch(uiSemaphore(core, s, configChanged), this.identityChanged(s))));
          this.known.add(s.key);
          // Left out of its agent's last register but still reported: a patch cannot drop a config.
          if (!tracker.registered && this.configured.delete(s.key)) {
            this.sentInfo.delete(s.key);
            unconfigured.push(s.key);
          }
        }
        if (i % BATCH === BATCH - 1) yield;
      }
      if (patches.count > 0) {
        patches.write("]");
        parts.push(patches);
      }
      // One registered again while the delta was built (its agent's messages land between slices)
      // has its whole entry above: not gone.
      const gone = removed.filter((k) => !this.known.has(k));
      if (gone.length > 0) parts.push(`"removed":${JSON.stringify(gone)}`);
      if (unconfigured.length > 0) parts.push(`"unconfigured":${JSON.stringify(unconfigured)}`);
    }
    if (changes.agents.size > 0) parts.push(`"agents":${JSON.stringify(core.registry.agents().filter((a) => changes.agents.has(a.agentId)))}`);
    if (changes.removedAgents.size > 0) parts.push(`"removedAgents":${JSON.stringify([...changes.removedAgents])}`);
    if (changes.alerts.length > 0) parts.push(`"alerts":${JSON.stringify(changes.alerts)}`);
    if (keys.length > 0 || changes.structure || changes.agents.size > 0 || changes.removedAgents.size > 0) {
      const moved: MovedGroups = new Map();
      const rebuilt = !this.fleetView.current || changes.structure || changes.removedAgents.size > 0;
      yield* this.fleetView.update(changes, moved, groups);
      yield* this.fleetParts(moved, rebuilt, parts);
    }
    if (changes.thresholds) parts.push(`"thresholds":${JSON.stringify(core.engine.thresholds)}`);
    const seq = ++this.seq;
    const json = JsonBytes.of(`{"seq":${seq},"serverTime":${core.now()},"rejected":${rejected}`);
    for (const part of parts) {
      json.write(",");
      if (typeof part === "string") json.write(part);
      else json.append(part);
    }
    json.write("}");
    return { seq, json };
  }

  /** The fleet entries dashboards do not hold yet and the keys gone, as the delta's fields. */
  private *fleetParts(moved: MovedGroups, rebuilt: boolean, parts: Parts): Generator<void, void, void> {
    const changed = new JsonBytes(`"fleet":[`);
    const removed: string[] = [];
    let i = 0;
    for (const [key, f] of moved) {
      if (f === undefined) {
        if (this.fleet.drop(key)) removed.push(key);
      } else if (this.fleet.offer(f)) changed.item(JSON.stringify(f));
      if (++i % BATCH === 0) yield;
    }
    // Recomputed whole: whatever dashboards hold that the view no longer has is gone too.
    if (rebuilt) removed.push(...this.fleet.dropMissing((key) => this.fleetView.entry(key) !== undefined));
    if (changed.count > 0) {
      changed.write("]");
      parts.push(changed);
    }
    if (removed.length > 0) parts.push(`"removedFleet":${JSON.stringify(removed)}`);
  }

  /**
   * Whether a delta must carry `s`'s identity: dashboards have not had it from a delta yet, or it
   * changed since (a new agent, a register). A dashboard that connected later has it from its snapshot.
   */
  private identityChanged(s: SemaphoreFigures): boolean {
    const sent = this.sentIdentity.get(s.key);
    if (sent !== undefined && sameIdentity(sent, s)) return false;
    this.sentIdentity.set(s.key, identityOf(s));
    return true;
  }
}
