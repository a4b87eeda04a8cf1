// agent.otel({ meter }): the OpenTelemetry SDK's own reader, after known acquires, holds, timeouts
// and a double release, exports exactly the semaphore's own counts, and gauges of its state now.
import { metrics } from "@opentelemetry/api";
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import { connect, Semaphore, SemaphoreTimeoutError, type Agent } from "../../../agent/src/index.js";
import { createHub, type Hub } from "../../../main/hub/index.js";

class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ATTR = "semscope.semaphore.name";

async function setup(): Promise<{ agent: Agent; reader: TestReader; provider: MeterProvider }> {
  const hub: Hub = await createHub({ port: 0, log: () => undefined });
  cleanups.push(() => hub.close());
  const agent = connect({ url: hub.url, service: "otel-test", instance: "i1", intervalMs: 50 });
  cleanups.push(() => agent.close());
  const reader = new TestReader({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  const provider = new MeterProvider({ readers: [reader] });
  cleanups.push(() => provider.shutdown());
  return { agent, reader, provider };
}

async function collect(reader: TestReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  const out = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics) for (const m of scope.metrics) out.set(m.descriptor.name, m);
  return out;
}

function point(all: Map<string, MetricData>, name: string, attrs: Record<string, string>): DataPoint<number | Histogram> | undefined {
  const m = all.get(name);
  return (m?.dataPoints as DataPoint<number | Histogram>[] | undefined)?.find((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v));
}

describe("agent.otel({ meter })", () => {
  it("exports the semaphore's own counts, its wait and hold histograms, and its gauges", async () => {
    const { agent, reader, provider } = await setup();
    const stop = agent.otel({ meter: provider.getMeter("checkout") });
    cleanups.push(stop);
    const db = new Semaphore({ name: "otel-db", permits: 2 });
    cleanups.push(() => db.close());

    for (let i = 0; i < 6; i++) await db.use(() => sleep(3));
    const a = await db.acquire();
    const b = await db.acquire();
    for (let i = 0; i < 3; i++) await expect(db.acquire({ timeoutMs: 5 })).rejects.toBeInstanceOf(SemaphoreTimeoutError);
    b.release();
    b.release();
    // Two intervals after the last change, so every count is in a sample.
    await sleep(150);

    const own = db.counters();
    expect(own).toMatchObject({ acquired: 8, released: 7, timeouts: 3, doubleReleases: 1 });
    const all = await collect(reader);
    const sel = { [ATTR]: "otel-db" };
    const value = (name: string, extra: Record<string, string> = {}) => point(all, name, { ...sel, ...extra })?.value;
    expect(value("semscope.semaphore.acquisitions")).toBe(own.acquired);
    expect(value("semscope.semaphore.releases")).toBe(own.released);
    expect(value("semscope.semaphore.timeouts")).toBe(own.timeouts);
    expect(value("semscope.semaphore.double_releases")).toBe(own.doubleReleases);
    expect(value("semscope.semaphore.rejections")).toBeUndefined();

    const wait = value("semscope.semaphore.wait_time") as Histogram;
    const hold = value("semscope.semaphore.use_time") as Histogram;
    expect(wait.count).toBe(own.acquired);
    expect(hold.count).toBe(own.released);
    // Six holds of ≥ 3 ms: their sum is at least 18 ms, within the buckets' ~9 %.
    expect(hold.sum).toBeGreaterThan(0.018 * 0.9);
    expect(all.get("semscope.semaphore.use_time")?.descriptor.unit).toBe("s");

    expect(value("semscope.semaphore.permit.limit")).toBe(2);
    expect(value("semscope.semaphore.permit.count", { "semscope.permit.state": "used" })).toBe(1);
    expect(value("semscope.semaphore.permit.count", { "semscope.permit.state": "available" })).toBe(1);
    expect(value("semscope.semaphore.pending_requests")).toBe(0);
    expect(value("semscope.semaphore.longest_hold") as number).toBeGreaterThan(0);

    a.release();
    stop();
    await sleep(120);
    // Stopped: nothing more is added, and the gauges no longer see the semaphore (the SDK keeps
    // exporting their last observation: one permit used, though it has since been released).
    const after = await collect(reader);
    expect(db.counters().released).toBe(own.released + 1);
    expect(point(after, "semscope.semaphore.releases", sel)?.value).toBe(own.released);
    expect(point(after, "semscope.semaphore.permit.count", { ...sel, "semscope.permit.state": "used" })?.value).toBe(1);
  });

  it("with histograms: false, keeps the counters and gauges and records no durations", async () => {
    const { agent, reader, provider } = await setup();
    cleanups.push(agent.otel({ meter: provider.getMeter("lean"), histograms: false }));
    const sem = new Semaphore({ name: "otel-lean", permits: 1 });
    cleanups.push(() => sem.close());
    for (let i = 0; i < 4; i++) await sem.use(() => sleep(1));
    await sleep(150);
    const all = await collect(reader);
    expect(point(all, "semscope.semaphore.acquisitions", { [ATTR]: "otel-lean" })?.value).toBe(4);
    expect(all.has("semscope.semaphore.wait_time")).toBe(false);
    expect(all.has("semscope.semaphore.use_time")).toBe(false);
  });

  it("refuses something that is not a Meter with a TypeError, and a throwing SDK never reaches the service", async () => {
    const { agent } = await setup();
    expect(() => agent.otel({ meter: {} as never })).toThrow(TypeError);
    expect(() => agent.otel(undefined as never)).toThrow(/expects \{ meter \}/);

    const throwing = metrics.getMeter("noop");
    const broken = {
      createCounter: () => ({ add: () => { throw new Error("sdk broke"); } }),
      createHistogram: throwing.createHistogram.bind(throwing),
      createObservableGauge: throwing.createObservableGauge.bind(throwing),
    };
    cleanups.push(agent.otel({ meter: broken }));
    const sem = new Semaphore({ name: "otel-broken", permits: 1 });
    cleanups.push(() => sem.close());
    await sem.use(() => sleep(1));
    const seqBefore = agent.seq;
    await sleep(150);
    // The interval went on: batches kept being made after the bridge threw.
    expect(agent.seq).toBeGreaterThan(seqBefore);
  });
});
