// Everything the engine keeps for one semaphore `<service>/<instance>/<id>`: its registration,
// its last sample, and one state object per per-semaphore rule, each O(window) in size.
import type { AgentEvent, AlertRule, Sample, SampleLimit, SampleShare, SemaphoreInfo, SemaphoreState, SemaphoreStatus } from "../protocol/types.js";
import { LatestSample, type SampleFigures } from "../protocol/latest-sample.js";
import { semaphoreKey } from "../protocol/types.js";
import { RULE_BIT, type AlertBook } from "./alert-book.js";
import { fleetKey, type FleetMember } from "./fleet.js";
import { semaphoreLabel } from "./format.js";
import { ConvoyRule, convoyHolds, feedConvoyClear } from "./rules/convoy-rule.js";
import { DoubleReleaseRule } from "./rules/double-release-rule.js";
import { LeakRule, leakCheckHolds } from "./rules/leak-rule.js";
import { OrderInversionRule } from "./rules/order-inversion-rule.js";
import { feedStarvationClear, StarvationRule, starving } from "./rules/starvation-rule.js";
import { TIMEOUTS_FIELDS, TimeoutsRule } from "./rules/timeouts-rule.js";
import { firstWindowLength, RUN_LENGTH } from "./window.js";
import { SlotPool } from "../history/slot-pool.js";
import type { AlertThresholds } from "./thresholds.js";
import type { AlertTarget, SampleTime, SemaphoreContext } from "./types.js";

/** Rules keyed `<service>/<instance>/<id>`, in the order the engine applies them to a sample. */
export const SEMAPHORE_RULES: readonly AlertRule[] = ["leak", "double_release", "convoy", "starvation", "timeouts", "order_inversion"];

/** What an id seen in samples or events but never registered is taken to be. */
export function implicitInfo(id: string, cap: number): SemaphoreInfo {
  return {
    id,
    name: id,
    kind: "unknown",
    cap,
    queue: "unknown",
    maxWaiters: null,
    acquireTimeoutMs: null,
    leaseTimeoutMs: null,
    leakThresholdMs: null,
    scope: "process",
  };
}

// The numbers every sample updates, for all of a semaphore's rules, in one Float64Array (`ruleState`)
// at these indices. A sample of each of 10,000 semaphores comes between two of this one's, so what
// a sample touches is cold every time: as fields of the rule objects these doubles would be boxes,
// each one more dependent load behind its object.
const LAST_T = 0;
const LEAK_LAST_GOOD_T = 1;
const CONVOY_FILLING = 2;
const CONVOY_CRITICAL = 3;
const CONVOY_CLEAR = 4;
const STARVATION_CLEAR = CONVOY_CLEAR + RUN_LENGTH;
const TIMEOUTS_CLEAR = STARVATION_CLEAR + RUN_LENGTH;
const STATE_LENGTH = TIMEOUTS_CLEAR + RUN_LENGTH;

/** Slabs of trackers' pooled numbers: ~580 trackers' rule states, ~180 first timeouts windows. */
const TRACKER_SLAB_BYTES = 64 * 1024;

/**
 * Where an engine's trackers take their rule state and their timeouts window's first buffer from
 * (slots of small slabs: a Float64Array of its own is an ArrayBuffer of its own, and a flood of
 * new semaphores made thousands in one turn), given back when they retire.
 */
export interface TrackerPools {
  readonly state: SlotPool;
  readonly timeouts: SlotPool;
}

export function trackerPools(): TrackerPools {
  return { state: new SlotPool(STATE_LENGTH, TRACKER_SLAB_BYTES), timeouts: new SlotPool(firstWindowLength(TIMEOUTS_FIELDS), TRACKER_SLAB_BYTES) };
}

/** A new tracker's state: no sample yet, the leak check never seen holding, every run empty (0). */
function newRuleState(pool: SlotPool): Float64Array {
  const st = pool.take().fill(0);
  st[LAST_T] = -Infinity;
  st[LEAK_LAST_GOOD_T] = -Infinity;
  return st;
}

/**
 * A retired tracker's state, its own given back: a sample time no sample passes, so whatever
 * still held the tracker could apply nothing to it. Never written (retire is the last write).
 */
const RETIRED_STATE = new Float64Array(STATE_LENGTH).fill(Infinity);

/** A SemaphoreState whose `last` is `S` (a Sample, or one without histograms). */
export type SemaphoreStateOf<S extends SampleFigures> = Omit<SemaphoreState, "last"> & { last: S | null };
/** A semaphore's state with its latest sample's figures, no histograms (SemaphoreTracker.figures). */
export type SemaphoreFigures = SemaphoreStateOf<SampleFigures>;

/** One SampleTime for every sample: the rules read it during their call and keep none of it. */
const SAMPLE_TIME: { -readonly [K in keyof SampleTime]: SampleTime[K] } = { t: 0, intervalMs: 0, maxGapMs: 0 };

