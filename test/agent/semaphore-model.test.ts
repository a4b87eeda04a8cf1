// Model-based property test: random command sequences run on the virtual clock against our
// Semaphore and against a deliberately naive reference model (arrays and linear scans), compared
// after EVERY step. SEMSCOPE_PROPERTY_RUNS overrides the number of runs per queue mode (default 250);
// SEMSCOPE_PROPERTY_SEED replays a reported failure.
import fc from "fast-check";
import { afterEach, beforeEach, describe, it, vi } from "vitest";
import {
  onEvent,
  Semaphore,
  SemaphoreClosedError,
  SemaphoreRejectedError,
  SemaphoreTimeoutError,
  type AgentEvent,
  type Permit,
  type QueueMode,
} from "../../agent/src/index.js";
import { FAKE_TIMERS } from "./semantic-suite.js";

const RUNS = Number(process.env.SEMSCOPE_PROPERTY_RUNS ?? 250);
const SEED = process.env.SEMSCOPE_PROPERTY_SEED === undefined ? undefined : Number(process.env.SEMSCOPE_PROPERTY_SEED);
/** Abort controllers shared between waiters: one signal often guards several acquires. */
const CONTROLLERS = 2;

// ---- commands ----

type Race = "release,abort" | "abort,release" | "release,microtask,abort";
type Cmd =
  | { k: "acquire"; weight: number; priority: number; timeout: number | undefined; signal: number | "aborted" | undefined }
  | { k: "try"; weight: number }
  | { k: "release"; pick: number }
  | { k: "double"; pick: number }
  | { k: "abort"; ctrl: number }
  | { k: "race"; pick: number; ctrl: number; order: Race }
  | { k: "advance"; ms: number }
  | { k: "resize"; permits: number }
  | { k: "close" };

function show(c: Cmd): string {
  switch (c.k) {
    case "acquire": {
      const parts = [`w=${c.weight}`];
      if (c.priority !== 0) parts.push(`prio=${c.priority}`);
      if (c.timeout !== undefined) parts.push(`timeout=${c.timeout}`);
      if (c.signal !== undefined) parts.push(c.signal === "aborted" ? "signal=already-aborted" : `signal=c${c.signal}`);
      return `acquire(${parts.join(", ")})`;
    }
    case "try":
      return `tryAcquire(${c.weight})`;
    case "release":
      return `release(held[${c.pick}])`;
    case "double":
      return `releaseAgain(released[${c.pick}])`;
    case "abort":
      return `abort(c${c.ctrl})`;
    case "race":
      return `race(${c.order.replace("release", `release held[${c.pick}]`).replace("abort", `abort c${c.ctrl}`)})`;
    case "advance":
      return `advance(${c.ms} ms)`;
    case "resize":
      return `resize(${c.permits})`;
    case "close":
      return "close()";
  }
}

const readable = (c: Cmd): Cmd => Object.assign(c, { [fc.toStringMethod]: () => show(c) });

/** Durations drawn from a few round values collide often: deadlines and target ages land on the same ms. */
const duration = (max: number): fc.Arbitrary<number> =>
  fc.oneof(fc.constantFrom(...[5, 10, 20, 25, 50, 100].filter((v) => v <= max)), fc.integer({ min: 1, max }));

const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 30,
    arbitrary: fc
      .record({
        weight: fc.oneof({ weight: 6, arbitrary: fc.constant(1) }, { weight: 3, arbitrary: fc.integer({ min: 2, max: 3 }) }, { weight: 1, arbitrary: fc.integer({ min: 4, max: 5 }) }),
        priority: fc.integer({ min: -1, max: 2 }),
        timeout: fc.option(fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 6, arbitrary: duration(60) }), { nil: undefined, freq: 2 }),
        signal: fc.option(fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: CONTROLLERS - 1 }) }, { weight: 1, arbitrary: fc.constant("aborted" as const) }), {
          nil: undefined,
          freq: 3,
        }),
      })
      .map((r) => readable({ k: "acquire", ...r })),
  },
  { weight: 20, arbitrary: fc.nat({ max: 7 }).map((pick) => readable({ k: "release", pick })) },
  { weight: 15, arbitrary: duration(100).map((ms) => readable({ k: "advance", ms })) },
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 5 }).map((weight) => readable({ k: "try", weight })) },
  { weight: 6, arbitrary: fc.nat({ max: CONTROLLERS - 1 }).map((ctrl) => readable({ k: "abort", ctrl })) },
  {
    weight: 6,
    arbitrary: fc
      .record({
        pick: fc.nat({ max: 7 }),
        ctrl: fc.nat({ max: CONTROLLERS - 1 }),
        order: fc.constantFrom<Race>("release,abort", "abort,release", "release,microtask,abort"),
      })
      .map((r) => readable({ k: "race", ...r })),
  },
  { weight: 4, arbitrary: fc.nat({ max: 7 }).map((pick) => readable({ k: "double", pick })) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }).map((permits) => readable({ k: "resize", permits })) },
  { weight: 1, arbitrary: fc.constant(readable({ k: "close" })) },
);

