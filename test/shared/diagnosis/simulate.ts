// Sample streams where the cause is known: a discrete-event simulation of an N-permit FIFO
// semaphore in front of a downstream, with Poisson arrivals and random holds, sampled once a
// second into the protocol's Sample (gauges at t, counts and histograms over the interval), as
// an agent would report it. Three downstreams, one per cause:
//   slow:  holds log-normal around a median that steps up by `factor` at `changeAt`
//   tight: holds log-normal around a fixed median; arrivals step up by `factor` at `changeAt`
//   rate:  the downstream is one FIFO server of fixed rate (an API with a rate ceiling): a hold
//          is its queueing plus service time, so holds grow with concurrency; arrivals step up
// Parameters are drawn per seed from ranges, not tuned to the diagnosis thresholds.
import { DenseHist } from "../../../shared/histogram.js";
import type { Sample, SemaphoreInfo } from "../../../shared/protocol/types.js";
import { makeHello, makeInfo } from "../../fixtures/protocol.js";
import { mulberry32 } from "../../../scripts/support/prng.js";

export type Scenario = "slow" | "tight" | "rate";

export interface SimParams {
  scenario: Scenario;
  permits: number;
  /** Arrivals per second before / after changeAt. */
  rateBefore: number;
  rateAfter: number;
  /** Median hold (ms) before / after changeAt (slow, tight). */
  holdBefore: number;
  holdAfter: number;
  /** Log-normal spread of holds. */
  sigma: number;
  /** rate: the downstream server's rate (per second). */
  serverRate: number;
  changeAt: number;
  durationMs: number;
}

export interface SimOutput {
  t0: number;
  samples: { t: number; sample: Sample }[];
  params: SimParams;
  /** The true mean hold before changeAt (ms), from the simulated holds. */
  trueHoldBefore: number;
}

const between = (rnd: () => number, lo: number, hi: number) => lo + (hi - lo) * rnd();

/** Parameters for `scenario`, drawn from `seed`. */
export function drawParams(scenario: Scenario, seed: number): SimParams {
  const rnd = mulberry32(seed * 7919 + scenario.length);
  const permits = Math.round(between(rnd, 6, 16));
  const holdBefore = between(rnd, 10, 40);
  const sigma = between(rnd, 0.25, 0.6);
  const meanBefore = holdBefore * Math.exp((sigma * sigma) / 2);
  const capacity = (permits * 1000) / meanBefore;
  const base = { permits, holdBefore, sigma, changeAt: 60_000, durationMs: 80_000, serverRate: 0 };
  switch (scenario) {
    case "slow": {
      const rateBefore = capacity * between(rnd, 0.45, 0.7);
      return { ...base, scenario, rateBefore, rateAfter: rateBefore, holdAfter: holdBefore * between(rnd, 2.5, 5) };
    }
    case "tight": {
      const rateBefore = capacity * between(rnd, 0.45, 0.7);
      return { ...base, scenario, rateBefore, rateAfter: capacity * between(rnd, 1.3, 2), holdAfter: holdBefore };
    }
    case "rate": {
      // The downstream serves `serverRate`/s one at a time: far below what N permits could drive.
      const serverRate = between(rnd, 150, 400);
      const rateBefore = serverRate * between(rnd, 0.3, 0.5);
      return { ...base, scenario, serverRate, rateBefore, rateAfter: serverRate * between(rnd, 1.4, 2.2), holdAfter: holdBefore };
    }
  }
}

/** A min-heap of release times. */
class Heap {
  private a: { at: number; grantedAt: number }[] = [];
  get size(): number {
    return this.a.length;
  }
  peek(): { at: number; grantedAt: number } | undefined {
    return this.a[0];
  }
  push(x: { at: number; grantedAt: number }): void {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].at <= a[i].at) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop(): { at: number; grantedAt: number } {
    const a = this.a;
    const top = a[0];
    const last = a.pop() as { at: number; grantedAt: number };
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l].at < a[m].at) m = l;
        if (r < a.length && a[r].at < a[m].at) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
  oldest(): number {
    let o = Infinity;
    for (const x of this.a) if (x.grantedAt < o) o = x.grantedAt;
    return o;
  }
}