export class SemaphoreTracker implements SemaphoreContext {
  readonly key: string;
  readonly target: AlertTarget;
  /** The agent that registered (or last reported) it. */
  agentId: string;
  info: SemaphoreInfo;
  /** False for an id only ever seen in samples or events. */
  registered: boolean;
  /** The latest sample's cap (a cap can change at run time), else the registered one. */
  cap: number;
  /** The latest sample, as numbers (latest-sample.ts: the wire object is not kept). */
  private readonly latest: LatestSample;
  intervalMs: number;
  /** Dropped by the engine (retire()): a reference kept elsewhere must look it up again. */
  retired = false;
  /** groupKey, and the name it was made for. */
  private group = "";
  private groupName: string | undefined = undefined;

  private ruleState: Float64Array;
  private readonly timeouts: TimeoutsRule;
  // The other rules' objects are made the first time a sample or event needs one: until then all
  // a rule keeps is in `ruleState` (see sample()), and most semaphores never need most rules.
  private leakRule: LeakRule | undefined = undefined;
  private doubleReleaseRule: DoubleReleaseRule | undefined = undefined;
  private convoyRule: ConvoyRule | undefined = undefined;
  private starvationRule: StarvationRule | undefined = undefined;
  private orderInversionRule: OrderInversionRule | undefined = undefined;

  constructor(
    agentId: string,
    readonly service: string,
    readonly instance: string,
    info: SemaphoreInfo,
    registered: boolean,
    intervalMs: number,
    /** Its alerts' book, for status(). */
    private readonly book: AlertBook,
    /** Its engine's (trackerPools): its rule state and first timeouts window come from them. */
    private readonly pools: TrackerPools = trackerPools(),
  ) {
    this.ruleState = newRuleState(pools.state);
    this.timeouts = new TimeoutsRule(this.ruleState, TIMEOUTS_CLEAR, pools.timeouts);
    this.key = semaphoreKey(service, instance, info.id);
    this.target = { key: this.key, service, instance, semaphore: info.id, active: 0 };
    this.latest = new LatestSample(info.id);
    this.agentId = agentId;
    this.info = info;
    this.registered = registered;
    this.cap = info.cap;
    this.intervalMs = intervalMs;
  }

  /** The latest sample applied, rebuilt from numbers afresh at each read, or null. */
  get last(): Sample | null {
    return this.latest.get();
  }

  /**
   * The latest sample's numbers copied to `into` from `at` without building the Sample
   * (LatestSample.copyNumbers: sample-numbers.ts's layout up to PAIRS_AT); false before the first.
   */
  latestNumbers(into: Float64Array, at: number): boolean {
    return this.latest.copyNumbers(into, at);
  }

  get label(): string {
    return semaphoreLabel(this.info.name, this.service, this.instance);
  }

  /** `<service>/<name>`: the fleet group it belongs to (made once per name: the engine asks several times per register). */
  get groupKey(): string {
    if (this.groupName !== this.info.name) {
      this.groupName = this.info.name;
      this.group = fleetKey(this.service, this.info.name);
    }
    return this.group;
  }

  setInfo(info: SemaphoreInfo): void {
    this.info = info;
    this.registered = true;
    this.cap = info.cap;
  }

  private get leak(): LeakRule {
    return (this.leakRule ??= new LeakRule(this.ruleState, LEAK_LAST_GOOD_T));
  }

  private get doubleRelease(): DoubleReleaseRule {
    return (this.doubleReleaseRule ??= new DoubleReleaseRule());
  }

  private get convoy(): ConvoyRule {
    return (this.convoyRule ??= new ConvoyRule(this.ruleState, CONVOY_CLEAR, CONVOY_FILLING, CONVOY_CRITICAL));
  }

  private get starvation(): StarvationRule {
    return (this.starvationRule ??= new StarvationRule(this.ruleState, STARVATION_CLEAR));
  }

  private get orderInversion(): OrderInversionRule {
    return (this.orderInversionRule ??= new OrderInversionRule());
  }

  /**
   * Reads what sample() touches on every call (its state, the latest sample's numbers, the
   * timeouts window), changing nothing, and returns a number made of it. A caller about to apply
   * several semaphores' samples touches them all first, so that their cache misses overlap rather
   * than come one after another (the hub's StorePipeline.store).
   */
  warm(): number {
    return this.ruleState[LAST_T] + (this.target.active ?? 0) + this.latest.warm() + this.timeouts.warm();
  }

