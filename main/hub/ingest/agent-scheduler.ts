// Agent messages from every connection, run fairly. Each connection is a lane (its messages in
// order); the scheduler runs one slice of work at a time (a message, or ~64 items of a samples
// batch) from the lane that has had the least so far (start-time fair queuing, counted in items),
// for the agents' part of each event-loop turn's budget (core/turn-budget.ts), then yields. So an
// agent sending full 1,000-item batches as fast as it may costs another agent a slice of waiting,
// not whole batches queued ahead of it.
//
// Each lane also has a work budget (a TokenBucket, rate-limit.ts), and shares one with every other
// connection from its address; both are charged as a message arrives with the items it carries.
// Over it, a WebSocket lane is not read until the budget is back (backpressure: the hub does not
// even decode what it cannot yet afford) and is never refused, so an honest agent replaying its
// backlog is slowed, not dropped; a lane that cannot be paused (HTTP long-polling) has what arrives
// while it is over budget refused, as over its rate. Exactness is the store pipeline's job (a store
// another input could observe half done is finished first, see StoreJob); the rule here only keeps
// that from being needed: while a batch of service S is being stored, only lanes of other, known
// services start messages.
import { performance } from "node:perf_hooks";
import type { Ack } from "../../../shared/protocol/index.js";
import { isJob, type Job } from "./agent-session.js";
import type { Budget } from "./rate-limit.js";
import { TurnBudget, type Task } from "../core/turn-budget.js";

/** Units of work per slice (about an item each): ~1–4 ms of hub time for a samples batch. */
export const SLICE_ITEMS = 64;
/** A lane with this many messages waiting (besides the one running) stops being read until it has none. */
export const PAUSE_AT = 1;
/**
 * Messages one lane may have waiting, a backstop: a paused WebSocket delivers at most the rest of
 * what it had read, and an agent keeps at most 32 samples and 32 events messages in flight.
 */
export const MAX_QUEUED = 256;
/** A system task (the tick) waits for stores in progress at most this long, then finishes them. */
export const SYSTEM_MAX_WAIT_MS = 250;
/** After waiting this long, the tick lets no new message start, so the stores under way end in slices before SYSTEM_MAX_WAIT_MS. */
export const SYSTEM_HOLD_AFTER_MS = 100;

export interface Transport {
  /** Whether pause() can stop this connection's reading (a WebSocket can, long-polling cannot). */
  pausable(): boolean;
  /** Stop reading the connection (a no-op where the transport cannot). */
  pause(): void;
  resume(): void;
}

export interface Item {
  run(): Ack | Job;
  /** A hello's service: it will touch that service's state as well as (or instead of) the lane's. */
  readonly claims?: string;
  /** Delivers the answer (the socket.io ack); also called for the last, closing item. */
  answer(a: Ack): void;
}

export interface SchedulerHooks {
  /** Stores in progress (of `service`, or any). */
  busy(service?: string): boolean;
  /** Runs `fn`, turning a throw into `fallback` (and a log line). */
  guard<T>(what: string, fallback: T, fn: () => T): T;
}

const INTERNAL_ERROR: Ack = { ok: false, error: "internal error" };

export class Lane {
  readonly queue: Item[] = [];
  // Fields of the lane, not an object made per message: a pretenured per-message object, even
  // dead, would keep its message's parsed packet alive through every young GC.
  /** The job begun and not finished (a batch stored over several slices), or undefined. */
  job: Job | undefined = undefined;
  /** The message `job` came from. */
  jobItem: Item | undefined = undefined;
  /** The work of `job` already counted to vtime. */
  jobWork = 0;
  /** `jobItem` has had its answer (the job's early one). */
  jobAnswered = false;
  vtime = 0;
  paused = false;
  /** Its last item (the disconnect) is queued: nothing more comes. */
  ending = false;
  /** Being run (out of the ready heap) right now. */
  running = false;
  /** Arrival order, the tie-break between equal vtimes. */
  order = 0;

  constructor(
    readonly owner: { readonly service: string | undefined },
    readonly transport: Transport,
    readonly budget: Budget,
  ) {}

  get idle(): boolean {
    return this.job === undefined && this.queue.length === 0;
  }

  begin(job: Job, item: Item): void {
    this.job = job;
    this.jobItem = item;
    this.jobWork = 0;
    this.jobAnswered = false;
  }

  finish(): void {
    this.job = undefined;
    this.jobItem = undefined;
  }
}

export class AgentScheduler {
  /** Lanes with something to do, least served first: a pick costs O(log n) however many there are. */
  private readonly ready = new LaneHeap();
  /** Ready lanes a pick found blocked (their service half stored): back in the heap each turn. */
  private parked: Lane[] = [];
  /** Lanes not being read (paused): the only ones a budget timer looks at. */
  private readonly held = new Set<Lane>();
  private readonly systemTasks: { task: () => void; since: number }[] = [];
  private vclock = 0;
  /** Its turns: the agents' part of every event-loop turn the budget runs. */
  private readonly task: Task = { kind: "agents", run: (deadline) => this.turn(deadline) };
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDue = Infinity;
  private closed = false;
  /** A turn (or a message run at once) is running: what arrives meanwhile waits its turn. */
  private turning = false;

