// The semaphore semantics of docs/agent-api.md as one reusable suite. It runs against our
// Semaphore (semaphore-semantics.test.ts) and, later, against every adapter: an adapter says which
// semantics its target supports through `capabilities`, and every case it lacks is skipped with the
// reason in its name, so a missing feature shows up as "skipped", never as a silent pass.
//
// Time is virtual: setTimeout/clearTimeout/setInterval/performance/Date are faked in every case and
// moved with vi.advanceTimersByTimeAsync, so timeouts, leases and waits are exact to the millisecond.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  onEvent,
  SemaphoreClosedError,
  SemaphoreRejectedError,
  SemaphoreTimeoutError,
  type AgentEvent,
  type QueueMode,
  type Sample,
} from "../../agent/src/index.js";
import type { AcquireOptions, SemaphoreOptions } from "../../agent/src/options.js";

// ---------------------------------------------------------------------------------------------
// What the suite needs from a target. Our Semaphore satisfies it as it is; an adapter wraps its
// instrument() handle (and the target) in an object of this shape.

/** The Semaphore's own options (minus the fleet-wide and recorder ones no case uses); the suite generates a unique name per case. */
export type SubjectOptions = Omit<SemaphoreOptions, "budget" | "flightRecorder">;

export type SubjectAcquireOptions = AcquireOptions;

export interface SubjectPermit {
  release(): void;
  /** True until released or taken back by lease expiry, where the target can tell. */
  readonly held?: boolean;
  [Symbol.dispose]?(): void;
  [Symbol.asyncDispose]?(): PromiseLike<void>;
}

/** The snapshot fields the suite reads (SemaphoreSnapshot has more). */
export interface SubjectCounts {
  cap: number;
  inUse: number;
  available: number;
  waiters: number;
  oldestWaitMs?: number;
  holders?: readonly { holderId: string; weight: number; heldMs: number; stack?: string }[];
}

export interface SubjectUnderTest {
  /** The id its events and samples carry. */
  readonly id: string;
  acquire(options?: SubjectAcquireOptions): Promise<SubjectPermit>;
  tryAcquire?(weight?: number): SubjectPermit | undefined;
  use?<T>(fn: () => T | PromiseLike<T>, options?: SubjectAcquireOptions): Promise<T>;
  snapshot(): SubjectCounts;
  sample?(nowEpochMs: number): Sample;
  resize?(permits: number): void;
  close?(): Promise<void>;
}

export interface Capabilities {
  /** Queue disciplines the target offers; "fifo" is the minimum. */
  queueModes: readonly QueueMode[];
  /** acquire({ weight }) and tryAcquire(weight). */
  weights: boolean;
  /** acquire({ timeoutMs }) and the acquireTimeoutMs option. */
  timeouts: boolean;
  /** acquire({ signal }). */
  abort: boolean;
  maxWaiters: boolean;
  tryAcquire: boolean;
  use: boolean;
  /** Permits are Disposable and AsyncDisposable (`using`, `await using`). */
  dispose: boolean;
  /** A new acquire()/tryAcquire() never overtakes a queued waiter. */
  noBarging: boolean;
  /** Bad options and arguments are refused with a TypeError/RangeError naming them. */
  argumentChecks: boolean;
  /** A second release() changes no count and is counted and reported. */
  doubleReleaseDetection: boolean;
  leases: boolean;
  leakDetection: boolean;
  orderInversion: boolean;
  close: boolean;
  resize: boolean;
  /** sample(): per-interval counters and wait/hold summaries. */
  sample: boolean;
  /**
   * release() frees the permit a few microtasks later, not before it returns (p-limit, p-queue: the
   * slot is freed when the task's promise settles). Cases then let promise reactions run before
   * reading counts after a release, and skip the one case that is about the synchronous hand-off.
   */
  asyncRelease?: boolean;
  /**
   * The leak watch runs on the process's real timers, taken before any test fakes them (the
   * adapters), so a test's fake timers cannot fire it early. Leak cases then move the faked clock
   * as before and give the real timer time to run before looking; ages still read the faked clock.
   */
  realTimerLeakWatch?: boolean;
  /**
   * Promise reactions the target needs to answer an acquire or a release, when more than the 8
   * flush() lets run by default (tarn: a grant goes through ~17 chained promises).
   */
  reactionDepth?: number;
}

/** Everything the suite can check: what our own Semaphore offers, flight recorder on or off. */
export const EVERY_CAPABILITY: Capabilities = {
  queueModes: ["fifo", "lifo", "priority", "adaptive"],
  weights: true,
  timeouts: true,
  abort: true,
  maxWaiters: true,
  tryAcquire: true,
  use: true,
  dispose: true,
  noBarging: true,
  argumentChecks: true,
  doubleReleaseDetection: true,
  leases: true,
  leakDetection: true,
  orderInversion: true,
  close: true,
  resize: true,
  sample: true,
};

export type CapabilityName = Exclude<keyof Capabilities, "queueModes" | "asyncRelease" | "reactionDepth">;

/** Why a target lacks a capability, shown in the skipped case's name. */
export type CapabilityReasons = Partial<Record<CapabilityName | QueueMode, string>>;

export type SubjectFactory = (options: SubjectOptions) => SubjectUnderTest;

export const FAKE_TIMERS = {
  toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance", "Date"],
} satisfies Parameters<typeof vi.useFakeTimers>[0];

// ---------------------------------------------------------------------------------------------
// Helpers (exported for the Semaphore-specific and model tests).

export interface Settled<T> {
  readonly promise: Promise<T>;
  state: "pending" | "fulfilled" | "rejected";
  value: T | undefined;
  reason: unknown;
  /** Position in the order settlements were observed (-1 while pending). */
  settledAt: number;
}

let settleCounter = 0;

/** Watch a promise without ever leaving it unhandled. */
export function watch<T>(promise: Promise<T>): Settled<T> {
  const s: Settled<T> = { promise, state: "pending", value: undefined, reason: undefined, settledAt: -1 };
  promise.then(
    (v) => {
      s.state = "fulfilled";
      s.value = v;
      s.settledAt = settleCounter++;
    },
    (e: unknown) => {
      s.state = "rejected";
      s.reason = e;
      s.settledAt = settleCounter++;
    },
  );
  return s;
}

const REAL_SET_TIMEOUT = globalThis.setTimeout;
/** Waits in real time, whatever timers a case has faked. */
const realSleep = (ms: number): Promise<void> => new Promise((r) => REAL_SET_TIMEOUT(r, ms));

const DEFAULT_REACTION_DEPTH = 8;
/** How many promise reactions flush() lets run: a suite's `reactionDepth` while its cases run. */
let reactionDepth = DEFAULT_REACTION_DEPTH;

/** Let promise reactions run (no timers move). */
export async function flush(): Promise<void> {
  for (let i = 0; i < reactionDepth; i++) await Promise.resolve();
}

/** Calls fn and requires that it does not throw synchronously; returns its promise, watched. */
export function callAsync<T>(fn: () => Promise<T>): Settled<T> {
  let p: Promise<T> | undefined;
  expect(() => {
    p = fn();
  }, "acquire() must return a rejection, never throw synchronously").not.toThrow();
  expect(p).toBeInstanceOf(Promise);
  return watch(p as Promise<T>);
}

export interface CallSite {
  file: string;
  line: number;
}

