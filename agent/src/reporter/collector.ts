// The one consumer of sample(): each interval, every tracked item is sampled exactly once
// (sample() returns counts since its previous call, so a second caller would steal counts).
// It also keeps the list the hub was told about (register) in step with what gets sampled: the
// first of the listed items, as many as the hub takes; the local exporters see them all.
import { LIMITS, MANY_SEMAPHORES_PER_AGENT, type Sample, type SemaphoreInfo } from "../../../shared/protocol/types.js";
import { hasActivity } from "../../../shared/protocol/sample-activity.js";
import { trackedAll, type Tracked } from "../registry.js";
import { jsonBytes, PACKET_BUDGET_BYTES } from "./packet-split.js";
import { sanitizeInfo, sanitizeSample, wireId } from "./sanitize.js";

interface Entry {
  id: string;
  tracked: Tracked;
  /** Whether a sample of it has been reported, and its gauges in the last one. */
  sent: boolean;
  cap: number;
  inUse: number;
  available: number;
}

export class Collector {
  private readonly extras = new Set<Tracked>();
  private entries: Entry[] = [];
  private entryOf = new Map<Tracked, Entry>();
  private infoList: SemaphoreInfo[] = [];
  /** How many of the listed items (the first ones) the hub is told about. */
  private hubCount = 0;
  private idSet: ReadonlySet<string> = new Set();
  private dirty = true;
  private version = 0;
  /** describe() or sample() calls that threw; the item is skipped, the agent goes on. */
  errors = 0;
  /** Tracked items the hub is not told about: over its limit, a duplicate id, or a failing describe(). */
  omitted = 0;
  /** Of the last collect()'s items, how many (the first ones) are the hub's to get. */
  hubItems = 0;
  /** Semaphores the hub takes (semaphoreLimit of its accepted features). */
  private limit: number = LIMITS.maxSemaphoresPerAgent;
  /** Whether `register` may go in parts; if not, the list is cut to what one packet holds. */
  private inParts = false;

  /** What the hub accepted: how many items it takes, and whether `register` may go in parts. */
  configure(limit: number, inParts: boolean): void {
    if (limit === this.limit && inParts === this.inParts) return;
    this.limit = limit;
    this.inParts = inParts;
    this.dirty = true;
  }

  /** Adds an item outside the process registry (a custom Tracked); returns its untrack(). */
  track(t: Tracked): () => void {
    this.extras.add(t);
    this.dirty = true;
    return () => {
      if (this.extras.delete(t)) this.dirty = true;
    };
  }

  markDirty(): void {
    this.dirty = true;
  }

  get isDirty(): boolean {
    return this.dirty;
  }

  /** Bumped each time the list changes; the connection re-registers when it differs from what it sent. */
  get listVersion(): number {
    this.refreshIfDirty();
    return this.version;
  }

  /** The `register` list: what every sample batch refers to (the first `hubItems` of collect()'s). */
  infos(): SemaphoreInfo[] {
    this.refreshIfDirty();
    return this.infoList;
  }

  /** The listed item the hub knows by this (wire) id. */
  find(id: string): Tracked | undefined {
    this.refreshIfDirty();
    for (const e of this.entries) if (e.id === id) return e.tracked;
    return undefined;
  }

  /** Wire ids of every listed item (what the local exporters describe, changed or not). */
  ids(): ReadonlySet<string> {
    this.refreshIfDirty();
    return this.idSet;
  }

  /**
   * One interval: every listed item sampled once, made fit for the wire. `changedOnly` (the hub
   * accepted "changed_only"): an item with nothing new since its last reported sample is left out,
   * without being sampled when it can say so itself (Tracked.unchangedSinceSample). Nothing new:
   * no counts, no waiter, no `global`, `share` or `limit` block, and the same cap, in use and available as last sent.
   */
  collect(nowEpochMs: number, changedOnly = false): Sample[] {
    this.refreshIfDirty();
    const out: Sample[] = [];
    let hubItems = 0;
    for (let i = 0; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      try {
        const t = e.tracked;
        if (changedOnly && e.sent && t.unchangedSinceSample?.() === true) continue;
        const s = sanitizeSample(t.sample(nowEpochMs), e.id);
        if (changedOnly && e.sent && quietLike(s, e)) continue;
        e.sent = true;
        e.cap = s.cap;
        e.inUse = s.inUse;
        e.available = s.available;
        out.push(s);
        if (i < this.hubCount) hubItems++;
      } catch {
        this.errors++;
      }
    }
    this.hubItems = hubItems;
    return out;
  }

  private refreshIfDirty(): void {
    if (!this.dirty) return;
    this.dirty = false;
    const entries: Entry[] = [];
    const infos: SemaphoreInfo[] = [];
    const ids = new Set<string>();
    let omitted = 0;
    for (const t of [...trackedAll(), ...this.extras]) {
      try {
        const info = sanitizeInfo(t.describe());
        // The registry keys by id already; this also covers extras, and ids equal after truncation.
        const id = wireId(t.id);
        info.id = id;
        if (ids.has(id) || entries.length >= MANY_SEMAPHORES_PER_AGENT) {
          omitted++;
          continue;
        }
        ids.add(id);
        // An item listed before keeps what it last reported: a new list is not new state.
        entries.push(this.entryOf.get(t) ?? { id, tracked: t, sent: false, cap: 0, inUse: 0, available: 0 });
        infos.push(info);
      } catch {
        this.errors++;
        omitted++;
      }
    }
    let hubCount = Math.min(entries.length, this.limit);
    infos.length = hubCount;
    // A `register` that cannot go in parts is one packet, so a list too big for it is cut.
    while (!this.inParts && hubCount > 0 && jsonBytes({ semaphores: infos }) > PACKET_BUDGET_BYTES) {
      hubCount -= Math.max(1, Math.ceil(hubCount / 10));
      infos.length = hubCount;
    }
    this.entries = entries;
    this.entryOf = new Map(entries.map((e) => [e.tracked, e]));
    this.idSet = new Set(entries.map((e) => e.id));
    this.infoList = infos;
    this.hubCount = hubCount;
    this.omitted = omitted + entries.length - hubCount;
    this.version++;
  }
}

/** A sample that says nothing the previous one reported did not (Collector.collect). */
function quietLike(s: Sample, last: Entry): boolean {
  return !hasActivity(s) && s.global === undefined && s.share === undefined && s.limit === undefined && s.opening === undefined && s.cap === last.cap && s.inUse === last.inUse && s.available === last.available;
}