interface Config {
  permits: number;
  maxWaiters: number;
  acquireTimeoutMs: number | undefined;
  adaptiveTargetMs: number | undefined;
}

const configArb = (mode: QueueMode): fc.Arbitrary<Config> =>
  fc.record({
    permits: fc.integer({ min: 1, max: 4 }),
    maxWaiters: fc.oneof({ weight: 3, arbitrary: fc.constant(Infinity) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 4 }) }),
    acquireTimeoutMs: fc.option(duration(100), { nil: undefined, freq: 4 }),
    // Adaptive mode: the default 100 ms, or a short target so that both regimes show up often.
    adaptiveTargetMs: mode === "adaptive" ? fc.option(duration(50), { nil: undefined }) : fc.constant(undefined),
  });

// ---- the reference model ----

type Failure = "timeout" | "rejected" | "abort" | "closed" | "range";
type Outcome = { s: "pending" } | { s: "granted" } | { s: "rejected"; why: Failure; reason?: unknown };

interface MWaiter {
  id: number;
  weight: number;
  priority: number;
  enqueuedAt: number;
  deadline: number | undefined;
  /** Controller index and generation of its signal. */
  ctrl: number | undefined;
  gen: number;
}

interface MHolder {
  id: number;
  weight: number;
  released: boolean;
}

interface Counts {
  acquired: number;
  released: number;
  timeouts: number;
  rejections: number;
  aborts: number;
  doubleReleases: number;
}

class Model {
  cap: number;
  avail: number;
  used = 0;
  now = 0;
  closed = false;
  queue: MWaiter[] = []; // arrival order
  holders: MHolder[] = []; // grant order
  outcomes = new Map<number, Outcome>();
  grants: number[] = [];
  counts: Counts = { acquired: 0, released: 0, timeouts: 0, rejections: 0, aborts: 0, doubleReleases: 0 };
  gens = new Array<number>(CONTROLLERS).fill(0);
  reasons = new Map<string, unknown>();

  constructor(
    readonly mode: QueueMode,
    readonly cfg: Config,
  ) {
    this.cap = cfg.permits;
    this.avail = cfg.permits;
  }

  private next(now: number): MWaiter | undefined {
    const q = this.queue;
    if (q.length === 0) return undefined;
    switch (this.mode) {
      case "fifo":
        return q[0];
      case "lifo":
        return q[q.length - 1];
      case "priority":
        return q.reduce((best, w) => (w.priority > best.priority ? w : best)); // first among equals
      case "adaptive":
        return now - q[0].enqueuedAt >= (this.cfg.adaptiveTargetMs ?? 100) ? q[q.length - 1] : q[0];
    }
  }

  private grant(id: number, weight: number): void {
    if (weight > this.avail) throw new Error(`model bug: granting ${weight} with ${this.avail} available`);
    this.avail -= weight;
    this.used += weight;
    this.holders.push({ id, weight, released: false });
    this.outcomes.set(id, { s: "granted" });
    this.grants.push(id);
    this.counts.acquired++;
  }

  private remove(w: MWaiter, outcome: Outcome): void {
    this.queue.splice(this.queue.indexOf(w), 1);
    this.outcomes.set(w.id, outcome);
  }

  dispatch(): void {
    for (;;) {
      const w = this.next(this.now);
      if (w === undefined || w.weight > this.avail) return;
      this.queue.splice(this.queue.indexOf(w), 1);
      this.grant(w.id, w.weight);
    }
  }

  reasonOf(ctrl: number, gen: number): unknown {
    const key = `${ctrl}/${gen}`;
    let r = this.reasons.get(key);
    if (r === undefined) this.reasons.set(key, (r = new Error(`abort c${ctrl} generation ${gen}`)));
    return r;
  }

