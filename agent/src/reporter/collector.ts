// The one consumer of sample(): each interval, every tracked item is sampled exactly once
// (sample() returns counts since its previous call, so a second caller would steal counts).
// It also keeps the list the hub was told about (register) in step with what gets sampled.
import { LIMITS, type Sample, type SemaphoreInfo } from "../../../shared/protocol/types.js";
import { trackedAll, type Tracked } from "../registry.js";
import { jsonBytes, PACKET_BUDGET_BYTES } from "./packet-split.js";
import { sanitizeInfo, sanitizeSample, wireId } from "./sanitize.js";

interface Entry {
  id: string;
  tracked: Tracked;
}

export class Collector {
  private readonly extras = new Set<Tracked>();
  private entries: Entry[] = [];
  private infoList: SemaphoreInfo[] = [];
  private dirty = true;
  private version = 0;
  /** describe() or sample() calls that threw; the item is skipped, the agent goes on. */
  errors = 0;
  /** Tracked items left out: over the protocol's 1,000 per agent, a duplicate id, or a failing describe(). */
  omitted = 0;

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

  /** The `register` list: what every sample batch refers to. */
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

  /** One interval: every listed item sampled once, made fit for the wire. */
  collect(nowEpochMs: number): Sample[] {
    this.refreshIfDirty();
    const out: Sample[] = [];
    for (const e of this.entries) {
      try {
        out.push(sanitizeSample(e.tracked.sample(nowEpochMs), e.id));
      } catch {
        this.errors++;
      }
    }
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
        if (ids.has(id) || entries.length >= LIMITS.maxSemaphoresPerAgent) {
          omitted++;
          continue;
        }
        ids.add(id);
        entries.push({ id, tracked: t });
        infos.push(info);
      } catch {
        this.errors++;
        omitted++;
      }
    }
    // `register` cannot be split (it is the full list), so a list too big for one packet is cut.
    while (infos.length > 0 && jsonBytes({ semaphores: infos }) > PACKET_BUDGET_BYTES) {
      const cut = Math.max(1, Math.ceil(infos.length / 10));
      infos.length -= cut;
      entries.length -= cut;
      omitted += cut;
    }
    this.entries = entries;
    this.infoList = infos;
    this.omitted = omitted;
    this.version++;
  }
}