  /**
   * Apply one sample taken at batch time `t`. A sample not newer than the last one applied (a
   * re-sent or reordered batch) is ignored, so windows only ever move forward; returns whether
   * it was applied.
   */
  sample(s: Sample, t: number, intervalMs: number, book: AlertBook, th: AlertThresholds): boolean {
    const st = this.ruleState;
    if (!(t > st[LAST_T])) return false;
    const at = SAMPLE_TIME;
    at.t = t;
    at.intervalMs = intervalMs;
    at.maxGapMs = th.window.maxGapIntervals * intervalMs;
    // A rule with no alert active and nothing in the sample for it only updates numbers in
    // `st`: done here, with the rule's own function for it, without touching the rule's object or
    // looking its alert up in the book (the target's `active` bits say whether one is active).
    // Most samples are quiet, and in a wide incident each lookup in the book is a cache miss.
    // The timeouts rule always has its window to feed.
    const active = this.target.active ?? 0;
    if ((active & RULE_BIT.leak) === 0 && leakCheckHolds(s)) st[LEAK_LAST_GOOD_T] = t;
    else this.leak.onSample(this, s, t, book);
    if ((active & RULE_BIT.double_release) !== 0 || s.doubleReleases > 0) this.doubleRelease.onSample(this, s, t, book, th.doubleRelease);
    if ((active & RULE_BIT.convoy) !== 0 || st[CONVOY_FILLING] !== 0 || convoyHolds(s, th.convoy)) this.convoy.onSample(this, s, at, book, th.convoy);
    else feedConvoyClear(st, CONVOY_CLEAR, s, at);
    if ((active & RULE_BIT.starvation) !== 0 || starving(s, th.starvation)) this.starvation.onSample(this, s, at, book, th.starvation);
    else feedStarvationClear(st, STARVATION_CLEAR, false, at);
    this.timeouts.onSample(this, s, at, book, th.timeouts);
    this.latest.set(s);
    st[LAST_T] = t;
    this.cap = s.cap;
    this.intervalMs = intervalMs;
    return true;
  }

  event(ev: AgentEvent, book: AlertBook): void {
    if (this.retired) return;
    switch (ev.type) {
      case "leak_suspected":
      case "leak_resolved":
      case "invariant_violation":
        this.leak.onEvent(this, ev, this.intervalMs, book);
        return;
      case "double_release":
        this.doubleRelease.onEvent(this, ev, this.cap, book);
        return;
      case "order_inversion":
        this.orderInversion.onEvent(this, ev, book);
        return;
      case "lease_expired":
        // Not an alert: the lease did its job. A leak it ends arrives as leak_resolved.
        return;
    }
  }

  /** leak > convoy > saturated > ok (docs/protocol.md /api/state). */
  status(): SemaphoreStatus {
    if (this.book.get("leak", this.key) !== undefined) return "leak";
    if (this.book.get("convoy", this.key) !== undefined) return "convoy";
    const s = this.latest;
    if (s.present && (s.inUse >= s.cap || s.waiters > 0)) return "saturated";
    return "ok";
  }

  /**
   * Resolve every per-semaphore alert it has (it is gone) and forget the rules' state, its pooled
   * numbers given back: it applies no sample or event from then on. Its latest sample stays
   * readable (a /metrics render reads the semaphores it started with).
   */
  retire(book: AlertBook, at: number, resolution: string): void {
    this.retired = true;
    for (const rule of SEMAPHORE_RULES) book.resolve(rule, this.key, at, { resolution });
    this.leakRule?.reset();
    this.doubleReleaseRule?.reset();
    this.convoyRule?.reset();
    this.starvationRule?.reset();
    this.timeouts.release();
    this.orderInversionRule?.reset();
    if (this.ruleState !== RETIRED_STATE) {
      this.pools.state.give(this.ruleState);
      this.ruleState = RETIRED_STATE;
    }
  }

  /** Typed-array bytes its rules' windows hold (bounded by count, whatever sample time does). */
  windowBytes(): number {
    return (this.convoyRule?.bytes() ?? 0) + this.timeouts.bytes();
  }

  /** The latest sample's share of a split budget, if it had one. */
  get share(): SampleShare | undefined {
    return this.latest.shareBlock;
  }

  /** Its adaptive limit's recent changes with their reasons, oldest first (latest-sample.ts). */
  get limitChanges(): readonly SampleLimit[] {
    return this.latest.limitChanges;
  }

  member(): FleetMember {
    const s = this.latest;
    const has = s.present;
    return {
      instance: this.instance,
      scope: this.info.scope,
      cap: this.cap,
      budget: this.info.budget,
      inUse: has ? s.inUse : 0,
      waiters: has ? s.waiters : 0,
      shared: this.info.share === "replicas",
      share: this.share,
      // Merged from its numbers (fleet entries); over_budget, evaluated on every register, reads none.
      summaries: has ? s : null,
    };
  }

  state(): SemaphoreState {
    return this.stateWith(this.latest.get());
  }

  /** state() with `last` read without its histograms (LatestSample.figures): what dashboards are sent. */
  figures(): SemaphoreFigures {
    return this.stateWith(this.latest.figures());
  }

  private stateWith<S extends SampleFigures>(s: S | null): SemaphoreStateOf<S> {
    return {
      key: this.key,
      agentId: this.agentId,
      service: this.service,
      instance: this.instance,
      id: this.info.id,
      name: this.info.name,
      kind: this.info.kind,
      cap: this.cap,
      inUse: s?.inUse ?? 0,
      available: s?.available ?? this.cap,
      waiters: s?.waiters ?? 0,
      oldestWaitMs: s?.oldestWaitMs ?? 0,
      status: this.status(),
      last: s,
    };
  }
}
