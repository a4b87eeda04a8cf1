// The agent's numbers as OpenTelemetry instruments on a Meter the service already has
// (agent.otel({ meter })). Fed from the same interval samples as the hub and prometheus(), so
// nothing samples a semaphore twice. Names follow OpenTelemetry's database connection-pool
// conventions (db.client.connection.*), with a semaphore in place of a pool: docs/instrumenting.md.
//
// The Meter is typed structurally (the subset used here), so the agent needs no OpenTelemetry
// package, at run time or for its types; @opentelemetry/api's Meter fits it.
import { bucketMidMs, type SparseHist } from "../../shared/histogram.js";
import type { Sample } from "../../shared/protocol/types.js";
import { SAMPLE_COUNTERS, type SampleCounter } from "../../shared/protocol/sample-layout.js";
import { DURATION_BUCKETS_SECONDS } from "./reporter/prometheus.js";

export type OtelAttributes = Record<string, string>;

interface InstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

interface ObservableResult {
  observe(value: number, attributes?: OtelAttributes): void;
}

/** The part of OpenTelemetry's Meter the agent uses. */
export interface OtelMeter {
  createCounter(name: string, options?: InstrumentOptions): { add(value: number, attributes?: OtelAttributes): void };
  createHistogram(name: string, options?: InstrumentOptions): { record(value: number, attributes?: OtelAttributes): void };
  createObservableGauge(
    name: string,
    options?: InstrumentOptions,
  ): { addCallback(cb: (result: ObservableResult) => void): void; removeCallback(cb: (result: ObservableResult) => void): void };
}

export interface OtelOptions {
  meter: OtelMeter;
  /**
   * Record wait and hold durations (default true). OpenTelemetry takes one record() per duration,
   * which costs about 1–3 µs each in the JS SDK: a semaphore granting 10,000 permits a second
   * spends 1–3 % of a core on them. False keeps the counters and gauges only.
   */
  histograms?: boolean;
}

/** The attribute naming the semaphore (as db.client.connection.pool.name names a pool). */
export const SEMAPHORE_ATTRIBUTE = "semscope.semaphore.name";

/** Each counter's instrument: name, unit, description (made in SAMPLE_COUNTERS order). */
const COUNTERS: Record<SampleCounter, readonly [name: string, unit: string, description: string]> = {
  acquired: ["semscope.semaphore.acquisitions", "{permit}", "Permits granted."],
  released: ["semscope.semaphore.releases", "{permit}", "Permits released."],
  timeouts: ["semscope.semaphore.timeouts", "{request}", "Acquires that timed out."],
  rejections: ["semscope.semaphore.rejections", "{request}", "Acquires refused at once (maxWaiters reached, tryAcquire refused)."],
  aborts: ["semscope.semaphore.aborts", "{request}", "Acquires aborted by their signal."],
  doubleReleases: ["semscope.semaphore.double_releases", "{release}", "Second release() calls on one permit (ignored)."],
  leaseExpiries: ["semscope.semaphore.lease_expiries", "{permit}", "Permits taken back after their lease expired."],
};

export class OtelBridge {
  private readonly last = new Map<string, Sample>();
  private readonly counters: { add(value: number, attributes?: OtelAttributes): void; field: SampleCounter }[];
  private readonly wait: { record(value: number, attributes?: OtelAttributes): void } | undefined;
  private readonly hold: { record(value: number, attributes?: OtelAttributes): void } | undefined;
  private readonly detach: (() => void)[] = [];

  constructor({ meter, histograms = true }: OtelOptions) {
    this.counters = SAMPLE_COUNTERS.map((field) => {
      const [name, unit, description] = COUNTERS[field];
      return Object.assign(meter.createCounter(name, { unit, description }), { field });
    });
    const advice = { explicitBucketBoundaries: [...DURATION_BUCKETS_SECONDS] };
    if (histograms) {
      this.wait = meter.createHistogram("semscope.semaphore.wait_time", { unit: "s", description: "Time from acquire() to the grant.", advice });
      this.hold = meter.createHistogram("semscope.semaphore.use_time", { unit: "s", description: "Time from the grant to release().", advice });
    }
    this.gauge(meter, "semscope.semaphore.permit.limit", "{permit}", "Permits of the semaphore (N).", (s, o) => o(s.cap));
    this.gauge(meter, "semscope.semaphore.permit.count", "{permit}", "Permits held (state=used) and free (state=available) at the last sample.", (s, o) => {
      o(s.inUse, "used");
      o(s.available, "available");
    });
    this.gauge(meter, "semscope.semaphore.pending_requests", "{request}", "Callers queued for a permit at the last sample.", (s, o) => o(s.waiters));
    this.gauge(meter, "semscope.semaphore.oldest_wait", "s", "Age of the oldest waiter at the last sample.", (s, o) => o(s.oldestWaitMs / 1000));
    this.gauge(meter, "semscope.semaphore.longest_hold", "s", "Age of the oldest current holder at the last sample.", (s, o) => o(s.longestHoldMs / 1000));
  }

  /**
   * Folds one interval's samples in. A semaphore absent from them is unchanged while it is still
   * `live` (a changed-only interval), and is no longer observed once it is gone.
   */
  update(samples: readonly Sample[], live?: ReadonlySet<string>): void {
    const seen = new Set<string>();
    for (const s of samples) {
      seen.add(s.id);
      this.last.set(s.id, s);
      const attributes = { [SEMAPHORE_ATTRIBUTE]: s.id };
      for (const c of this.counters) if (s[c.field] > 0) c.add(s[c.field], attributes);
      if (this.wait !== undefined) record(this.wait, s.waitMs.hist, attributes);
      if (this.hold !== undefined) record(this.hold, s.holdMs.hist, attributes);
    }
    for (const id of this.last.keys()) if (!seen.has(id) && live?.has(id) !== true) this.last.delete(id);
  }

  /** Stops observing (the counters and histograms keep what they were given). */
  close(): void {
    for (const d of this.detach.splice(0)) d();
    this.last.clear();
  }

  private gauge(
    meter: OtelMeter,
    name: string,
    unit: string,
    description: string,
    read: (s: Sample, observe: (value: number, state?: string) => void) => void,
  ): void {
    const g = meter.createObservableGauge(name, { unit, description });
    const cb = (result: ObservableResult) => {
      for (const s of this.last.values()) {
        read(s, (value, state) =>
          result.observe(value, state === undefined ? { [SEMAPHORE_ATTRIBUTE]: s.id } : { [SEMAPHORE_ATTRIBUTE]: s.id, "semscope.permit.state": state }),
        );
      }
    };
    g.addCallback(cb);
    this.detach.push(() => g.removeCallback(cb));
  }
}

/**
 * Each recorded duration at its bucket's geometric middle, the value the wire's percentiles use:
 * counts are exact, values within the layout's ~9 %. One record() per duration (OpenTelemetry's
 * API takes no counts), once per interval, off the semaphore's hot path.
 */
function record(h: { record(value: number, attributes?: OtelAttributes): void }, hist: SparseHist, attributes: OtelAttributes): void {
  for (const [b, c] of hist) {
    const seconds = bucketMidMs(b) / 1000;
    for (let i = 0; i < c; i++) h.record(seconds, attributes);
  }
}
