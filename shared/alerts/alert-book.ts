// The alerts themselves: at most one active alert per (rule, key), a capped history of resolved
// ones, and the list of changes made since the engine last drained it.
import type { Alert, AlertRule, Severity } from "../protocol/types.js";
import { deepFreeze } from "./format.js";
import type { AlertChange, AlertTarget } from "./types.js";

interface Entry {
  alert: Alert;
  /** What it was raised on: its `active` bit is cleared when the alert resolves. */
  readonly target: AlertTarget;
  /** Creation order: the tie-break when two alerts share a raisedAt, so ordering is stable. */
  seq: number;
  /** Evidence added from outside the rules (annotate): kept when a rule replaces its own. */
  extra?: Record<string, unknown>;
}

export interface RaiseInit {
  readonly rule: AlertRule;
  readonly severity: Severity;
  readonly message: string;
  readonly evidence?: Record<string, unknown>;
}

export interface AlertPatch {
  readonly severity?: Severity;
  readonly message?: string;
  readonly evidence?: Record<string, unknown>;
}

export const DEFAULT_MAX_RESOLVED = 1000;

/** Each rule's bit in AlertTarget.active. */
export const RULE_BIT: Readonly<Record<AlertRule, number>> = {
  leak: 1,
  double_release: 2,
  convoy: 4,
  starvation: 8,
  timeouts: 16,
  order_inversion: 32,
  agent_down: 64,
  over_budget: 128,
};

/**
 * Whether `target` has an alert of `rule` active: its bit, which the book keeps as it raises and
 * resolves. What book.get() would say, without a lookup in the rule's map (a cache miss on a
 * sample's path when thousands of alerts are active).
 */
export function alertActive(target: AlertTarget, rule: AlertRule): boolean {
  return ((target.active ?? 0) & RULE_BIT[rule]) !== 0;
}

function slot(rule: AlertRule, key: string): string {
  return `${rule}\u0000${key}`;
}

function snapshot(a: Alert): Alert {
  return { ...a };
}

function newestFirst(a: Entry, b: Entry): number {
  return b.alert.raisedAt - a.alert.raisedAt || b.seq - a.seq;
}

/** `entries`' alerts, newest raisedAt first, but those `hidden` names (copies). */
function listed(entries: Entry[], hidden: ((a: Readonly<Alert>) => boolean) | undefined): Alert[] {
  return (hidden === undefined ? entries : entries.filter((e) => !hidden(e.alert))).sort(newestFirst).map((e) => snapshot(e.alert));
}

export class AlertBook {
  private readonly active = new Map<string, Entry>();
  /**
   * The same entries by rule, then key: get() runs several times per sample, and a key the
   * caller keeps (a tracker's) is hashed once, where building the slot string costs a fresh
   * string and its hash on every call.
   */
  private readonly byRule = new Map<AlertRule, Map<string, Entry>>();
  private readonly byId = new Map<string, Entry>();
  /** Resolved alerts, oldest resolution first; trimmed to maxResolved. */
  private resolved: Entry[] = [];
  private seq = 0;
  private pending: AlertChange[] = [];

  constructor(private readonly maxResolved = DEFAULT_MAX_RESOLVED) {
    if (!Number.isInteger(maxResolved) || maxResolved < 0) throw new RangeError(`maxResolved must be an integer ≥ 0, got ${maxResolved}`);
  }

  /** The active alert for (rule, key), if any. Read it; change it only through this book. */
  get(rule: AlertRule, key: string): Readonly<Alert> | undefined {
    return this.byRule.get(rule)?.get(key)?.alert;
  }

  byIdGet(id: string): Readonly<Alert> | undefined {
    return this.byId.get(id)?.alert;
  }

  /**
   * Raise an alert at `at`. The id is `${rule}:${key}:${raisedAt}`, so a replay gets the same
   * ids; should that id still be in the book (a new alert raised at the very time an old one
   * was), a `#n` suffix keeps it unique, deterministically.
   */
  raise(target: AlertTarget, init: RaiseInit, at: number): Readonly<Alert> {
    const s = slot(init.rule, target.key);
    const existing = this.active.get(s);
    if (existing !== undefined) return existing.alert;
    let id = `${init.rule}:${target.key}:${at}`;
    for (let n = 2; this.byId.has(id); n++) id = `${init.rule}:${target.key}:${at}#${n}`;
    const alert: Alert = {
      id,
      rule: init.rule,
      severity: init.severity,
      key: target.key,
      service: target.service,
      ...(target.instance !== undefined ? { instance: target.instance } : {}),
      ...(target.semaphore !== undefined ? { semaphore: target.semaphore } : {}),
      message: init.message,
      raisedAt: at,
      resolvedAt: null,
      acknowledged: false,
      ...(init.evidence !== undefined ? { evidence: deepFreeze(init.evidence) } : {}),
    };
    const entry: Entry = { alert, target, seq: this.seq++ };
    target.active = (target.active ?? 0) | RULE_BIT[init.rule];
    this.active.set(s, entry);
    let ofRule = this.byRule.get(init.rule);
    if (ofRule === undefined) this.byRule.set(init.rule, (ofRule = new Map()));
    ofRule.set(target.key, entry);
    this.byId.set(id, entry);
    this.pending.push({ kind: "raised", alert: snapshot(alert) });
    return alert;
  }

