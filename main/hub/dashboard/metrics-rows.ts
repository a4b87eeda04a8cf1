// What one /metrics render reads (metrics.ts), taken a slice at a time at its start so that every
// family agrees on who is there. Each semaphore's numbers go into one Float64Array, copied from
// the engine's latest sample without building it: a render lasts a second or more, and an object
// per semaphore (with the Sample it would build) living that long is copied by every young GC
// meanwhile and then promoted. The fleet is summed a slice of groups at a time, without the
// merged histograms /metrics does not export.
import type { FleetCounts } from "../../../shared/alerts/index.js";
import type { SemaphoreTracker } from "../../../shared/alerts/semaphore-tracker.js";
import { HOLD_AT, PAIRS_AT, WAIT_AT } from "../../../shared/protocol/sample-numbers.js";
import { SAMPLE_NUMBERS, SUMMARY_NUMBERS, type AgentState, type SampleNumber, type SemaphoreStatus } from "../../../shared/protocol/index.js";
import type { HubCore } from "../core/hub-core.js";

/** Semaphores or fleet groups read per turn of the event loop (a few ms on a loaded core). */
const READ_SLICE = 500;

// A row: 1 once sampled, the current cap, the latest sample time (NaN: none), then the latest
// sample's numbers as sample-numbers.ts lays them out.
const SAMPLED = 0;
const CAP = 1;
const LAST_T = 2;
const NUMBERS = 3;
const STRIDE = NUMBERS + PAIRS_AT;

export type SummaryNumber = (typeof SUMMARY_NUMBERS)[number];
const NUMBER_AT = Object.fromEntries(SAMPLE_NUMBERS.map((k, i) => [k, NUMBERS + i])) as Record<SampleNumber, number>;
const SUMMARY_AT = { waitMs: NUMBERS + WAIT_AT, holdMs: NUMBERS + HOLD_AT } as const;
const SUMMARY_NUMBER_AT = Object.fromEntries(SUMMARY_NUMBERS.map((k, i) => [k, i])) as Record<SummaryNumber, number>;

/** The semaphores of one render: row i is trackers[i] as it was when its slice was read. */
export class SemaphoreRows {
  private readonly values: Float64Array;
  private readonly statuses: SemaphoreStatus[];

  constructor(readonly trackers: readonly SemaphoreTracker[]) {
    this.values = new Float64Array(trackers.length * STRIDE);
    this.statuses = new Array<SemaphoreStatus>(trackers.length);
  }

  get length(): number {
    return this.trackers.length;
  }

  /** Reads rows [from, to) from their trackers; `latestT` gives a key's latest sample time. */
  read(from: number, to: number, latestT: (key: string) => number | null): void {
    const v = this.values;
    for (let i = from; i < to; i++) {
      const t = this.trackers[i];
      const at = i * STRIDE;
      v[at + SAMPLED] = t.latestNumbers(v, at + NUMBERS) ? 1 : 0;
      v[at + CAP] = t.cap;
      v[at + LAST_T] = latestT(t.key) ?? Number.NaN;
      this.statuses[i] = t.status();
    }
  }

  labels(i: number): { service: string; instance: string; semaphore: string } {
    const t = this.trackers[i];
    return { service: t.service, instance: t.instance, semaphore: t.info.id };
  }

  sampled(i: number): boolean {
    return this.values[i * STRIDE + SAMPLED] === 1;
  }

  cap(i: number): number {
    return this.values[i * STRIDE + CAP];
  }

  /** The latest sample's number `k`, or `before` while there is no sample. */
  number(i: number, k: SampleNumber, before: number): number {
    return this.sampled(i) ? this.values[i * STRIDE + NUMBER_AT[k]] : before;
  }

  /** Number `k` of the latest sample's summary `field`; undefined without a sample or when it counted nothing. */
  summary(i: number, field: keyof typeof SUMMARY_AT, k: SummaryNumber): number | undefined {
    if (!this.sampled(i)) return undefined;
    const at = i * STRIDE + SUMMARY_AT[field];
    return this.values[at + SUMMARY_NUMBER_AT.count] === 0 ? undefined : this.values[at + SUMMARY_NUMBER_AT[k]];
  }

  /** The latest sample's time (agent clock, ms), if there is one. */
  lastT(i: number): number | undefined {
    const t = this.values[i * STRIDE + LAST_T];
    return Number.isNaN(t) ? undefined : t;
  }

  status(i: number): SemaphoreStatus {
    return this.statuses[i];
  }
}

export interface Rows {
  readonly semaphores: SemaphoreRows;
  /** fleet()'s groups in its order (by key), their sums only. */
  readonly fleet: readonly FleetCounts[];
  readonly agents: readonly AgentState[];
}

/** Every semaphore, the fleet and the agents, read READ_SLICE at a time with the event loop free between. */
export async function readRows(core: HubCore): Promise<Rows> {
  const semaphores = new SemaphoreRows([...core.registry.trackers()]);
  const latestT = (key: string) => core.history.get(key)?.latestT() ?? null;
  for (let i = 0; i < semaphores.length; i += READ_SLICE) {
    semaphores.read(i, Math.min(i + READ_SLICE, semaphores.length), latestT);
    await core.turns.next("scrapes");
  }
  // Totals of semaphores that are gone stop being exported, and are dropped.
  const registry = core.registry;
  for (const key of core.totals.keys()) if (registry.tracker(key) === undefined) core.totals.delete(key);
  const groups = core.engine.groupKeys().sort();
  const fleet: FleetCounts[] = [];
  for (let i = 0; i < groups.length; i += READ_SLICE) {
    await core.turns.next("scrapes");
    for (const entry of core.engine.fleetCountsOf(groups.slice(i, i + READ_SLICE))) fleet.push(entry);
  }
  return { semaphores, fleet, agents: core.registry.agents() };
}