  acquire(id: number, c: Extract<Cmd, { k: "acquire" }>): void {
    const timeout = c.timeout ?? this.cfg.acquireTimeoutMs;
    if (c.weight > this.cap) return void this.outcomes.set(id, { s: "rejected", why: "range" });
    if (this.closed) return void this.outcomes.set(id, { s: "rejected", why: "closed" });
    if (c.signal === "aborted") {
      this.counts.aborts++;
      return void this.outcomes.set(id, { s: "rejected", why: "abort", reason: "already-aborted" });
    }
    if (this.queue.length === 0 && this.avail >= c.weight) return this.grant(id, c.weight);
    if (this.queue.length >= this.cfg.maxWaiters) {
      this.counts.rejections++;
      return void this.outcomes.set(id, { s: "rejected", why: "rejected" });
    }
    if (timeout === 0) {
      this.counts.timeouts++;
      return void this.outcomes.set(id, { s: "rejected", why: "timeout" });
    }
    const ctrl = c.signal;
    this.queue.push({
      id,
      weight: c.weight,
      priority: c.priority,
      enqueuedAt: this.now,
      deadline: timeout === undefined ? undefined : this.now + timeout,
      ctrl,
      gen: ctrl === undefined ? 0 : this.gens[ctrl],
    });
    this.outcomes.set(id, { s: "pending" });
    // Work-conserving: LIFO and priority may rank the newcomer first, and then it gets free permits now.
    this.dispatch();
  }

  /** "throws" names the error tryAcquire must throw; otherwise whether it grants. */
  tryAcquire(id: number, weight: number): "range" | "closed" | "granted" | "refused" {
    if (weight > this.cap) return "range";
    if (this.closed) return "closed";
    if (this.queue.length === 0 && this.avail >= weight) {
      this.grant(id, weight);
      return "granted";
    }
    this.counts.rejections++;
    return "refused";
  }

  held(): MHolder[] {
    return this.holders.filter((h) => !h.released);
  }

  releasedOnes(): MHolder[] {
    return this.holders.filter((h) => h.released);
  }

  release(h: MHolder): void {
    if (h.released) {
      this.counts.doubleReleases++;
      return;
    }
    h.released = true;
    this.avail += h.weight;
    this.used -= h.weight;
    this.counts.released++;
    this.dispatch();
  }

  abort(ctrl: number): void {
    const gen = this.gens[ctrl]++;
    const reason = this.reasonOf(ctrl, gen);
    // Every waiter on that signal leaves the queue, whatever order the listeners run in; only a
    // cancellation hands free permits on (an abort nobody listens to changes nothing).
    const gone = this.queue.filter((x) => x.ctrl === ctrl && x.gen === gen);
    for (const w of gone) {
      this.remove(w, { s: "rejected", why: "abort", reason });
      this.counts.aborts++;
    }
    if (gone.length > 0) this.dispatch();
  }

  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      // Timers due together fire in creation order, which is arrival order.
      let due: MWaiter | undefined;
      for (const w of this.queue) {
        if (w.deadline !== undefined && w.deadline <= end && (due === undefined || w.deadline < (due.deadline as number) || (w.deadline === due.deadline && w.id < due.id))) due = w;
      }
      if (due === undefined) break;
      this.now = due.deadline as number;
      this.remove(due, { s: "rejected", why: "timeout" });
      this.counts.timeouts++;
      this.dispatch();
    }
    this.now = end;
  }

  resize(permits: number): "closed" | undefined {
    if (this.closed) return "closed";
    this.avail += permits - this.cap;
    this.cap = permits;
    for (const w of [...this.queue]) {
      if (w.weight > permits) {
        this.remove(w, { s: "rejected", why: "range" });
        this.counts.rejections++;
      }
    }
    this.dispatch();
    return undefined;
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.queue]) this.remove(w, { s: "rejected", why: "closed" });
  }

  oldestWaitMs(): number {
    return this.queue.length === 0 ? 0 : this.now - Math.min(...this.queue.map((w) => w.enqueuedAt));
  }
}

// ---- running a sequence against the real Semaphore ----

interface RealWaiter {
  state: "pending" | "fulfilled" | "rejected";
  permit?: Permit;
  reason?: unknown;
}

let runSeq = 0;

const flush = async (): Promise<void> => {
  for (let i = 0; i < 4; i++) await Promise.resolve();
};