  constructor(
    private readonly hooks: SchedulerHooks,
    private readonly turns: TurnBudget = new TurnBudget(),
  ) {}

  /** A new connection's lane (it lives as long as it has work or has not ended). */
  add(lane: Lane): Lane {
    return lane;
  }

  /**
   * Queues a message that carries `cost` items of work (charged to the lane's budget now). false:
   * refuse it (the caller does, as over the rate): MAX_QUEUED are waiting, or the lane is over its
   * budget and its transport cannot be paused.
   */
  push(lane: Lane, item: Item, cost: number): boolean {
    if (lane.queue.length >= MAX_QUEUED || lane.ending) return false;
    const now = performance.now();
    if (lane.budget.waitMs(now) > 0 && !lane.transport.pausable()) return false;
    lane.budget.charge(cost, now);
    if (this.idleFor(lane, now)) {
      this.runNow(lane, item, now);
      return true;
    }
    this.enqueue(lane, item);
    return true;
  }

  /** Queues the lane's last item (its disconnect), after everything it sent; the lane goes once it ran. */
  end(lane: Lane, item: Item): void {
    this.enqueue(lane, item);
    lane.ending = true;
    // A paused WebSocket would never read the peer's close frame, and its close would hang.
    if (lane.paused) this.unpause(lane);
  }

  /** Work for the hub as a whole (the tick): runs before any lane, once no store is half done. */
  system(task: () => void): void {
    this.systemTasks.push({ task, since: performance.now() });
    this.schedule();
  }

  /** Runs everything left, now, budgets and fairness aside (the hub is closing). */
  drain(): void {
    for (let guard = 0; guard < 1_000_000; guard++) {
      const next = this.pick(performance.now(), true);
      if (next === undefined) return;
      this.runOne(next, performance.now());
    }
  }

  close(): void {
    this.closed = true;
    this.turns.drop(this.task);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = Infinity;
  }

  /**
   * Nothing else is waiting or half done, and the lane is within its budget: the scheduler would
   * pick this message first on its next turn anyway. Running its first slice now, while the
   * connection's state is still in cache, answers it sooner and costs the hub less than queueing
   * it for a later turn (a deferred ack writes to a socket gone cold). Not once such messages have
   * taken their share of this turn's budget: many sockets read in one turn wait for the next.
   */
  private idleFor(lane: Lane, now: number): boolean {
    return (
      !this.closed &&
      !this.turning &&
      !this.turns.has(this.task) &&
      this.turns.roomOutside &&
      this.ready.size === 0 &&
      this.parked.length === 0 &&
      this.systemTasks.length === 0 &&
      lane.idle &&
      !lane.running &&
      !lane.paused &&
      lane.budget.waitMs(now) <= 0 &&
      !this.hooks.busy()
    );
  }

  /** One slice of `item` now, as a turn would run it; the rest (a big batch's) on the next turns. */
  private runNow(lane: Lane, item: Item, now: number): void {
    lane.vtime = Math.max(lane.vtime, this.vclock);
    lane.queue.push(item);
    this.turning = true;
    try {
      this.runOne(lane, now);
    } finally {
      this.turning = false;
      this.turns.charge(performance.now() - now);
    }
    if (!lane.idle) this.schedule();
  }

  private enqueue(lane: Lane, item: Item): void {
    const wasIdle = lane.idle;
    if (wasIdle) lane.vtime = Math.max(lane.vtime, this.vclock);
    lane.queue.push(item);
    if (wasIdle && !lane.running) this.ready.push(lane);
    this.flow(lane, performance.now());
    this.schedule();
  }

  private schedule(): void {
    if (!this.closed) this.turns.want(this.task);
  }

  /** Slices until `deadline` (one at least, if any is runnable); true while some are left. */
  private turn(deadline: number): boolean {
    this.turning = true;
    try {
      return this.runTurn(deadline);
    } finally {
      this.turning = false;
    }
  }

  private runTurn(deadline: number): boolean {
    this.unpark();
    let now = performance.now();
    for (;;) {
      const next = this.pick(now, false);
      if (next === undefined) break;
      this.runOne(next, now);
      now = performance.now();
      if (now >= deadline) return true;
    }
    this.wakeForBudgets(now);
    return false;
  }

  private pick(now: number, draining: boolean): Lane | "system" | undefined {
    const sys = this.systemTasks[0];
    if (sys !== undefined && (draining || !this.hooks.busy() || now - sys.since >= SYSTEM_MAX_WAIT_MS)) return "system";
    let unparked = false;
    for (;;) {
      const lane = this.ready.pop();
      if (lane === undefined) {
        // Nothing runnable in the heap. What is parked waited for a store that may have finished
        // since, in this very turn: look once more, unless one is still half done. Else a replica
        // whose message queued behind another replica's big batch waited for some other message,
        // or the next tick, to be looked at again. Draining, whatever is parked runs regardless.
        if (this.parked.length === 0 || (!draining && (unparked || this.hooks.busy()))) return undefined;
        unparked = true;
        this.unpark();
        continue;
      }
      if (this.runnable(lane, draining)) return lane;
      this.parked.push(lane);
    }
  }

