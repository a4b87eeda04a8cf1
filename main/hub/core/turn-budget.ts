// One time budget per event-loop turn for all of the hub's background work. Node runs in one turn
// every setImmediate callback queued before it began, so jobs each sliced to a few ms on their own
// (agents' batches, dashboards' deltas and snapshots, forgets, /metrics renders) still made turns
// as long as their sum. Here they wait in one queue that a single callback per turn runs within one
// budget: agents' work first (their acks wait on it), then the other kinds in turn, the first of
// them at least a step each turn, so none starves. The budget also counts what the rest of the
// turn ran (sockets' messages, timers): a turn already long from I/O does less of the queued work.
import { performance } from "node:perf_hooks";

export type WorkKind = "agents" | "dashboards" | "forgets" | "scrapes";

/** Sliced work: run() does some, stopping once `deadline` (the budget's clock) is past, after one step at least. */
export interface Task {
  readonly kind: WorkKind;
  /** True while it has more to do (it stays queued); false: done, until want() queues it again. */
  run(deadline: number): boolean;
}

/** A turn's whole length the budget aims at (ms): its queued work and what the rest of the turn ran. */
export const TURN_BUDGET_MS = 16;
/** Agents' part of a turn's budget while other kinds wait (they get the rest of the turn too). */
export const AGENT_SHARE = 0.5;
/** The part of a turn's budget its queued work gets however long the rest of the turn was: it goes on under heavy I/O. */
export const MIN_SHARE = 0.6;
/** Work run outside a turn (an agent's message as it arrives) goes ahead while it has used less than this of the turn's budget. */
const OUTSIDE_SHARE = 0.5;
/** What a step resolved by next() is counted as: it runs after the turn's callback, where it cannot be timed. */
export const ASYNC_STEP_MS = 1;

const OTHERS: readonly WorkKind[] = ["dashboards", "forgets", "scrapes"];

export interface TurnBudgetOptions {
  /** Default TURN_BUDGET_MS. */
  readonly turnMs?: number;
  /** The budget's clock (ms; default performance.now): tests count work in it. */
  readonly now?: () => number;
  /** A task that threw (it is dropped; tasks are meant to contain their own errors). */
  readonly onError?: (err: unknown) => void;
}

export class TurnBudget {
  readonly turnMs: number;
  private readonly now: () => number;
  private readonly onError: (err: unknown) => void;
  private readonly queues: Record<WorkKind, Task[]> = { agents: [], dashboards: [], forgets: [], scrapes: [] };
  private readonly queued = new Set<Task>();
  private immediate: ReturnType<typeof setImmediate> | undefined;
  /** Which of OTHERS goes first this turn. */
  private rotation = 0;
  /** When the last turn ended, if it queued this one: what ran since is this turn's too. */
  private lastEnd = Number.NaN;
  /** Work charged since the last turn (charge()). */
  private outside = 0;
  /** Async steps resolved in this turn (next()), counted as ASYNC_STEP_MS each. */
  private owed = 0;
  /** What awaits next(): let go on close(). */
  private readonly waiters = new Set<() => void>();
  private running: Task | undefined;
  private runAgain = false;
  private closed = false;

  constructor(opts: TurnBudgetOptions = {}) {
    this.turnMs = opts.turnMs ?? TURN_BUDGET_MS;
    this.now = opts.now ?? (() => performance.now());
    this.onError = opts.onError ?? ((err) => process.emitWarning(`semscope hub: background task failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`));
  }

  /** Queues `task` for the coming turns (a no-op while it is queued). */
  want(task: Task): void {
    if (this.closed) return;
    if (task === this.running) {
      // Back in the queue as its run ends (runKind).
      this.runAgain = true;
      this.queued.add(task);
      return;
    }
    if (this.queued.has(task)) return;
    this.queued.add(task);
    this.queues[task.kind].push(task);
    this.schedule();
  }

  /** Whether `task` is queued (or running). */
  has(task: Task): boolean {
    return this.queued.has(task);
  }

  /** Takes `task` out of the queue. */
  drop(task: Task): void {
    if (!this.queued.delete(task)) return;
    const q = this.queues[task.kind];
    const i = q.indexOf(task);
    if (i >= 0) q.splice(i, 1);
    if (task === this.running) this.runAgain = false;
  }

  /** Resolves in a coming turn, as a step of `kind` (async work: awaited between its slices). */
  next(kind: WorkKind): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      this.waiters.add(resolve);
      this.want({
        kind,
        run: () => {
          this.owed += ASYNC_STEP_MS;
          this.waiters.delete(resolve);
          resolve();
          return false;
        },
      });
    });
  }

  /** Work of the hub's run outside a turn (`ms` of it): the coming turn has that much less. */
  charge(ms: number): void {
    this.outside += ms;
    // A turn ends the window this counts in, even with nothing queued.
    this.schedule();
  }

  /** Whether work outside a turn may run now (it has not used its share of this turn yet). */
  get roomOutside(): boolean {
    return this.outside < this.turnMs * OUTSIDE_SHARE;
  }

  /** Drops everything queued; what awaits next() is let go at once. */
  close(): void {
    this.closed = true;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.queued.clear();
    for (const q of Object.values(this.queues)) q.length = 0;
    for (const resolve of this.waiters) resolve();
    this.waiters.clear();
  }

  private schedule(): void {
    if (this.closed || this.immediate !== undefined) return;
    this.immediate = setImmediate(() => {
      this.immediate = undefined;
      this.turn();
    });
  }

  private clock(): number {
    return this.now() + this.owed;
  }

  private turn(): void {
    const start = this.now();
    // Queued by the last turn, this one ran right after the rest of the loop's turn: all of that
    // counts. Else the loop may have waited idle meanwhile: only the work charged counts.
    const used = Number.isNaN(this.lastEnd) ? this.outside : Math.max(start - this.lastEnd, this.outside);
    this.outside = 0;
    this.owed = 0;
    const end = start + Math.max(this.turnMs * MIN_SHARE, this.turnMs - used);
    const othersWait = OTHERS.some((k) => this.queues[k].length > 0);
    this.runKind("agents", othersWait ? start + (end - start) * AGENT_SHARE : end, true);
    let first = true;
    for (let i = 0; i < OTHERS.length; i++) {
      const kind = OTHERS[(this.rotation + i) % OTHERS.length]!;
      if (this.queues[kind].length === 0) continue;
      this.runKind(kind, end, first);
      first = false;
    }
    this.rotation = (this.rotation + 1) % OTHERS.length;
    if (this.clock() < end) this.runKind("agents", end, false);
    if (this.queued.size > 0) {
      this.lastEnd = this.now();
      this.schedule();
    } else this.lastEnd = Number.NaN;
  }

  /** Each queued task of `kind` once at most, in order, while the clock is before `deadline` (the first regardless when `forced`). */
  private runKind(kind: WorkKind, deadline: number, forced: boolean): void {
    const q = this.queues[kind];
    for (let n = q.length; n > 0 && !this.closed; n--) {
      if (!forced && this.clock() >= deadline) return;
      forced = false;
      const task = q.shift()!;
      this.running = task;
      this.runAgain = false;
      const more = this.safeRun(task, deadline);
      this.running = undefined;
      if (!this.queued.has(task)) continue;
      if (more || this.runAgain) q.push(task);
      else this.queued.delete(task);
    }
  }

  private safeRun(task: Task, deadline: number): boolean {
    try {
      // In the clock tasks read: next()'s steps are the budget's own count.
      return task.run(deadline - this.owed);
    } catch (err) {
      this.onError(err);
      return false;
    }
  }
}
