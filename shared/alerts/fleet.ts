// The fleet view: replicas of one service that share a semaphore name are one limiter as the
// downstream sees it. The over_budget rule and fleet() both read fleetTotals, so the alert and
// the view can never disagree about a sum.
//
// Scope "process": each replica has its own N, so the fleet admits the sum of the caps.
// Scope "global" (a distributed semaphore): every replica reports the same global cap, so the cap
// is the largest one reported, never the sum; `inUse` is still summed, each replica reporting
// the permits its own callers hold. A group is global as soon as one live member says so (a
// rolling config change is the only way they differ, and summing a global cap would overstate
// the fleet by the replica count).
import { SummaryMerge, type Summary, type SummaryFigures } from "../histogram.js";
import { fleetKey as protocolFleetKey, type SampleShare, type Scope } from "../protocol/types.js";

/** One live replica's semaphore, as the fleet sees it. */
export interface FleetMember {
  readonly instance: string;
  readonly scope: Scope;
  /** Current cap: the latest sample's, else the registered one. */
  readonly cap: number;
  readonly budget: number | undefined;
  readonly inUse: number;
  readonly waiters: number;
  /** Registered with share: "replicas": its cap is its share of the budget. */
  readonly shared?: boolean;
  /** Its share of that budget (the latest sample's), if it has one. */
  readonly share?: SampleShare;
  /** The latest interval's summaries, null before the first sample. */
  readonly summaries: MemberSummaries | null;
}

/**
 * A member's latest wait and hold summaries, added to a merge from wherever they are held
 * (LatestSample's numbers): a fleet entry is merged for every group a /ui delta moves, and a
 * Summary built per member for it outlived young GCs.
 */
export interface MemberSummaries {
  mergeInto(wait: SummaryMerge, hold: SummaryMerge): void;
}

export interface FleetTotals {
  readonly scope: Scope;
  /** Live members counted. */
  readonly instances: number;
  readonly cap: number;
  /**
   * The smallest budget any live member declares (replicas mid-deploy may disagree; the
   * tighter one is the one the downstream was promised), null if none declares one.
   */
  readonly budget: number | null;
  readonly overBudget: boolean;
}

/**
 * Replicas splitting a budget (share: "replicas") while their membership changes: every one
 * reaches the coordinator, yet some count a different number of replicas than are live (or have
 * not counted yet). A
 * starting replica's first permit then briefly sums past the budget (docs/shared-budget.md); that
 * documented transient is not an over_budget. An unreachable replica makes it one again: its
 * kept share is the overrun the rule is for.
 */
function settling(members: readonly FleetMember[]): boolean {
  if (members.length === 0) return false;
  let disagree = false;
  for (const m of members) {
    if (m.shared !== true) return false;
    // Registered but not sampled yet, or never answered by the coordinator: a starting replica,
    // at its initial permits (1 by default), not one cut off with a share it kept.
    if (m.share === undefined || m.share.replicas === 0) disagree = true;
    else if (!m.share.reachable) return false;
    else if (m.share.replicas !== members.length) disagree = true;
  }
  return disagree;
}

export interface FleetEntry extends FleetTotals {
  /** `<service>/<name>`, the over_budget alert's key. */
  readonly key: string;
  readonly service: string;
  readonly name: string;
  readonly inUse: number;
  readonly waiters: number;
  /** Merged from every live member's latest interval: a real fleet percentile. */
  readonly waitMs: Summary;
  readonly holdMs: Summary;
}

export function fleetKey(service: string, name: string): string {
  return protocolFleetKey(service, name);
}

export function fleetTotals(members: readonly FleetMember[]): FleetTotals {
  const scope: Scope = members.some((m) => m.scope === "global") ? "global" : "process";
  let cap = 0;
  let budget: number | null = null;
  for (const m of members) {
    cap = scope === "global" ? Math.max(cap, m.cap) : cap + m.cap;
    if (m.budget !== undefined && (budget === null || m.budget < budget)) budget = m.budget;
  }
  return { scope, instances: members.length, cap, budget, overBudget: budget !== null && cap > budget && !settling(members) };
}

/** A fleet entry without its merged summaries: the sums alone, for who needs no percentile (/metrics). */
export type FleetCounts = Omit<FleetEntry, "waitMs" | "holdMs">;

/** fleetEntry's sums and totals, without merging the members' histograms (the costly part). */
export function fleetCounts(service: string, name: string, members: readonly FleetMember[]): FleetCounts {
  let inUse = 0;
  let waiters = 0;
  for (const m of members) {
    inUse += m.inUse;
    waiters += m.waiters;
  }
  return { key: fleetKey(service, name), service, name, ...fleetTotals(members), inUse, waiters };
}

/** A fleet entry with its merged summaries' figures and no histogram: what dashboards are shown. */
export type FleetFigures = FleetCounts & { readonly waitMs: SummaryFigures; readonly holdMs: SummaryFigures };

const waitMerge = new SummaryMerge();
const holdMerge = new SummaryMerge();

/** The counts, with every member's latest summaries added to waitMerge and holdMerge. */
function merged(service: string, name: string, members: readonly FleetMember[]): FleetCounts {
  const counts = fleetCounts(service, name, members);
  for (const m of members) m.summaries?.mergeInto(waitMerge, holdMerge);
  return counts;
}

export function fleetEntry(service: string, name: string, members: readonly FleetMember[]): FleetEntry {
  return { ...merged(service, name, members), waitMs: waitMerge.take(), holdMs: holdMerge.take() };
}

/** fleetEntry without the merged histograms (never built). */
export function fleetFigures(service: string, name: string, members: readonly FleetMember[]): FleetFigures {
  return { ...merged(service, name, members), waitMs: waitMerge.takeFigures(), holdMs: holdMerge.takeFigures() };
}