  private unpark(): void {
    for (const lane of this.parked) this.ready.push(lane);
    this.parked = [];
  }

  private runnable(lane: Lane, draining: boolean): boolean {
    // A job started runs to its end, whatever the budget: half done, it holds its service up.
    if (lane.job !== undefined) return true;
    const next = lane.queue[0];
    if (next === undefined) return false;
    if (draining || !this.hooks.busy()) return true;
    // The tick has waited a while for the stores half done: the jobs under way go on, no message
    // starts. Before that, messages of services not being stored still start (an honest agent's
    // batch is not held behind a flood's big store for the tick's sake).
    const sys = this.systemTasks[0];
    if (sys !== undefined && performance.now() - sys.since >= SYSTEM_HOLD_AFTER_MS) return false;
    // The services it may touch: its own (refusals count as hearing from it) and a hello's.
    // A lane before hello touches none (everything but a hello is refused without a trace).
    const own = lane.owner.service;
    return (own === undefined || !this.hooks.busy(own)) && (next.claims === undefined || !this.hooks.busy(next.claims));
  }

  private runOne(next: Lane | "system", now: number): void {
    if (next === "system") {
      const { task } = this.systemTasks.shift()!;
      this.hooks.guard("tick", undefined, task);
      return;
    }
    const lane = next;
    this.vclock = lane.vtime;
    lane.running = true;
    let work = 0;
    if (lane.job === undefined) {
      const msg = lane.queue.shift()!;
      work = 1;
      const r = this.hooks.guard("agent message", INTERNAL_ERROR, () => msg.run());
      if (isJob(r)) lane.begin(r, msg);
      else msg.answer(r);
    }
    const job = lane.job;
    const item = lane.jobItem;
    if (job !== undefined && item !== undefined) {
      let answer = this.hooks.guard("agent samples", INTERNAL_ERROR, () => job.step(SLICE_ITEMS));
      // An answer known before the work is done (a small batch, accepted, about to be stored
      // whole): sent first, then the store, in this same slice (see Job.early).
      if (answer === undefined && !lane.jobAnswered && job.early !== undefined) {
        lane.jobAnswered = true;
        item.answer(job.early);
        answer = this.hooks.guard("agent samples", INTERNAL_ERROR, () => job.step(SLICE_ITEMS));
      }
      work += job.work - lane.jobWork;
      lane.jobWork = job.work;
      if (answer !== undefined) {
        const answered = lane.jobAnswered;
        lane.finish();
        if (!answered) item.answer(answer);
      }
    }
    // The fair share counts the work done, new semaphores weighing more (see StoreJob); the
    // budget was charged by item count as the message arrived, so the first batch of an agent
    // with 1,000 semaphores does not stall its stream for seconds.
    lane.vtime += work;
    lane.running = false;
    // Back in line with what it has now had: one slice at a time, least served first.
    if (!lane.idle) this.ready.push(lane);
    else if (lane.ending) return;
    this.flow(lane, now);
  }

  /** Reads a lane's socket only while it has nothing waiting and budget left. */
  private flow(lane: Lane, now: number): void {
    const hold = lane.queue.length >= PAUSE_AT || lane.budget.waitMs(now) > 0;
    if (hold && !lane.paused && !lane.ending) {
      lane.paused = true;
      this.held.add(lane);
      lane.transport.pause();
    } else if (!hold && lane.paused && lane.queue.length === 0) {
      this.unpause(lane);
    }
  }

  private unpause(lane: Lane): void {
    lane.paused = false;
    this.held.delete(lane);
    lane.transport.resume();
  }

  /** Nothing runnable now: wake when the first held lane's budget is back. */
  private wakeForBudgets(now: number): void {
    let wait = Infinity;
    for (const lane of [...this.held]) {
      const w = lane.budget.waitMs(now);
      if (w > 0) wait = Math.min(wait, w);
      else this.flow(lane, now);
    }
    if (this.closed || wait === Infinity || now + wait >= this.timerDue) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerDue = now + wait;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerDue = Infinity;
      const t = performance.now();
      for (const lane of [...this.held]) this.flow(lane, t);
      this.schedule();
    }, Math.ceil(wait));
    this.timer.unref();
  }
}

/** A binary min-heap of lanes by (vtime, order); a lane's key does not change while it is in. */
class LaneHeap {
  private readonly items: Lane[] = [];
  private counter = 0;

  get size(): number {
    return this.items.length;
  }

  push(lane: Lane): void {
    lane.order = this.counter++;
    const a = this.items;
    a.push(lane);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(a[i], a[parent])) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }

  pop(): Lane | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    a[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && less(a[l], a[m])) m = l;
      if (r < a.length && less(a[r], a[m])) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m], a[i]];
      i = m;
    }
    return top;
  }
}

function less(x: Lane, y: Lane): boolean {
  return x.vtime < y.vtime || (x.vtime === y.vtime && x.order < y.order);
}