  /** Change an active alert; emits "updated" only if something actually changed. */
  update(rule: AlertRule, key: string, patch: AlertPatch): void {
    const entry = this.byRule.get(rule)?.get(key);
    if (entry === undefined) return;
    const a = entry.alert;
    let changed = false;
    if (patch.severity !== undefined && patch.severity !== a.severity) {
      a.severity = patch.severity;
      changed = true;
    }
    if (patch.message !== undefined && patch.message !== a.message) {
      a.message = patch.message;
      changed = true;
    }
    if (patch.evidence !== undefined) {
      a.evidence = deepFreeze(entry.extra === undefined ? patch.evidence : { ...patch.evidence, ...entry.extra });
      changed = true;
    }
    if (changed) this.pending.push({ kind: "updated", alert: snapshot(a) });
  }

  /**
   * Resolve the active alert for (rule, key) at `at` (never before it was raised: clocks of
   * different origin may meet here). `note` is merged into its evidence, e.g. why it ended.
   */
  resolve(rule: AlertRule, key: string, at: number, note?: Record<string, unknown>): void {
    const s = slot(rule, key);
    const entry = this.active.get(s);
    if (entry === undefined) return;
    this.active.delete(s);
    this.byRule.get(rule)?.delete(key);
    entry.target.active = (entry.target.active ?? 0) & ~RULE_BIT[rule];
    const a = entry.alert;
    a.resolvedAt = at > a.raisedAt ? at : a.raisedAt;
    if (note !== undefined) a.evidence = deepFreeze({ ...a.evidence, ...note });
    this.resolved.push(entry);
    if (this.resolved.length > this.maxResolved) {
      const drop = this.resolved.length - this.maxResolved;
      for (let i = 0; i < drop; i++) this.byId.delete(this.resolved[i].alert.id);
      this.resolved = this.resolved.slice(drop);
    }
    this.pending.push({ kind: "resolved", alert: snapshot(a) });
  }

  /**
   * Adds fields to an alert's evidence (active or resolved), e.g. the agent's flight recorder ring
   * or a diagnosis; they survive the rule's own evidence updates. Emits "updated". False when the
   * id is unknown.
   */
  annotate(id: string, fields: Record<string, unknown>): boolean {
    const entry = this.byId.get(id);
    if (entry === undefined) return false;
    entry.extra = { ...entry.extra, ...fields };
    const a = entry.alert;
    a.evidence = deepFreeze({ ...a.evidence, ...fields });
    this.pending.push({ kind: "updated", alert: snapshot(a) });
    return true;
  }

  /**
   * Mark an alert acknowledged. With `resolveAt` and the alert active, it is resolved in the same
   * step (one "resolved" change rather than "updated" then "resolved"). Returns false when the id
   * is unknown or nothing changed.
   */
  acknowledge(id: string, resolveAt?: number): boolean {
    const entry = this.byId.get(id);
    if (entry === undefined) return false;
    const a = entry.alert;
    const resolving = resolveAt !== undefined && a.resolvedAt === null;
    if (a.acknowledged && !resolving) return false;
    a.acknowledged = true;
    if (resolving) this.resolve(a.rule, a.key, resolveAt);
    else this.pending.push({ kind: "updated", alert: snapshot(a) });
    return true;
  }

  /** Active alerts, newest raisedAt first; none that `hidden` names. */
  listActive(hidden?: (a: Readonly<Alert>) => boolean): Alert[] {
    return listed([...this.active.values()], hidden);
  }

  /** Active and retained resolved alerts, newest raisedAt first; none that `hidden` names. */
  listAll(hidden?: (a: Readonly<Alert>) => boolean): Alert[] {
    return listed([...this.active.values(), ...this.resolved], hidden);
  }

  /** Active alerts whose key is `key` (any rule). */
  activeFor(key: string): Readonly<Alert>[] {
    const out: Alert[] = [];
    for (const e of this.active.values()) if (e.alert.key === key) out.push(e.alert);
    return out;
  }

  /** The changes since the last drain, in the order they were made; clears the list. */
  drain(): AlertChange[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }
}