async function runSequence(mode: QueueMode, cfg: Config, cmds: readonly Cmd[]): Promise<void> {
  const name = `model-${mode}-${++runSeq}`;
  const sem = new Semaphore({
    name,
    permits: cfg.permits,
    queue: mode,
    maxWaiters: cfg.maxWaiters,
    ...(cfg.acquireTimeoutMs !== undefined ? { acquireTimeoutMs: cfg.acquireTimeoutMs } : {}),
    ...(cfg.adaptiveTargetMs !== undefined ? { adaptiveTargetMs: cfg.adaptiveTargetMs } : {}),
  });
  const model = new Model(mode, cfg);
  const real = new Map<number, RealWaiter>();
  const realGrants: number[] = [];
  // Grant order is the permits' sequence, not the order promise callbacks run in: a waiter granted
  // inside its own acquire() (work-conserving hand-off) resolves before a caller can attach to it.
  const byGrantOrder = (): number[] =>
    [...realGrants].sort((a, b) => (permitsById.get(a) as Permit)._seq - (permitsById.get(b) as Permit)._seq);
  const permitsById = new Map<number, Permit>();
  const controllers = Array.from({ length: CONTROLLERS }, () => new AbortController());
  const events: AgentEvent[] = [];
  const off = onEvent((e) => {
    if (e.id === name) events.push(e);
  });
  const trace: string[] = [`new Semaphore(${JSON.stringify({ queue: mode, ...cfg, maxWaiters: cfg.maxWaiters === Infinity ? "Infinity" : cfg.maxWaiters })})`];
  let lastSampled: Counts = { ...model.counts };
  let nextId = 0;

  const fail = (msg: string): never => {
    throw new Error(`${msg}\n-- steps --\n${trace.join("\n")}`);
  };
  const check = (cond: boolean, msg: () => string): void => {
    if (!cond) fail(msg());
  };

  const watchAcquire = (id: number, p: Promise<Permit>): void => {
    const r: RealWaiter = { state: "pending" };
    real.set(id, r);
    p.then(
      (permit) => {
        r.state = "fulfilled";
        r.permit = permit;
        permitsById.set(id, permit);
        realGrants.push(id);
      },
      (e: unknown) => {
        r.state = "rejected";
        r.reason = e;
      },
    );
  };

  const releaseReal = (h: MHolder): void => {
    const p = permitsById.get(h.id);
    check(p !== undefined, () => `#${h.id} is granted in the model but the real acquire never delivered its permit`);
    (p as Permit).release();
  };

  const abortReal = (ctrl: number): void => {
    const gen = model.gens[ctrl];
    const c = controllers[ctrl];
    controllers[ctrl] = new AbortController(); // later acquires get a fresh signal
    c.abort(model.reasonOf(ctrl, gen));
  };

  const describeState = (): string => {
    const q = model.queue.map((w) => `#${w.id}(w${w.weight}${w.priority !== 0 ? ` p${w.priority}` : ""})`).join(" ");
    const h = model.held().map((x) => `#${x.id}(w${x.weight})`).join(" ");
    return `t=${model.now} cap=${model.cap} avail=${model.avail} held=[${h}] queue=[${q}]${model.closed ? " closed" : ""}`;
  };

  const verify = (step: string): void => {
    const snap = sem.snapshot();
    check(snap.available + snap.inUse === snap.cap, () => `${step}: available ${snap.available} + inUse ${snap.inUse} !== cap ${snap.cap}`);
    check(snap.cap === model.cap, () => `${step}: cap ${snap.cap}, model ${model.cap}`);
    check(snap.inUse === model.used, () => `${step}: inUse ${snap.inUse}, model ${model.used}`);
    check(snap.available === model.avail, () => `${step}: available ${snap.available}, model ${model.avail}`);
    check(snap.waiters === model.queue.length, () => `${step}: ${snap.waiters} waiters, model ${model.queue.length}`);
    check(snap.oldestWaitMs === model.oldestWaitMs(), () => `${step}: oldestWaitMs ${snap.oldestWaitMs}, model ${model.oldestWaitMs()}`);
    // Never more than N held, unless a resize shrank N below what was already held (then no grant
    // happens until enough is returned, which the exact comparisons check).
    check(snap.inUse <= snap.cap || model.used > model.cap, () => `${step}: ${snap.inUse} held with cap ${snap.cap}`);
    // Admission order, grants included, exactly as the model says.
    check(
      realGrants.length === model.grants.length && byGrantOrder().every((id, i) => id === model.grants[i]),
      () => `${step}: admission order [${byGrantOrder().join(",")}], model [${model.grants.join(",")}]`,
    );
    // Every acquire settled as the model says; a rejected waiter never got a permit.
    for (const [id, want] of model.outcomes) {
      const got = real.get(id);
      if (got === undefined) continue; // tryAcquire grants are checked through the holders
      const bad = (): string => `${step}: #${id} is ${got.state}${got.reason !== undefined ? ` (${String(got.reason)})` : ""}, model says ${JSON.stringify(want)}`;
      if (want.s === "pending") check(got.state === "pending", bad);
      else if (want.s === "granted") check(got.state === "fulfilled", bad);
      else {
        check(got.state === "rejected" && got.permit === undefined, bad);
        const e = got.reason;
        switch (want.why) {
          case "timeout":
            check(e instanceof SemaphoreTimeoutError, bad);
            break;
          case "rejected":
            check(e instanceof SemaphoreRejectedError, bad);
            break;
          case "closed":
            check(e instanceof SemaphoreClosedError, bad);
            break;
          case "range":
            check(e instanceof RangeError, bad);
            break;
          case "abort":
            check(want.reason === "already-aborted" ? e instanceof Error && e.message === "already-aborted" : e === want.reason, bad);
            break;
        }
      }
    }
    // The permits callers hold add up to inUse: no permit is held by anyone who was refused.
    let heldWeight = 0;
    for (const h of model.holders) {
      const p = permitsById.get(h.id);
      check(p !== undefined, () => `${step}: #${h.id} granted in the model, no permit in hand`);
      check((p as Permit).held === !h.released, () => `${step}: #${h.id} permit.held is ${(p as Permit).held}, model says ${!h.released}`);
      if (!h.released) heldWeight += (p as Permit).weight;
    }
    check(heldWeight === snap.inUse, () => `${step}: permits in hand weigh ${heldWeight}, inUse is ${snap.inUse}`);
    // Counters: cumulative, and per interval through sample().
    const total = sem.counters();
    const want = model.counts;
    for (const k of Object.keys(want) as (keyof Counts)[]) {
      check(total[k] === want[k], () => `${step}: counters().${k} = ${total[k]}, model ${want[k]}`);
    }
    const s = sem.sample(Date.now());
    for (const k of Object.keys(want) as (keyof Counts)[]) {
      check(s[k] === want[k] - lastSampled[k], () => `${step}: sample().${k} = ${s[k]}, model ${want[k] - lastSampled[k]}`);
    }
    check(s.waitMs.count === want.acquired - lastSampled.acquired, () => `${step}: waitMs.count ${s.waitMs.count} for ${want.acquired - lastSampled.acquired} grants`);
    check(s.holdMs.count === want.released - lastSampled.released, () => `${step}: holdMs.count ${s.holdMs.count} for ${want.released - lastSampled.released} releases`);
    check(s.leaseExpiries === 0, () => `${step}: unexpected lease expiry`);
    lastSampled = { ...want };
    const odd = events.filter((e) => e.type !== "double_release");
    check(odd.length === 0, () => `${step}: unexpected events ${JSON.stringify(odd)}`);
    check(events.length === model.counts.doubleReleases, () => `${step}: ${events.length} double_release events, model counts ${model.counts.doubleReleases}`);
  };

  try {
    verify("start");
    for (const [i, c] of cmds.entries()) {
      const step = `step ${i + 1}: ${show(c)}`;
      switch (c.k) {
        case "acquire": {
          const id = nextId++;
          const signal = c.signal === undefined ? undefined : c.signal === "aborted" ? AbortSignal.abort(new Error("already-aborted")) : controllers[c.signal].signal;
          const opts = { weight: c.weight, priority: c.priority, ...(c.timeout !== undefined ? { timeoutMs: c.timeout } : {}), ...(signal !== undefined ? { signal } : {}) };
          let p: Promise<Permit> | undefined;
          try {
            p = sem.acquire(opts);
          } catch (e) {
            fail(`${step}: acquire() threw synchronously: ${String(e)}`);
          }
          watchAcquire(id, p as Promise<Permit>);
          model.acquire(id, c);
          trace.push(`${step} → #${id}`);
          break;
        }
        case "try": {
          const id = nextId++;
          const want = model.tryAcquire(id, c.weight);
          let got: Permit | undefined;
          let thrown: unknown;
          try {
            got = sem.tryAcquire(c.weight);
          } catch (e) {
            thrown = e;
          }
          if (want === "range") check(thrown instanceof RangeError, () => `${step}: expected a RangeError, got ${String(thrown ?? got)}`);
          else if (want === "closed") check(thrown instanceof SemaphoreClosedError, () => `${step}: expected SemaphoreClosedError, got ${String(thrown ?? got)}`);
          else check(thrown === undefined && (got !== undefined) === (want === "granted"), () => `${step}: tryAcquire gave ${String(thrown ?? got)}, model says ${want}`);
          if (got !== undefined) {
            permitsById.set(id, got);
            realGrants.push(id);
          }
          trace.push(`${step} → #${id} ${want}`);
          break;
        }
        case "release": {
          const held = model.held();
          if (held.length > 0) {
            const h = held[c.pick % held.length];
            releaseReal(h);
            model.release(h);
            trace.push(`${step} → releases #${h.id}`);
          } else trace.push(`${step} → nothing held`);
          break;
        }
        case "double": {
          const done = model.releasedOnes();
          if (done.length > 0) {
            const h = done[c.pick % done.length];
            releaseReal(h);
            model.release(h);
            trace.push(`${step} → #${h.id} again`);
          } else trace.push(`${step} → nothing released yet`);
          break;
        }
        case "abort":
          abortReal(c.ctrl);
          model.abort(c.ctrl);
          trace.push(step);
          break;
        case "race": {
          const held = model.held();
          const h = held.length > 0 ? held[c.pick % held.length] : undefined;
          if (c.order === "abort,release") {
            abortReal(c.ctrl);
            if (h !== undefined) releaseReal(h);
            model.abort(c.ctrl);
            if (h !== undefined) model.release(h);
          } else {
            if (h !== undefined) releaseReal(h);
            if (c.order === "release,microtask,abort") await Promise.resolve();
            abortReal(c.ctrl);
            if (h !== undefined) model.release(h);
            model.abort(c.ctrl);
          }
          trace.push(`${step}${h === undefined ? " → nothing held to release" : ` → releases #${h.id}`}`);
          break;
        }
        case "advance":
          await vi.advanceTimersByTimeAsync(c.ms);
          model.advance(c.ms);
          trace.push(step);
          break;
        case "resize": {
          const want = model.resize(c.permits);
          let thrown: unknown;
          try {
            sem.resize(c.permits);
          } catch (e) {
            thrown = e;
          }
          if (want === "closed") check(thrown instanceof SemaphoreClosedError, () => `${step}: expected SemaphoreClosedError, got ${String(thrown)}`);
          else check(thrown === undefined, () => `${step}: resize threw ${String(thrown)}`);
          trace.push(step);
          break;
        }
        case "close":
          await sem.close();
          model.close();
          trace.push(step);
          break;
      }
      await flush();
      trace[trace.length - 1] += `   [${describeState()}]`;
      verify(step);
    }

    // Settle: release everything, let every waiter through; no permit may be lost.
    for (let round = 0; ; round++) {
      const held = model.held();
      if (held.length === 0) break;
      check(round < 1000, () => "settling does not converge");
      for (const h of held) {
        releaseReal(h);
        model.release(h);
      }
      await flush();
      trace.push(`settle: released ${held.map((h) => `#${h.id}`).join(" ")}   [${describeState()}]`);
      verify(`settle round ${round + 1}`);
    }
    check(model.queue.length === 0, () => `settled with waiters left in the model: ${describeState()}`);
    const snap = sem.snapshot();
    check(snap.available === snap.cap && snap.inUse === 0 && snap.waiters === 0, () => `settled: ${JSON.stringify(snap)}`);
    for (const [id, r] of real) check(r.state !== "pending", () => `settled: #${id} still pending`);
    check(model.counts.acquired === model.counts.released, () => "every grant is released exactly once");
  } finally {
    off();
    await sem.close();
    vi.clearAllTimers();
  }
}

describe("Semaphore against a reference model (fast-check)", () => {
  beforeEach(() => {
    vi.useFakeTimers(FAKE_TIMERS);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  for (const mode of ["fifo", "lifo", "priority", "adaptive"] as const) {
    it(
      `${mode}: every step agrees with the model (${RUNS} runs)`,
      async () => {
        await fc.assert(
          fc.asyncProperty(configArb(mode), fc.array(cmdArb, { maxLength: 60, size: "max" }), async (cfg, cmds) => {
            await runSequence(mode, cfg, cmds);
          }),
          { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
        );
      },
      Math.max(60_000, RUNS * 40),
    );
  }
});
