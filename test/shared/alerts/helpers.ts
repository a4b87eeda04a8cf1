// Scripted agents for the alert engine tests: build samples and events the way an agent would,
// with sample time and hub time under the test's control.
import fc from "fast-check";
import type { AgentEvent, Sample, SemaphoreInfo } from "../../../shared/protocol/types.js";
import { AlertEngine, type AlertChange } from "../../../shared/alerts/index.js";
import { makeHello, makeInfo, makeSample, makeSummary, many, T0 } from "../../fixtures/protocol.js";

export const summaryOf = makeSummary;
export const info = makeInfo;
export { many };

/** A healthy, idle sample; `available` follows `cap − inUse` unless given. */
export function sample(id: string, over: Partial<Sample> = {}): Sample {
  return makeSample({ id, ...over });
}

/** A sample of a convoy: full, queued, waits of 400 ms behind holds of 50 ms. */
export function convoySample(id: string, over: Partial<Sample> = {}): Sample {
  return sample(id, {
    inUse: 10,
    waiters: 5,
    oldestWaitMs: 450,
    acquired: 20,
    released: 20,
    waitMs: summaryOf(...many(20, 400)),
    holdMs: summaryOf(...many(20, 50)),
    ...over,
  });
}

export { T0 };

const SUMMARIES = [summaryOf(), summaryOf(...many(20, 5)), summaryOf(...many(20, 50)), summaryOf(...many(10, 400), 2000), summaryOf(...many(5, 3000))];

/**
 * A sample of one of `ids` for property tests: any load up to full, a leak check broken now and
 * then, queues, timeouts, double releases, histograms from idle to convoy.
 */
export function alertSampleArb(ids: readonly string[]): fc.Arbitrary<Sample> {
  return fc
    .record({
      id: fc.constantFrom(...ids),
      cap: fc.constantFrom(5, 10),
      used: fc.double({ min: 0, max: 1, noNaN: true }),
      broken: fc.integer({ min: 0, max: 19 }),
      waiters: fc.constantFrom(0, 0, 1, 3, 6),
      oldestWaitMs: fc.constantFrom(0, 100, 4000, 6000, 20_000),
      acquired: fc.integer({ min: 0, max: 60 }),
      released: fc.integer({ min: 0, max: 60 }),
      timeouts: fc.constantFrom(0, 0, 0, 0, 0, 1, 5, 20),
      rejections: fc.constantFrom(0, 0, 2),
      doubleReleases: fc.integer({ min: 0, max: 40 }),
      wait: fc.integer({ min: 0, max: SUMMARIES.length - 1 }),
      hold: fc.integer({ min: 0, max: SUMMARIES.length - 1 }),
    })
    .map((r): Sample => {
      const inUse = Math.round(r.used * r.cap) >= r.cap - 1 ? r.cap : Math.round(r.used * r.cap);
      return sample(r.id, {
        cap: r.cap,
        inUse,
        available: r.cap - inUse - (r.broken === 0 ? 1 : 0),
        waiters: r.waiters,
        oldestWaitMs: r.waiters > 0 ? r.oldestWaitMs : 0,
        acquired: r.acquired,
        released: r.released,
        timeouts: r.timeouts,
        rejections: r.rejections,
        doubleReleases: r.doubleReleases === 0 ? 1 : 0,
        waitMs: SUMMARIES[r.wait],
        holdMs: SUMMARIES[r.hold],
      });
    });
}

/**
 * One scripted agent. Sample time starts at T0; the hub clock (`now`) runs `skewMs` ahead of it,
 * so a test can tell which clock an alert time came from.
 */
export class ScriptedAgent {
  t = T0;
  seq = 0;
  readonly log: AlertChange[] = [];

  constructor(
    readonly engine: AlertEngine,
    readonly agentId: string,
    readonly service = "checkout",
    readonly instance = "web-1",
    public intervalMs = 1000,
    readonly skewMs = 0,
  ) {}

  get now(): number {
    return this.t + this.skewMs;
  }

  key(id: string): string {
    return `${this.service}/${this.instance}/${id}`;
  }

  private keep(changes: AlertChange[]): AlertChange[] {
    this.log.push(...changes);
    return changes;
  }

  hello(now = this.now): AlertChange[] {
    return this.keep(
      this.engine.hello(
        this.agentId,
        makeHello(this.agentId, { service: this.service, instance: this.instance }),
        now,
      ),
    );
  }

  register(infos: SemaphoreInfo[], now = this.now): AlertChange[] {
    return this.keep(this.engine.register(this.agentId, infos, now));
  }

  /** Advance sample time by `advanceMs` (default one interval) and send one batch. */
  send(items: Sample[], advanceMs = this.intervalMs): AlertChange[] {
    this.t += advanceMs;
    return this.keep(this.engine.samples(this.agentId, { seq: this.seq++, t: this.t, intervalMs: this.intervalMs, items }, this.now));
  }

  /** Send `n` batches, one interval apart, built by `make(i)`; returns every change. */
  sendMany(n: number, make: (i: number) => Sample[]): AlertChange[] {
    const out: AlertChange[] = [];
    for (let i = 0; i < n; i++) out.push(...this.send(make(i)));
    return out;
  }

  /** Send events stamped at the current sample time plus `offsetMs` each. */
  events(items: Omit<AgentEvent, "t">[], offsetMs = 0): AlertChange[] {
    return this.keep(this.engine.events(this.agentId, { items: items.map((e) => ({ t: this.t + offsetMs, ...e })) }, this.now + offsetMs));
  }
}

export function setup(opts: { intervalMs?: number; infos?: SemaphoreInfo[]; service?: string; instance?: string; skewMs?: number } = {}): {
  engine: AlertEngine;
  agent: ScriptedAgent;
} {
  const engine = new AlertEngine();
  const agent = new ScriptedAgent(engine, "agent-1", opts.service, opts.instance, opts.intervalMs, opts.skewMs);
  agent.hello();
  agent.register(opts.infos ?? [info("db")]);
  return { engine, agent };
}

/** The changes of one rule. */
export function ofRule(changes: readonly AlertChange[], rule: string): AlertChange[] {
  return changes.filter((c) => c.alert.rule === rule);
}

export function kinds(changes: readonly AlertChange[]): string[] {
  return changes.map((c) => `${c.kind}:${c.alert.rule}`);
}