export function simulate(p: SimParams, seed: number, t0 = 1_700_000_000_000): SimOutput {
  const rnd = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const exp = (rate: number) => -Math.log(1 - rnd()) / rate;
  const releases = new Heap();
  const queue: number[] = [];
  let qHead = 0;
  let inUse = 0;
  let serverFree = 0;
  let nextArrival = exp(p.rateBefore / 1000);
  let nextSample = 1000;
  const waitH = new DenseHist();
  const holdH = new DenseHist();
  let acquired = 0;
  let released = 0;
  let holdSumBefore = 0;
  let holdsBefore = 0;
  const samples: { t: number; sample: Sample }[] = [];

  const grant = (now: number, arrivedAt: number) => {
    inUse++;
    acquired++;
    waitH.record(now - arrivedAt);
    let done: number;
    if (p.scenario === "rate") {
      const start = Math.max(now, serverFree);
      serverFree = start + exp(p.serverRate / 1000);
      done = serverFree;
    } else {
      const median = now < p.changeAt ? p.holdBefore : p.holdAfter;
      done = now + median * Math.exp(p.sigma * normal());
    }
    releases.push({ at: done, grantedAt: now });
  };

  while (nextSample <= p.durationMs) {
    const rel = releases.peek()?.at ?? Infinity;
    const now = Math.min(nextArrival, rel, nextSample);
    if (now === rel) {
      const r = releases.pop();
      inUse--;
      released++;
      holdH.record(r.at - r.grantedAt);
      if (r.grantedAt < p.changeAt - 5000) {
        holdSumBefore += r.at - r.grantedAt;
        holdsBefore++;
      }
      if (qHead < queue.length) grant(now, queue[qHead++]);
    } else if (now === nextArrival) {
      if (inUse < p.permits && qHead === queue.length) grant(now, now);
      else queue.push(now);
      const rate = (now < p.changeAt ? p.rateBefore : p.rateAfter) / 1000;
      nextArrival = now + exp(rate);
    } else {
      const waiters = queue.length - qHead;
      const oldest = releases.size > 0 ? releases.oldest() : Infinity;
      samples.push({
        t: t0 + now,
        sample: {
          id: "db",
          cap: p.permits,
          inUse,
          available: p.permits - inUse,
          waiters,
          oldestWaitMs: waiters > 0 ? now - queue[qHead] : 0,
          acquired,
          released,
          timeouts: 0,
          rejections: 0,
          aborts: 0,
          doubleReleases: 0,
          leaseExpiries: 0,
          waitMs: waitH.summary(),
          holdMs: holdH.summary(),
          longestHoldMs: oldest === Infinity ? 0 : now - oldest,
        },
      });
      waitH.reset();
      holdH.reset();
      acquired = 0;
      released = 0;
      if (qHead > 4096 && qHead * 2 > queue.length) {
        queue.splice(0, qHead);
        qHead = 0;
      }
      nextSample += 1000;
    }
  }
  return { t0, samples, params: p, trueHoldBefore: holdsBefore > 0 ? holdSumBefore / holdsBefore : 0 };
}

const hello = makeHello("a1", { service: "shop", startedAt: 0 });
const info = (cap: number): SemaphoreInfo => makeInfo("db", { cap });

/** The simulated run as a hub recording (hub time = sample time). */
export function recordingOf(sim: SimOutput): string[] {
  const lines = [
    { r: sim.t0, k: "start", p: { format: 1, hubVersion: "test", protocol: 1, thresholds: {} } },
    { r: sim.t0, k: "hello", a: "a1", p: hello },
    { r: sim.t0, k: "register", a: "a1", p: { semaphores: [info(sim.params.permits)] } },
    ...sim.samples.map((s, seq) => ({ r: s.t, k: "samples", a: "a1", p: { seq, t: s.t, intervalMs: 1000, items: [s.sample] } })),
  ];
  return lines.map((l) => JSON.stringify(l));
}