function parseFrame(frame: string): CallSite | undefined {
  const m = /\(?((?:file:\/\/)?[^()\s]+):(\d+):(\d+)\)?\s*$/.exec(frame);
  if (m === null) return undefined;
  return { file: m[1].replace(/^file:\/\//, ""), line: Number(m[2]) };
}

/** The file and line of the caller of here(). */
export function here(): CallSite {
  const frames = (new Error().stack ?? "").split("\n").filter((l) => /^\s*at /.test(l));
  const site = parseFrame(frames[1] ?? "");
  if (site === undefined) throw new Error(`cannot parse a call site from ${frames[1]}`);
  return site;
}

/** The first frame of a reported stack that is the user's code, not the agent or a library. */
export function firstUserFrame(stack: string | undefined): CallSite | undefined {
  for (const line of (stack ?? "").split("\n")) {
    if (!/^\s*at /.test(line)) continue;
    // test/agent/adapters/subjects.ts maps the suite's acquire() onto a library's call shape: glue, not the caller.
    if (/[/\\]agent[/\\]src[/\\]|[/\\]adapters[/\\]subjects\.ts|node_modules|node:internal|\(native\)|<anonymous>/.test(line)) continue;
    return parseFrame(line);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------

export function semaphoreSemantics(
  name: string,
  factory: SubjectFactory,
  capabilities: Capabilities,
  reasons: CapabilityReasons = {},
): void {
  const caps = capabilities;
  const why = (what: CapabilityName | QueueMode): string => reasons[what] ?? `${name} does not support ${what}`;
  /** A describe block that runs only with every listed capability; otherwise skipped, saying why. */
  const section = (title: string, needs: readonly CapabilityName[], body: () => void): void => {
    const missing = needs.filter((c) => !caps[c]);
    const label = missing.length === 0 ? title : `${title} [SKIPPED: ${missing.map(why).join("; ")}]`;
    describe.skipIf(missing.length > 0)(label, body);
  };

  describe(`semaphore semantics: ${name}`, () => {
    let subjects: SubjectUnderTest[] = [];
    let events: AgentEvent[] = [];
    let unsubscribe: (() => void) | undefined;
    let seq = 0;

    beforeEach(() => {
      reactionDepth = caps.reactionDepth ?? DEFAULT_REACTION_DEPTH;
      vi.useFakeTimers(FAKE_TIMERS);
      events = [];
      unsubscribe = onEvent((e) => events.push(e));
    });

    afterEach(async () => {
      const live = subjects;
      subjects = [];
      try {
        for (const s of live) {
          const snap = s.snapshot();
          expect(snap.available + snap.inUse, `${s.id}: available + inUse === cap`).toBe(snap.cap);
        }
        const broken = events.filter((e) => e.type === "invariant_violation" && live.some((s) => s.id === e.id));
        expect(broken, "no invariant_violation event").toEqual([]);
      } finally {
        for (const s of live) await s.close?.();
        unsubscribe?.();
        reactionDepth = DEFAULT_REACTION_DEPTH;
        vi.clearAllTimers();
        vi.useRealTimers();
      }
    });

    function make(options: Omit<SubjectOptions, "name"> & { name?: string }): SubjectUnderTest {
      const s = factory({ ...options, name: options.name ?? `${name}-sem-${++seq}-${Math.random().toString(36).slice(2, 8)}` });
      subjects.push(s);
      return s;
    }
    const eventsOf = (s: SubjectUnderTest, type?: AgentEvent["type"]): AgentEvent[] =>
      events.filter((e) => e.id === s.id && (type === undefined || e.type === type));
    const counts = (s: SubjectUnderTest): { inUse: number; available: number; waiters: number } => {
      const { inUse, available, waiters } = s.snapshot();
      return { inUse, available, waiters };
    };
    const advance = (ms: number): Promise<unknown> => vi.advanceTimersByTimeAsync(ms);

    /**
     * Release the holder, then each admitted waiter in turn; returns the admission order. Checks that
     * exactly one waiter is admitted per permit returned.
     */
    async function admissionOrder(
      holder: SubjectPermit,
      waiters: Settled<SubjectPermit>[],
      beforeRelease?: (round: number) => Promise<unknown>,
    ): Promise<number[]> {
      const order: number[] = [];
      let current = holder;
      for (let round = 0; round < waiters.length; round++) {
        if (beforeRelease !== undefined) await beforeRelease(round);
        current.release();
        await flush();
        const admitted = waiters.flatMap((w, i) => (w.state === "fulfilled" && !order.includes(i) ? [i] : []));
        expect(admitted, `round ${round}: exactly one waiter admitted per permit returned`).toHaveLength(1);
        order.push(admitted[0]);
        current = waiters[admitted[0]].value as SubjectPermit;
      }
      current.release();
      return order;
    }

    // ---- the core every target has ----

    describe("counting", () => {
      it("never holds more than N permits and keeps available + inUse === N", async () => {
        const s = make({ permits: 3 });
        const held = [await s.acquire(), await s.acquire(), await s.acquire()];
        expect(counts(s)).toEqual({ inUse: 3, available: 0, waiters: 0 });
        const fourth = watch(s.acquire());
        await flush();
        expect(fourth.state).toBe("pending");
        expect(counts(s)).toEqual({ inUse: 3, available: 0, waiters: 1 });
        held[1].release();
        await flush();
        expect(fourth.state).toBe("fulfilled");
        expect(counts(s)).toEqual({ inUse: 3, available: 0, waiters: 0 });
        for (const p of [held[0], held[2], fourth.value as SubjectPermit]) p.release();
        if (caps.asyncRelease === true) await flush();
        expect(counts(s)).toEqual({ inUse: 0, available: 3, waiters: 0 });
        expect(s.snapshot().cap).toBe(3);
      });

      it("admits exactly one waiter per permit returned", async () => {
        const s = make({ permits: 2 });
        const a = await s.acquire();
        const b = await s.acquire();
        const waiters = [0, 1, 2].map(() => watch(s.acquire()));
        await flush();
        a.release();
        await flush();
        expect(waiters.map((w) => w.state)).toEqual(["fulfilled", "pending", "pending"]);
        b.release();
        await flush();
        expect(waiters.map((w) => w.state)).toEqual(["fulfilled", "fulfilled", "pending"]);
        for (const w of waiters.slice(0, 2)) (w.value as SubjectPermit).release();
        await flush();
        expect(waiters[2].state).toBe("fulfilled");
        (waiters[2].value as SubjectPermit).release();
        if (caps.asyncRelease === true) await flush();
        expect(counts(s)).toEqual({ inUse: 0, available: 2, waiters: 0 });
      });

      it("acquire() on a free semaphore resolves at once, without any timer", async () => {
        const s = make({ permits: 1 });
        const p = watch(s.acquire());
        await flush();
        expect(p.state).toBe("fulfilled");
        (p.value as SubjectPermit).release();
      });
    });

    // ---- queue disciplines ----

    describe.skipIf(!caps.queueModes.includes("fifo"))(
      caps.queueModes.includes("fifo") ? "queue: fifo" : `queue: fifo [SKIPPED: ${why("fifo")}]`,
      () => {
        it("admits waiters in arrival order (and fifo is the default)", async () => {
          for (const queue of ["fifo", undefined] as const) {
            const s = make({ permits: 1, ...(queue !== undefined ? { queue } : {}) });
            const holder = await s.acquire();
            const waiters = [0, 1, 2, 3, 4].map(() => watch(s.acquire()));
            expect(await admissionOrder(holder, waiters)).toEqual([0, 1, 2, 3, 4]);
          }
        });
      },
    );

    describe.skipIf(!caps.queueModes.includes("lifo"))(
      caps.queueModes.includes("lifo") ? "queue: lifo" : `queue: lifo [SKIPPED: ${why("lifo")}]`,
      () => {
        it("admits the newest waiter first", async () => {
          const s = make({ permits: 1, queue: "lifo" });
          const holder = await s.acquire();
          const waiters = [0, 1, 2, 3, 4].map(() => watch(s.acquire()));
          expect(await admissionOrder(holder, waiters)).toEqual([4, 3, 2, 1, 0]);
        });

        it("a waiter arriving between releases is served before the older ones", async () => {
          const s = make({ permits: 1, queue: "lifo" });
          const holder = await s.acquire();
          const waiters = [watch(s.acquire()), watch(s.acquire()), watch(s.acquire())];
          holder.release();
          await flush();
          expect(waiters.map((w) => w.state)).toEqual(["pending", "pending", "fulfilled"]);
          waiters.push(watch(s.acquire())); // newest now
          (waiters[2].value as SubjectPermit).release();
          await flush();
          expect(waiters.map((w) => w.state)).toEqual(["pending", "pending", "fulfilled", "fulfilled"]);
          (waiters[3].value as SubjectPermit).release();
          await flush();
          expect(waiters[1].state).toBe("fulfilled");
          expect(waiters[0].state).toBe("pending");
          (waiters[1].value as SubjectPermit).release();
          await flush();
          (waiters[0].value as SubjectPermit).release();
          expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        });
      },
    );

    describe.skipIf(!caps.queueModes.includes("priority"))(
      caps.queueModes.includes("priority") ? "queue: priority" : `queue: priority [SKIPPED: ${why("priority")}]`,
      () => {
        it("admits the highest priority first, FIFO among equals", async () => {
          const s = make({ permits: 1, queue: "priority" });
          const holder = await s.acquire();
          const priorities = [1, 5, 1, 5, 3, 0, -2, 3, 5, 0.5];
          const waiters = priorities.map((priority) => watch(s.acquire({ priority })));
          // 5s in arrival order (1, 3, 8), then 3s (4, 7), 1s (0, 2), 0.5 (9), 0 (5), -2 (6).
          expect(await admissionOrder(holder, waiters)).toEqual([1, 3, 8, 4, 7, 0, 2, 9, 5, 6]);
        });

        it("priority defaults to 0", async () => {
          const s = make({ permits: 1, queue: "priority" });
          const holder = await s.acquire();
          const waiters = [watch(s.acquire({ priority: -1 })), watch(s.acquire()), watch(s.acquire({ priority: 0 })), watch(s.acquire({ priority: 1 }))];
          expect(await admissionOrder(holder, waiters)).toEqual([3, 1, 2, 0]);
        });

        const heavyHead = "a higher-priority newcomer that fits is admitted at once beside a heavy low-priority head";
        it.skipIf(!caps.weights)(caps.weights ? heavyHead : `${heavyHead} [SKIPPED: ${why("weights")}]`, async () => {
          const s = make({ permits: 3, queue: "priority" });
          const holder = await s.acquire({ weight: 2 });
          const heavy = watch(s.acquire({ weight: 2, priority: 0 }));
          const urgent = watch(s.acquire({ weight: 1, priority: 5 }));
          await flush();
          // The discipline ranks the newcomer first and a permit is free: no idle permit beside it.
          expect(urgent.state).toBe("fulfilled");
          expect(heavy.state).toBe("pending");
          expect(counts(s)).toEqual({ inUse: 3, available: 0, waiters: 1 });
          holder.release();
          (urgent.value as SubjectPermit).release();
          await flush();
          expect(heavy.state).toBe("fulfilled");
          (heavy.value as SubjectPermit).release();
        });
      },
    );

    describe.skipIf(!caps.queueModes.includes("adaptive"))(
      caps.queueModes.includes("adaptive") ? "queue: adaptive" : `queue: adaptive [SKIPPED: ${why("adaptive")}]`,
      () => {
        it("is FIFO while the oldest waiter is younger than 100 ms, LIFO once it is older", async () => {
          const s = make({ permits: 1, queue: "adaptive" });
          const holder = await s.acquire();
          const waiters: Settled<SubjectPermit>[] = [];
          for (let i = 0; i < 6; i++) {
            waiters.push(watch(s.acquire()));
            await advance(10); // waiter i enqueued at t = 10·i
          }
          // t = 60: oldest (#0) is 60 ms old → FIFO: #0, then at t = 99 #1 is 89 ms old → #1.
          // t = 111: oldest (#2, t = 20) is 91 ms old → FIFO #2. t = 130: #3 (t = 30) is 100 ms old → LIFO: #5, #4, #3.
          const at = [0, 39, 12, 19, 0, 0];
          const order = await admissionOrder(holder, waiters, (round) => advance(at[round]));
          expect(order).toEqual([0, 1, 2, 5, 4, 3]);
        });

        it("switches at exactly the target: 99 ms is FIFO, 100 ms is LIFO", async () => {
          for (const [age, expected] of [
            [99, [0, 1, 2]],
            [100, [2, 1, 0]],
          ] as const) {
            const s = make({ permits: 1, queue: "adaptive" });
            const holder = await s.acquire();
            const waiters = [watch(s.acquire()), watch(s.acquire()), watch(s.acquire())];
            await advance(age);
            expect(await admissionOrder(holder, waiters), `oldest waiter ${age} ms old`).toEqual(expected);
          }
        });

        section("with a shared abort signal", ["abort", "weights"], () => {
          it("a newcomer that LIFO ranks first gets free permits at once; aborted waiters then leave cleanly", async () => {
            const s = make({ permits: 4, queue: "adaptive" });
            const h = await s.acquire({ weight: 2 });
            const ac = new AbortController();
            const old = [watch(s.acquire({ weight: 3, signal: ac.signal })), watch(s.acquire({ weight: 3, signal: ac.signal }))];
            await advance(100);
            const heavy = watch(s.acquire({ weight: 4 }));
            const light = watch(s.acquire({ weight: 1 }));
            await flush();
            // The oldest waiter is past the target, so the newest is served first, and it fits: work-conserving.
            expect(light.state, "the light newcomer is admitted beside free permits, not left waiting").toBe("fulfilled");
            expect(heavy.state).toBe("pending");
            ac.abort();
            await flush();
            expect(old.map((w) => w.state)).toEqual(["rejected", "rejected"]);
            expect(counts(s)).toEqual({ inUse: 3, available: 1, waiters: 1 });
            h.release();
            (light.value as SubjectPermit).release();
            await flush();
            expect(heavy.state).toBe("fulfilled");
            (heavy.value as SubjectPermit).release();
          });
        });

        it("goes back to FIFO once the old waiters are served", async () => {
          const s = make({ permits: 1, queue: "adaptive" });
          const holder = await s.acquire();
          const old = [watch(s.acquire()), watch(s.acquire())];
          await advance(150);
          const order1 = await admissionOrder(holder, old);
          expect(order1).toEqual([1, 0]); // LIFO while the oldest is over 100 ms
          const h2 = await s.acquire();
          const fresh = [watch(s.acquire()), watch(s.acquire()), watch(s.acquire())];
          await advance(20);
          expect(await admissionOrder(h2, fresh)).toEqual([0, 1, 2]); // young queue: FIFO again
        });
      },
    );

    // ---- weights ----

    section("weights", ["weights"], () => {
      it("counts weights in inUse and available", async () => {
        const s = make({ permits: 5 });
        const a = await s.acquire({ weight: 3 });
        expect(counts(s)).toEqual({ inUse: 3, available: 2, waiters: 0 });
        const b = await s.acquire({ weight: 2 });
        expect(counts(s)).toEqual({ inUse: 5, available: 0, waiters: 0 });
        a.release();
        expect(counts(s)).toEqual({ inUse: 2, available: 3, waiters: 0 });
        b.release();
        expect(counts(s)).toEqual({ inUse: 0, available: 5, waiters: 0 });
      });

      it("a heavy waiter at the head is not overtaken by lighter ones behind it", async () => {
        const s = make({ permits: 4 });
        const h = await s.acquire({ weight: 3 });
        const heavy = watch(s.acquire({ weight: 3 }));
        const light = [0, 1, 2].map(() => watch(s.acquire({ weight: 1 })));
        await flush();
        // One permit is free and a light waiter would fit, but the heavy head comes first.
        expect(counts(s)).toEqual({ inUse: 3, available: 1, waiters: 4 });
        expect(light.map((w) => w.state)).toEqual(["pending", "pending", "pending"]);
        h.release();
        await flush();
        // 4 free: the heavy head takes 3, then exactly one light waiter fits.
        expect(heavy.state).toBe("fulfilled");
        expect(light.map((w) => w.state)).toEqual(["fulfilled", "pending", "pending"]);
        expect(counts(s)).toEqual({ inUse: 4, available: 0, waiters: 2 });
        (heavy.value as SubjectPermit).release();
        await flush();
        expect(light.map((w) => w.state)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
        for (const w of light) (w.value as SubjectPermit).release();
      });

      it("a heavy head gets its permits once enough single permits are released", async () => {
        const s = make({ permits: 4 });
        const singles = [await s.acquire(), await s.acquire(), await s.acquire(), await s.acquire()];
        const heavy = watch(s.acquire({ weight: 4 }));
        const light = watch(s.acquire({ weight: 1 }));
        for (let i = 0; i < 3; i++) {
          singles[i].release();
          await flush();
          expect(heavy.state, `after ${i + 1} released`).toBe("pending");
          expect(light.state, `light must not pass the heavy head after ${i + 1} released`).toBe("pending");
          expect(counts(s)).toEqual({ inUse: 3 - i, available: i + 1, waiters: 2 });
        }
        singles[3].release();
        await flush();
        expect(heavy.state).toBe("fulfilled");
        expect(light.state).toBe("pending");
        expect(counts(s)).toEqual({ inUse: 4, available: 0, waiters: 1 });
        (heavy.value as SubjectPermit).release();
        await flush();
        expect(light.state).toBe("fulfilled");
        (light.value as SubjectPermit).release();
      });

      it("admits as many waiters as now fit on one release, in order", async () => {
        const s = make({ permits: 5 });
        const h = await s.acquire({ weight: 5 });
        const ws = [2, 2, 1, 3, 1].map((weight) => watch(s.acquire({ weight })));
        h.release();
        await flush();
        // 2 + 2 + 1 fill all 5; the 3 at the head then waits, and the 1 behind it must not pass.
        expect(ws.map((w) => w.state)).toEqual(["fulfilled", "fulfilled", "fulfilled", "pending", "pending"]);
        expect(counts(s)).toEqual({ inUse: 5, available: 0, waiters: 2 });
        for (const w of ws.slice(0, 3)) (w.value as SubjectPermit).release();
        await flush();
        expect(ws.map((w) => w.state)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
        for (const w of ws.slice(3)) (w.value as SubjectPermit).release();
      });

      it("a weight equal to permits is granted; above permits it is refused at once, not queued", async () => {
        const s = make({ permits: 3 });
        const all = await s.acquire({ weight: 3 });
        const tooHeavy = callAsync(() => s.acquire({ weight: 4 }));
        await flush();
        expect(tooHeavy.state).toBe("rejected");
        expect(tooHeavy.reason).toBeInstanceOf(RangeError);
        expect(String((tooHeavy.reason as Error).message)).toMatch(/weight/);
        expect(counts(s).waiters).toBe(0);
        all.release();
        // Even on an idle semaphore it is refused.
        const again = callAsync(() => s.acquire({ weight: 4 }));
        await flush();
        expect(again.state).toBe("rejected");
        expect(again.reason).toBeInstanceOf(RangeError);
        expect(counts(s)).toEqual({ inUse: 0, available: 3, waiters: 0 });
      });
    });

    // ---- no barging ----

    section("no barging", ["noBarging"], () => {
      const handOff = "a released permit is handed straight to the next waiter, never shown free in between";
      it.skipIf(caps.asyncRelease === true)(caps.asyncRelease === true ? `${handOff} [SKIPPED: ${name} frees a slot when the task's promise settles, after release() returns]` : handOff, async () => {
        const s = make({ permits: 2 });
        const a = await s.acquire();
        await s.acquire();
        const w = watch(s.acquire());
        a.release();
        // Synchronously after release(): the permit already belongs to the waiter.
        expect(counts(s)).toEqual({ inUse: 2, available: 0, waiters: 0 });
        await flush();
        expect(w.state).toBe("fulfilled");
        (w.value as SubjectPermit).release();
      });

      it("a new acquire() in the same tick as a release does not overtake the queued waiter", async () => {
        const s = make({ permits: 1 });
        const holder = await s.acquire();
        const queued = watch(s.acquire());
        await flush();
        holder.release();
        const late = watch(s.acquire());
        await flush();
        expect(queued.state).toBe("fulfilled");
        expect(late.state).toBe("pending");
        (queued.value as SubjectPermit).release();
        await flush();
        expect(late.state).toBe("fulfilled");
        (late.value as SubjectPermit).release();
      });

      section("with tryAcquire", ["tryAcquire"], () => {
        it("tryAcquire() right after a release does not take the permit meant for the waiter", async () => {
          const s = make({ permits: 1 });
          const holder = await s.acquire();
          const queued = watch(s.acquire());
          holder.release();
          const t = s.tryAcquire?.();
          expect(t).toBeUndefined();
          await flush();
          expect(queued.state).toBe("fulfilled");
          (queued.value as SubjectPermit).release();
          // With nobody queued it grants.
          const t2 = s.tryAcquire?.();
          expect(t2).toBeDefined();
          t2?.release();
        });
      });

      section("beside a free permit (weights)", ["weights", "tryAcquire"], () => {
        it("neither acquire() nor tryAcquire() takes a free permit while a heavier waiter is queued", async () => {
          const s = make({ permits: 2 });
          const h = await s.acquire();
          const heavy = watch(s.acquire({ weight: 2 }));
          await flush();
          expect(counts(s)).toEqual({ inUse: 1, available: 1, waiters: 1 });
          expect(s.tryAcquire?.(1)).toBeUndefined();
          const light = watch(s.acquire({ weight: 1 }));
          await flush();
          expect(light.state).toBe("pending");
          expect(counts(s)).toEqual({ inUse: 1, available: 1, waiters: 2 });
          h.release();
          await flush();
          expect(heavy.state).toBe("fulfilled");
          expect(light.state).toBe("pending");
          (heavy.value as SubjectPermit).release();
          await flush();
          expect(light.state).toBe("fulfilled");
          (light.value as SubjectPermit).release();
        });
      });
    });

    // ---- rejections ----

    section("rejection: timeout", ["timeouts"], () => {
      it("rejects with SemaphoreTimeoutError when the timeout passes, and leaves the queue", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const w = callAsync(() => s.acquire({ timeoutMs: 50 }));
        await advance(49);
        expect(w.state).toBe("pending");
        expect(counts(s).waiters).toBe(1);
        await advance(1);
        expect(w.state).toBe("rejected");
        expect(w.reason).toBeInstanceOf(SemaphoreTimeoutError);
        const err = w.reason as SemaphoreTimeoutError;
        expect(err.name).toBe("SemaphoreTimeoutError");
        expect(err.message).toContain("50 ms");
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        h.release();
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
      });

      it("acquireTimeoutMs is the default, and a per-call timeoutMs overrides it", async () => {
        const s = make({ permits: 1, acquireTimeoutMs: 30 });
        const h = await s.acquire();
        const byDefault = watch(s.acquire());
        const longer = watch(s.acquire({ timeoutMs: 80 }));
        await advance(30);
        expect(byDefault.state).toBe("rejected");
        expect(byDefault.reason).toBeInstanceOf(SemaphoreTimeoutError);
        expect(longer.state).toBe("pending");
        await advance(50);
        expect(longer.state).toBe("rejected");
        h.release();
      });

      it("timeoutMs 0 rejects at once when no permit is free, and grants when one is", async () => {
        const s = make({ permits: 1 });
        const free = watch(s.acquire({ timeoutMs: 0 }));
        await flush();
        expect(free.state).toBe("fulfilled");
        const busy = callAsync(() => s.acquire({ timeoutMs: 0 }));
        await flush(); // no timer moves
        expect(busy.state).toBe("rejected");
        expect(busy.reason).toBeInstanceOf(SemaphoreTimeoutError);
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        (free.value as SubjectPermit).release();
      });

      it("a granted waiter's timeout does not fire later", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const w = watch(s.acquire({ timeoutMs: 50 }));
        await advance(10);
        h.release();
        await advance(100);
        expect(w.state).toBe("fulfilled");
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        (w.value as SubjectPermit).release();
      });

      it("a timeout longer than setTimeout's 2^31−1 ms limit does not fire early", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const day = 24 * 3600 * 1000;
        const w = watch(s.acquire({ timeoutMs: 30 * day })); // 2.59e9 ms > 2^31 − 1
        await advance(1000);
        expect(w.state, "30-day timeout must not fire after 1 s").toBe("pending");
        await advance(25 * day);
        expect(w.state, "nor after 25 days").toBe("pending");
        await advance(5 * day - 1001);
        expect(w.state).toBe("pending");
        await advance(1);
        expect(w.state).toBe("rejected");
        expect(w.reason).toBeInstanceOf(SemaphoreTimeoutError);
        h.release();
      });

      it("release in the same millisecond as the timeout: whichever runs first wins, and no permit is lost", async () => {
        for (const releaseFirst of [true, false]) {
          const s = make({ permits: 1 });
          const h = await s.acquire();
          // Timers due at the same instant run in creation order.
          if (releaseFirst) setTimeout(() => h.release(), 50);
          const w = watch(s.acquire({ timeoutMs: 50 }));
          if (!releaseFirst) setTimeout(() => h.release(), 50);
          await advance(50);
          if (releaseFirst) {
            expect(w.state).toBe("fulfilled");
            expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
            (w.value as SubjectPermit).release();
          } else {
            expect(w.state).toBe("rejected");
            expect(w.reason).toBeInstanceOf(SemaphoreTimeoutError);
          }
          expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        }
      });
    });

    section("rejection: maxWaiters", ["maxWaiters"], () => {
      it("rejects a waiter beyond maxWaiters at once with SemaphoreRejectedError (at capacity)", async () => {
        const s = make({ permits: 1, maxWaiters: 2 });
        const h = await s.acquire();
        const queued = [watch(s.acquire()), watch(s.acquire())];
        const third = callAsync(() => s.acquire());
        await flush();
        expect(third.state).toBe("rejected");
        expect(third.reason).toBeInstanceOf(SemaphoreRejectedError);
        expect((third.reason as Error).name).toBe("SemaphoreRejectedError");
        expect((third.reason as Error).message).toMatch(/at capacity/);
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 2 });
        // Room again once one is admitted.
        h.release();
        await flush();
        const again = watch(s.acquire());
        await flush();
        expect(again.state).toBe("pending");
        (queued[0].value as SubjectPermit).release();
        await flush();
        (queued[1].value as SubjectPermit).release();
        await flush();
        (again.value as SubjectPermit).release();
      });

      it("maxWaiters 0 never queues, but still grants a free permit", async () => {
        const s = make({ permits: 1, maxWaiters: 0 });
        const h = await s.acquire();
        const w = callAsync(() => s.acquire());
        await flush();
        expect(w.reason).toBeInstanceOf(SemaphoreRejectedError);
        h.release();
      });
    });

    section("rejection: abort", ["abort"], () => {
      it("rejects with the signal's reason and leaves the queue", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const ac = new AbortController();
        const reason = new Error("caller went away");
        const w = callAsync(() => s.acquire({ signal: ac.signal }));
        await flush();
        expect(counts(s).waiters).toBe(1);
        ac.abort(reason);
        await flush();
        expect(w.state).toBe("rejected");
        expect(w.reason).toBe(reason);
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        h.release();
        if (caps.asyncRelease === true) await flush();
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
      });

      it("rejects with an AbortError DOMException when aborted without a reason", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const ac = new AbortController();
        const w = watch(s.acquire({ signal: ac.signal }));
        ac.abort();
        await flush();
        expect(w.reason).toBeInstanceOf(DOMException);
        expect((w.reason as DOMException).name).toBe("AbortError");
        h.release();
      });

      it("an already-aborted signal rejects at once, even with a permit free", async () => {
        const s = make({ permits: 1 });
        const reason = new Error("already gone");
        const w = callAsync(() => s.acquire({ signal: AbortSignal.abort(reason) }));
        await flush();
        expect(w.state).toBe("rejected");
        expect(w.reason).toBe(reason);
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        const w2 = watch(s.acquire({ signal: AbortSignal.abort() }));
        await flush();
        expect((w2.reason as DOMException).name).toBe("AbortError");
      });

      it("aborting after the grant changes nothing: the waiter holds its permit", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const ac = new AbortController();
        const w = watch(s.acquire({ signal: ac.signal }));
        h.release(); // hands the permit over
        ac.abort(); // same tick, after the hand-off
        await flush();
        expect(w.state).toBe("fulfilled");
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        (w.value as SubjectPermit).release();
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
      });

      it("aborting before the release in the same tick: the waiter is rejected and the permit goes on", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const ac = new AbortController();
        const w = watch(s.acquire({ signal: ac.signal }));
        const next = watch(s.acquire());
        ac.abort();
        h.release();
        await flush();
        expect(w.state).toBe("rejected");
        expect(next.state).toBe("fulfilled");
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        (next.value as SubjectPermit).release();
      });

      it("a release made by an earlier listener of the same signal does not grant the aborted waiter", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const ac = new AbortController();
        // The caller's own clean-up runs first and returns the permit it held...
        ac.signal.addEventListener("abort", () => h.release(), { once: true });
        // ...while its queued acquire on the same signal has not heard of the abort yet.
        const w = watch(s.acquire({ signal: ac.signal }));
        const other = watch(s.acquire());
        ac.abort();
        await flush();
        expect(w.state, "a waiter whose signal is aborted must never be granted").toBe("rejected");
        expect(other.state).toBe("fulfilled");
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        (other.value as SubjectPermit).release();
      });

      section("with weights", ["weights"], () => {
        it("one signal shared by several waiters: aborting it rejects them all, none is granted", async () => {
          const s = make({ permits: 2 });
          const h = await s.acquire();
          const ac = new AbortController();
          // The heavy head blocks the light one; cancelling the head must not grant the light one,
          // whose signal is already aborted too.
          const heavy = watch(s.acquire({ weight: 2, signal: ac.signal }));
          const light = watch(s.acquire({ weight: 1, signal: ac.signal }));
          const other = watch(s.acquire({ weight: 1 }));
          ac.abort();
          await flush();
          expect(heavy.state).toBe("rejected");
          expect(light.state, "a waiter whose signal is aborted must never be granted").toBe("rejected");
          expect(other.state).toBe("fulfilled");
          expect(counts(s)).toEqual({ inUse: 2, available: 0, waiters: 0 });
          h.release();
          (other.value as SubjectPermit).release();
        });
      });
    });

    section("rejection: close", ["close"], () => {
      it("rejects queued waiters and later acquires with SemaphoreClosedError; held permits still release", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const w = watch(s.acquire());
        await s.close?.();
        await flush();
        expect(w.state).toBe("rejected");
        expect(w.reason).toBeInstanceOf(SemaphoreClosedError);
        expect((w.reason as Error).name).toBe("SemaphoreClosedError");
        const later = callAsync(() => s.acquire());
        await flush();
        expect(later.reason).toBeInstanceOf(SemaphoreClosedError);
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        h.release();
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        await s.close?.(); // idempotent
      });

      it("cancels the timers of closed waiters (nothing fires later)", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const w = watch(s.acquire({ ...(caps.timeouts ? { timeoutMs: 50 } : {}) }));
        await s.close?.();
        await advance(100);
        expect(w.reason).toBeInstanceOf(SemaphoreClosedError);
        h.release();
      });

      section("tryAcquire", ["tryAcquire"], () => {
        it("tryAcquire after close never grants", async () => {
          const s = make({ permits: 1 });
          await s.close?.();
          let got: SubjectPermit | undefined;
          try {
            got = s.tryAcquire?.();
          } catch (e) {
            expect(e).toBeInstanceOf(SemaphoreClosedError);
          }
          expect(got).toBeUndefined();
          expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        });
      });

      it("frees the name for a new semaphore", async () => {
        const unique = `${name}-reuse-${Math.random().toString(36).slice(2)}`;
        const a = make({ name: unique, permits: 1 });
        await a.close?.();
        const b = make({ name: unique, permits: 2 });
        expect(b.snapshot().cap).toBe(2);
      });
    });

    section("cancelled waiters never strand the next one", ["timeouts", "abort"], () => {
      it("a timed-out head: the next waiter gets the next released permit", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const head = watch(s.acquire({ timeoutMs: 20 }));
        const next = watch(s.acquire());
        await advance(20);
        expect(head.state).toBe("rejected");
        h.release();
        await flush();
        expect(next.state).toBe("fulfilled");
        (next.value as SubjectPermit).release();
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
      });

      it("an aborted head: the next waiter gets the next released permit", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const ac = new AbortController();
        const head = watch(s.acquire({ signal: ac.signal }));
        const next = watch(s.acquire());
        ac.abort();
        h.release();
        await flush();
        expect(head.state).toBe("rejected");
        expect(next.state).toBe("fulfilled");
        (next.value as SubjectPermit).release();
      });

      section("with weights", ["weights"], () => {
        it("a heavy head timing out admits the light waiter beside the free permit at once", async () => {
          const s = make({ permits: 2 });
          const h = await s.acquire();
          const heavy = watch(s.acquire({ weight: 2, timeoutMs: 30 }));
          const light = watch(s.acquire({ weight: 1 }));
          await advance(29);
          expect(light.state).toBe("pending");
          await advance(1);
          // No release happened: the cancellation itself must hand the free permit on.
          expect(heavy.state).toBe("rejected");
          expect(light.state).toBe("fulfilled");
          expect(counts(s)).toEqual({ inUse: 2, available: 0, waiters: 0 });
          h.release();
          (light.value as SubjectPermit).release();
        });

        it("a heavy head aborted admits the light waiter beside the free permit at once", async () => {
          const s = make({ permits: 2 });
          const h = await s.acquire();
          const ac = new AbortController();
          const heavy = watch(s.acquire({ weight: 2, signal: ac.signal }));
          const light = watch(s.acquire({ weight: 1 }));
          ac.abort();
          await flush();
          expect(heavy.state).toBe("rejected");
          expect(light.state).toBe("fulfilled");
          h.release();
          (light.value as SubjectPermit).release();
        });
      });
    });

    // ---- bad input ----

    section("argument checks", ["argumentChecks"], () => {
      const refused = (fn: () => unknown, word: RegExp): void => {
        let thrown: unknown;
        try {
          fn();
        } catch (e) {
          thrown = e;
        }
        expect(thrown, `expected a TypeError or RangeError mentioning ${word}`).toBeDefined();
        expect(thrown instanceof TypeError || thrown instanceof RangeError, `got ${String(thrown)}`).toBe(true);
        expect((thrown as Error).message).toMatch(word);
      };

      const labelled = (values: readonly unknown[]): [string, unknown][] => values.map((v) => [typeof v === "string" ? JSON.stringify(v) : String(v), v]);

      it.each(labelled([0, -1, 1.5, NaN, Infinity, "3", undefined, null]))("permits %s is refused, naming permits", (_label, permits) => {
        refused(() => make({ permits: permits as number }), /permits/);
      });

      it.each(labelled(["random", "FIFO", "", 3]))("queue %s is refused, naming queue", (_label, queue) => {
        refused(() => make({ permits: 1, queue: queue as QueueMode }), /queue/);
      });

      for (const [option, cap] of [
        ["acquireTimeoutMs", "timeouts"],
        ["leaseTimeoutMs", "leases"],
        ["leakThresholdMs", "leakDetection"],
      ] as const) {
        section(option, [cap], () => {
          it.each(labelled([-1, NaN, Infinity, -Infinity, "5"]))(`${option} %s is refused, naming ${option}`, (_label, v) => {
            refused(() => make({ permits: 1, [option]: v as number }), new RegExp(option));
          });
        });
      }

      it.each(labelled([-1, 1.5, NaN, "2"]))("maxWaiters %s is refused, naming maxWaiters", (_label, maxWaiters) => {
        refused(() => make({ permits: 1, maxWaiters: maxWaiters as number }), /maxWaiters/);
      });

      it("a name already in use is refused, naming the name", () => {
        const unique = `${name}-dup-${Math.random().toString(36).slice(2)}`;
        make({ name: unique, permits: 1 });
        refused(() => make({ name: unique, permits: 1 }), new RegExp(unique.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
      });

      it.each([
        ["weight 0", { weight: 0 }, /weight/],
        ["weight -1", { weight: -1 }, /weight/],
        ["weight 1.5", { weight: 1.5 }, /weight/],
        ["weight NaN", { weight: NaN }, /weight/],
        ['weight "1"', { weight: "1" }, /weight/],
        ["timeoutMs -1", { timeoutMs: -1 }, /timeoutMs/],
        ["timeoutMs NaN", { timeoutMs: NaN }, /timeoutMs/],
        ["timeoutMs Infinity", { timeoutMs: Infinity }, /timeoutMs/],
        ['timeoutMs "10"', { timeoutMs: "10" }, /timeoutMs/],
        ["priority NaN", { priority: NaN }, /priority/],
        ["signal not an AbortSignal", { signal: {} }, /signal/],
      ] as const)("acquire(%s) returns a rejection naming it, never throws", async (_label, options, word) => {
        const s = make({ permits: 2 });
        const w = callAsync(() => s.acquire(options as unknown as SubjectAcquireOptions));
        await flush();
        expect(w.state).toBe("rejected");
        expect(w.reason instanceof TypeError || w.reason instanceof RangeError, `got ${String(w.reason)}`).toBe(true);
        expect((w.reason as Error).message).toMatch(word);
        expect(counts(s)).toEqual({ inUse: 0, available: 2, waiters: 0 });
      });

      it("acquire(null) and acquire('x') return rejections", async () => {
        const s = make({ permits: 1 });
        for (const bad of [null, "x", 3]) {
          const w = callAsync(() => s.acquire(bad as unknown as SubjectAcquireOptions));
          await flush();
          expect(w.reason).toBeInstanceOf(TypeError);
        }
      });

      section("tryAcquire", ["tryAcquire"], () => {
        it.each([0, -2, 1.5, NaN])("tryAcquire(%s) throws a TypeError/RangeError naming weight", (weight) => {
          const s = make({ permits: 2 });
          refused(() => s.tryAcquire?.(weight), /weight/);
          expect(counts(s)).toEqual({ inUse: 0, available: 2, waiters: 0 });
        });

        it("tryAcquire(weight > permits) is refused, not answered 'busy'", () => {
          const s = make({ permits: 2 });
          refused(() => s.tryAcquire?.(3), /weight/);
        });
      });
    });

    // ---- use() and using ----

    section("use()", ["use"], () => {
      it("holds a permit while fn runs and releases it when fn returns", async () => {
        const s = make({ permits: 2 });
        const inside: number[] = [];
        const result = await s.use?.(async () => {
          inside.push(counts(s).inUse);
          await advance(10);
          inside.push(counts(s).inUse);
          return 42;
        });
        expect(result).toBe(42);
        expect(inside).toEqual([1, 1]);
        expect(counts(s)).toEqual({ inUse: 0, available: 2, waiters: 0 });
      });

      it("releases when fn throws, synchronously or asynchronously, and passes the error on", async () => {
        const s = make({ permits: 1 });
        const boom = new Error("boom");
        await expect(
          s.use?.(() => {
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        await expect(s.use?.(() => Promise.reject(boom))).rejects.toBe(boom);
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
      });

      it("a synchronous fn's value is returned and the permit released", async () => {
        const s = make({ permits: 1 });
        expect(await s.use?.(() => "sync")).toBe("sync");
        expect(counts(s).inUse).toBe(0);
      });

      section("with a timeout", ["timeouts"], () => {
        it("does not call fn when the acquire times out", async () => {
          const s = make({ permits: 1 });
          const h = await s.acquire();
          let called = false;
          const u = watch(
            s.use?.(() => {
              called = true;
            }, { timeoutMs: 20 }) as Promise<void>,
          );
          await advance(20);
          expect(u.reason).toBeInstanceOf(SemaphoreTimeoutError);
          expect(called).toBe(false);
          h.release();
          expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        });
      });
    });

    section("using / await using", ["dispose"], () => {
      it("await using releases at the end of the block, also when it throws", async () => {
        const s = make({ permits: 1 });
        {
          await using p = (await s.acquire()) as SubjectPermit & AsyncDisposable;
          expect(typeof p[Symbol.asyncDispose]).toBe("function");
          expect(counts(s).inUse).toBe(1);
        }
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        const boom = new Error("inside the block");
        const run = async (): Promise<void> => {
          await using _p = (await s.acquire()) as SubjectPermit & AsyncDisposable;
          throw boom;
        };
        await expect(run()).rejects.toBe(boom);
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
      });

      section("using with tryAcquire", ["tryAcquire"], () => {
        it("using releases at the end of the block; an undefined from a busy tryAcquire is fine", async () => {
          const s = make({ permits: 1 });
          {
            using p = s.tryAcquire?.() as (SubjectPermit & Disposable) | undefined;
            expect(p).toBeDefined();
            expect(typeof p?.[Symbol.dispose]).toBe("function");
            expect(counts(s).inUse).toBe(1);
            {
              using q = s.tryAcquire?.() as (SubjectPermit & Disposable) | undefined;
              expect(q).toBeUndefined();
            }
            expect(counts(s).inUse).toBe(1);
          }
          expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
          // No double release from the disposal of a permit released inside the block.
          {
            using p = s.tryAcquire?.() as (SubjectPermit & Disposable) | undefined;
            expect(p).toBeDefined();
          }
          expect(eventsOf(s, "double_release")).toEqual([]);
        });
      });
    });

    // ---- double release ----

    section("double release", ["doubleReleaseDetection"], () => {
      it("a second release changes no count, never raises the cap, and is counted and reported with its stack", async () => {
        const s = make({ permits: 1 });
        const p = await s.acquire();
        p.release();
        const at = here(); p.release(); // the second release: its stack must point here
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
        // The cap is still 1: a second holder must wait.
        const a = await s.acquire();
        const b = watch(s.acquire());
        await flush();
        expect(b.state, "a double release must not let two holders in").toBe("pending");
        a.release();
        await flush();
        (b.value as SubjectPermit).release();
        const ev = eventsOf(s, "double_release");
        expect(ev).toHaveLength(1);
        expect(ev[0].stack).toBeDefined();
        expect(firstUserFrame(ev[0].stack)).toEqual(at);
        if (caps.sample) expect(s.sample?.(Date.now()).doubleReleases).toBe(1);
      });

      it("a double release while others hold and wait leaves every count exact", async () => {
        const s = make({ permits: 2 });
        const p = await s.acquire();
        const q = await s.acquire();
        const w = watch(s.acquire());
        p.release();
        await flush();
        expect(w.state).toBe("fulfilled");
        p.release(); // must not free q's or w's permit
        expect(counts(s)).toEqual({ inUse: 2, available: 0, waiters: 0 });
        const x = watch(s.acquire());
        await flush();
        expect(x.state).toBe("pending");
        q.release();
        await flush();
        expect(x.state).toBe("fulfilled");
        (w.value as SubjectPermit).release();
        (x.value as SubjectPermit).release();
        expect(counts(s)).toEqual({ inUse: 0, available: 2, waiters: 0 });
        expect(eventsOf(s, "double_release")).toHaveLength(1);
      });
    });

    // ---- leases ----

    section("lease expiry", ["leases"], () => {
      it("takes an expired holder's permit back, reports lease_expired, admits a waiter; the late release is a no-op", async () => {
        const s = make({ permits: 1, leaseTimeoutMs: 100 });
        const p = await s.acquire();
        const w = watch(s.acquire());
        await advance(99);
        expect(w.state).toBe("pending");
        expect(eventsOf(s, "lease_expired")).toEqual([]);
        await advance(1);
        expect(w.state).toBe("fulfilled");
        expect(p.held ?? false).toBe(false);
        const ev = eventsOf(s, "lease_expired");
        expect(ev).toHaveLength(1);
        expect(ev[0].heldMs).toBe(100);
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        p.release(); // late: not a double release, and must not free w's permit
        expect(counts(s)).toEqual({ inUse: 1, available: 0, waiters: 0 });
        expect(eventsOf(s, "double_release")).toEqual([]);
        if (caps.sample) {
          const sample = s.sample?.(Date.now()) as Sample;
          expect(sample.leaseExpiries).toBe(1);
          expect(sample.doubleReleases).toBe(0);
        }
        (w.value as SubjectPermit).release();
        if (caps.asyncRelease === true) await flush();
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
      });

      it("expires each holder at its own deadline", async () => {
        const s = make({ permits: 3, leaseTimeoutMs: 50 });
        const a = await s.acquire();
        await advance(20);
        const b = await s.acquire();
        await advance(20);
        const c = await s.acquire();
        await advance(10); // a: 50
        expect([a.held, b.held, c.held]).toEqual([false, true, true]);
        await advance(20); // b: 50
        expect([a.held, b.held, c.held]).toEqual([false, false, true]);
        c.release(); // c released before its lease: nothing to expire
        await advance(100);
        expect(eventsOf(s, "lease_expired")).toHaveLength(2);
        expect(counts(s)).toEqual({ inUse: 0, available: 3, waiters: 0 });
      });
    });

    // ---- leaks ----

    section("leak report", ["leakDetection"], () => {
      const realWatch = caps.realTimerLeakWatch === true;
      /** With a real-timer watch: long enough for it to run after the faked clock moved. */
      const watchRuns = async (thresholdMs: number): Promise<void> => {
        if (realWatch) await realSleep(thresholdMs + 50);
      };
      /** The leak reports once there are `n` (a real-timer watch is given up to 5 s to make them). */
      const leaksOf = async (s: SubjectUnderTest, n: number): Promise<AgentEvent[]> => {
        for (let waited = 0; realWatch && eventsOf(s, "leak_suspected").length < n && waited < 5000; waited += 10) await realSleep(10);
        return eventsOf(s, "leak_suspected");
      };

      it("reports a holder older than the threshold once, with the acquiring line, then leak_resolved on release", async () => {
        const s = make({ permits: 2, leakThresholdMs: 100 });
        const at = here(); const p = await s.acquire(); // the acquisition the report must point at
        await advance(99);
        await watchRuns(100);
        expect(eventsOf(s, "leak_suspected")).toEqual([]);
        await advance(1);
        const leaks = await leaksOf(s, 1);
        expect(leaks).toHaveLength(1);
        expect(leaks[0].heldMs).toBeGreaterThanOrEqual(100);
        expect(firstUserFrame(leaks[0].stack)).toEqual(at);
        await advance(1000);
        await watchRuns(100);
        expect(eventsOf(s, "leak_suspected"), "reported once").toHaveLength(1);
        expect(eventsOf(s, "leak_resolved")).toEqual([]);
        p.release();
        if (caps.asyncRelease === true) await flush();
        const resolved = eventsOf(s, "leak_resolved");
        expect(resolved).toHaveLength(1);
        expect(resolved[0].holderId).toBe(leaks[0].holderId);
        expect(resolved[0].heldMs).toBe(1100);
      });

      it("does not report holders released before the threshold", async () => {
        const s = make({ permits: 1, leakThresholdMs: 100 });
        for (let i = 0; i < 5; i++) {
          const p = await s.acquire();
          await advance(60);
          p.release();
          if (caps.asyncRelease === true) await flush();
        }
        await advance(500);
        await watchRuns(100);
        expect(eventsOf(s, "leak_suspected")).toEqual([]);
      });

      it("reports each leaked holder separately and only them", async () => {
        const s = make({ permits: 3, leakThresholdMs: 50 });
        const a = await s.acquire();
        await advance(30);
        const b = await s.acquire();
        const c = await s.acquire();
        c.release();
        if (caps.asyncRelease === true) await flush();
        await advance(100);
        const leaks = await leaksOf(s, 2);
        await watchRuns(50);
        expect(eventsOf(s, "leak_suspected")).toHaveLength(2);
        expect(new Set(leaks.map((e) => e.holderId)).size).toBe(2);
        a.release();
        b.release();
        if (caps.asyncRelease === true) await flush();
        expect(eventsOf(s, "leak_resolved")).toHaveLength(2);
      });
    });

    // ---- order inversions ----

    section("order inversion", ["orderInversion"], () => {
      const ticks = async (n: number): Promise<void> => {
        for (let i = 0; i < n; i++) await Promise.resolve();
      };

      it("A then B in one task, B then A in another: exactly one order_inversion with both stacks", async () => {
        const A = make({ permits: 2, detectOrderInversions: true });
        const B = make({ permits: 2, detectOrderInversions: true });
        const inversions = (): AgentEvent[] => events.filter((e) => e.type === "order_inversion" && (e.id === A.id || e.id === B.id));
        let abLine = 0;
        let baLine = 0;
        const ab = async (): Promise<void> => {
          const a = await A.acquire();
          abLine = here().line; const b = await B.acquire();
          b.release();
          a.release();
        };
        const ba = async (): Promise<void> => {
          const b = await B.acquire();
          baLine = here().line; const a = await A.acquire();
          a.release();
          b.release();
        };
        await ab();
        expect(inversions()).toEqual([]);
        await ba();
        expect(inversions()).toHaveLength(1);
        const stack = inversions()[0].stack ?? "";
        const file = here().file.split(/[/\\]/).pop() as string;
        expect(stack).toContain(`${file}:${abLine}:`);
        expect(stack).toContain(`${file}:${baLine}:`);
        // Reported once, however often it happens again.
        await ab();
        await ba();
        await Promise.all([ab(), ba()]);
        expect(inversions()).toHaveLength(1);
      });

      it("sibling tasks started in the same synchronous run produce no false inversion", async () => {
        const A = make({ permits: 2, detectOrderInversions: true });
        const B = make({ permits: 2, detectOrderInversions: true });
        const C = make({ permits: 2, detectOrderInversions: true });
        const ids = new Set([A.id, B.id, C.id]);
        const inversions = (): AgentEvent[] => events.filter((e) => e.type === "order_inversion" && ids.has(e.id));
        // Nobody ever holds A while acquiring B, nor C while acquiring B. Only B → A and B → C happen.
        await Promise.all([
          // 1. holds A for a while, acquires nothing else
          (async () => {
            const a = await A.acquire();
            await ticks(20);
            a.release();
          })(),
          // 2. starts with an await, then B, then A (a real B → A edge)
          (async () => {
            await ticks(2);
            const b = await B.acquire();
            const a = await A.acquire();
            a.release();
            b.release();
          })(),
          // 3. takes C straight away and holds it
          (async () => {
            const c = await C.acquire();
            await ticks(20);
            c.release();
          })(),
          // 4. takes B straight away (same synchronous run as A's and C's acquires), then C
          (async () => {
            const b = await B.acquire();
            await ticks(3);
            const c = await C.acquire();
            c.release();
            b.release();
          })(),
        ]);
        expect(inversions(), inversions().map((e) => e.stack).join("\n---\n")).toEqual([]);
      });

      it("sibling tasks that really invert the order are still reported", async () => {
        const A = make({ permits: 2, detectOrderInversions: true });
        const B = make({ permits: 2, detectOrderInversions: true });
        await Promise.all([
          (async () => {
            const a = await A.acquire();
            await ticks(2);
            const b = await B.acquire();
            b.release();
            a.release();
          })(),
          (async () => {
            const b = await B.acquire();
            await ticks(2);
            const a = await A.acquire();
            a.release();
            b.release();
          })(),
        ]);
        expect(events.filter((e) => e.type === "order_inversion" && (e.id === A.id || e.id === B.id))).toHaveLength(1);
      });

      section("through use() and tryAcquire()", ["use", "tryAcquire"], () => {
        it("a use() callback holds its permit, and so does a tryAcquire() caller after an await", async () => {
          const A = make({ permits: 1, detectOrderInversions: true });
          const B = make({ permits: 1, detectOrderInversions: true });
          await A.use?.(async () => {
            await ticks(1);
            (await B.acquire()).release(); // A held (inside use) while acquiring B
          });
          const b = B.tryAcquire?.();
          expect(b).toBeDefined();
          await ticks(1);
          (await A.acquire()).release(); // B held (tryAcquire) while acquiring A
          b?.release();
          expect(events.filter((e) => e.type === "order_inversion" && (e.id === A.id || e.id === B.id))).toHaveLength(1);
        });
      });

      section("after close", ["close"], () => {
        it("semaphores re-created under closed ones' names start clean: a new inversion is reported again", async () => {
          const names = [0, 1].map((i) => `${name}-inv${i}-${Math.random().toString(36).slice(2)}`);
          for (let round = 1; round <= 2; round++) {
            const A = make({ name: names[0], permits: 1, detectOrderInversions: true });
            const B = make({ name: names[1], permits: 1, detectOrderInversions: true });
            const before = events.length;
            const a = await A.acquire();
            (await B.acquire()).release();
            a.release();
            const b = await B.acquire();
            (await A.acquire()).release();
            b.release();
            const found = events.slice(before).filter((e) => e.type === "order_inversion" && (e.id === A.id || e.id === B.id));
            expect(found, `round ${round}`).toHaveLength(1);
            await A.close?.();
            await B.close?.();
          }
        });
      });

      it("is off by default", async () => {
        const A = make({ permits: 1 });
        const B = make({ permits: 1 });
        const a = await A.acquire();
        const b = await B.acquire();
        b.release();
        a.release();
        const b2 = await B.acquire();
        const a2 = await A.acquire();
        a2.release();
        b2.release();
        expect(events.filter((e) => e.type === "order_inversion" && (e.id === A.id || e.id === B.id))).toEqual([]);
      });

      it("a released permit is no longer held: sequential use in either order is fine", async () => {
        const A = make({ permits: 1, detectOrderInversions: true });
        const B = make({ permits: 1, detectOrderInversions: true });
        const a = await A.acquire();
        a.release();
        const b = await B.acquire();
        b.release();
        const b2 = await B.acquire();
        b2.release();
        const a2 = await A.acquire();
        a2.release();
        expect(events.filter((e) => e.type === "order_inversion" && (e.id === A.id || e.id === B.id))).toEqual([]);
      });
    });

    // ---- sample() ----

    section("sample()", ["sample", "timeouts", "abort", "maxWaiters", "tryAcquire"], () => {
      it("counts acquired, released, timeouts, rejections and aborts since the previous call, with wait and hold summaries", async () => {
        const s = make({ permits: 2, maxWaiters: 3 });
        s.sample?.(Date.now()); // start an interval at t = 0
        const a = await s.acquire(); // immediate
        const b = await s.acquire(); // immediate
        const w1 = watch(s.acquire()); // will wait 30 ms
        const w2 = watch(s.acquire({ timeoutMs: 10 })); // will time out at t = 10
        const ac = new AbortController();
        const w3 = watch(s.acquire({ signal: ac.signal })); // will be aborted at t = 5
        const w6 = watch(s.acquire()); // a 4th waiter: beyond maxWaiters, a rejection
        await advance(5);
        ac.abort();
        expect(s.tryAcquire?.()).toBeUndefined(); // refused: a rejection too
        await advance(5);
        expect(w2.reason).toBeInstanceOf(SemaphoreTimeoutError);
        expect(w3.state).toBe("rejected");
        expect(w6.reason).toBeInstanceOf(SemaphoreRejectedError);
        const w4 = watch(s.acquire()); // queued at t = 10
        const w5 = watch(s.acquire()); // queued at t = 10
        await advance(20);
        // t = 30: the oldest waiter, w1, has waited 30 ms.
        expect(s.snapshot().oldestWaitMs).toBe(30);
        a.release(); // held 30 ms; w1 admitted after 30 ms
        await advance(10);
        b.release(); // held 40 ms; w4 admitted after 30 ms
        await flush();
        const sample = s.sample?.(Date.now()) as Sample;
        expect(sample).toMatchObject({
          id: s.id,
          cap: 2,
          inUse: 2,
          available: 0,
          waiters: 1,
          acquired: 4,
          released: 2,
          timeouts: 1,
          rejections: 2,
          aborts: 1,
          doubleReleases: 0,
          leaseExpiries: 0,
        });
        // t = 40: w5 has waited since t = 10; the oldest holder, w1, was granted at t = 30.
        expect(sample.oldestWaitMs).toBe(30);
        expect(sample.longestHoldMs).toBe(10);
        expect(sample.waitMs.count).toBe(4); // every grant records its wait, 0 for the immediate ones
        expect(sample.waitMs.max).toBe(30);
        expect(sample.holdMs.count).toBe(2);
        expect(sample.holdMs.max).toBe(40);
        expect(sample.holdMs.p50).toBeGreaterThan(0);
        expect(sample.holdMs.p50).toBeLessThanOrEqual(40);
        // The next interval starts at zero.
        const next = s.sample?.(Date.now()) as Sample;
        expect(next).toMatchObject({ acquired: 0, released: 0, timeouts: 0, rejections: 0, aborts: 0, inUse: 2, waiters: 1 });
        expect(next.waitMs.count).toBe(0);
        expect(next.holdMs.count).toBe(0);
        for (const w of [w1, w4]) (w.value as SubjectPermit).release();
        await flush();
        (w5.value as SubjectPermit).release();
        const last = s.sample?.(Date.now()) as Sample;
        expect(last).toMatchObject({ acquired: 1, released: 3, inUse: 0, available: 2, waiters: 0, oldestWaitMs: 0, longestHoldMs: 0 });
      });

      it("an already-aborted acquire counts as an abort and a timeoutMs 0 refusal as a timeout", async () => {
        const s = make({ permits: 1 });
        s.sample?.(Date.now());
        watch(s.acquire({ signal: AbortSignal.abort() }));
        const h = await s.acquire();
        watch(s.acquire({ timeoutMs: 0 }));
        await flush();
        h.release();
        expect(s.sample?.(Date.now())).toMatchObject({ acquired: 1, released: 1, aborts: 1, timeouts: 1, rejections: 0 });
      });
    });

    // ---- resize ----

    section("resize()", ["resize"], () => {
      it("growing admits waiters that now fit", async () => {
        const s = make({ permits: 1 });
        const h = await s.acquire();
        const ws = [watch(s.acquire()), watch(s.acquire()), watch(s.acquire())];
        s.resize?.(3);
        await flush();
        expect(ws.map((w) => w.state)).toEqual(["fulfilled", "fulfilled", "pending"]);
        expect(s.snapshot()).toMatchObject({ cap: 3, inUse: 3, available: 0, waiters: 1 });
        h.release();
        await flush();
        expect(ws[2].state).toBe("fulfilled");
        for (const w of ws) (w.value as SubjectPermit).release();
        if (caps.asyncRelease === true) await flush();
        expect(counts(s)).toEqual({ inUse: 0, available: 3, waiters: 0 });
      });

      it("shrinking below what is held grants nothing until enough is returned", async () => {
        const s = make({ permits: 3 });
        const held = [await s.acquire(), await s.acquire(), await s.acquire()];
        s.resize?.(1);
        expect(s.snapshot()).toMatchObject({ cap: 1, inUse: 3, available: -2 });
        const w = watch(s.acquire());
        held[0].release();
        held[1].release();
        await flush();
        expect(w.state).toBe("pending");
        expect(s.snapshot()).toMatchObject({ cap: 1, inUse: 1, available: 0, waiters: 1 });
        held[2].release();
        await flush();
        expect(w.state).toBe("fulfilled");
        (w.value as SubjectPermit).release();
        if (caps.asyncRelease === true) await flush();
        expect(counts(s)).toEqual({ inUse: 0, available: 1, waiters: 0 });
      });

      section("with weights", ["weights"], () => {
        it("a waiter heavier than the new cap is refused with a RangeError instead of stranded", async () => {
          const s = make({ permits: 4 });
          const h = await s.acquire({ weight: 4 });
          const heavy = watch(s.acquire({ weight: 3 }));
          const light = watch(s.acquire({ weight: 1 }));
          s.resize?.(2);
          await flush();
          expect(heavy.reason).toBeInstanceOf(RangeError);
          expect(light.state).toBe("pending");
          h.release();
          await flush();
          expect(light.state).toBe("fulfilled");
          (light.value as SubjectPermit).release();
          expect(counts(s)).toEqual({ inUse: 0, available: 2, waiters: 0 });
        });
      });

      it.skipIf(!caps.argumentChecks)(caps.argumentChecks ? "refuses a bad size" : `refuses a bad size [SKIPPED: ${why("argumentChecks")}]`, () => {
        const s = make({ permits: 2 });
        for (const bad of [0, -1, 1.5, NaN]) expect(() => s.resize?.(bad)).toThrow(/permits/);
        expect(s.snapshot().cap).toBe(2);
      });

      section("after close", ["close"], () => {
        it("refuses to resize a closed semaphore", async () => {
          const s = make({ permits: 2 });
          await s.close?.();
          expect(() => s.resize?.(3)).toThrow(SemaphoreClosedError);
        });
      });
    });
  });
}
