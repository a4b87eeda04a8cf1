// The reporter's cost per semaphore-second (issue 33): the same workload on n semaphores with
// and without connect() to a real hub (a child process), in process CPU time, the two phases
// alternating (order flipped each round). cost = (CPU with − CPU without) / (n × seconds).
// Loads: "idle" (nothing happens), "light" (every 100 ms, 1 % of the semaphores, in turn, do
// one acquire/release: each is busy once per 10 s, so a tenth of them change per interval).
import { connect, Semaphore } from "../../../agent/src/index.js";
import type { HubChild } from "./hub-child.js";

export type Load = "idle" | "light";

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs the load on `sems` for `ms`; returns the process CPU it took, in µs. */
async function runLoad(sems: Semaphore[], load: Load, ms: number): Promise<number> {
  const c0 = cpuUs();
  const end = performance.now() + ms;
  let next = 0;
  const step = Math.max(1, Math.round(sems.length / 100));
  while (performance.now() < end) {
    if (load === "light") {
      for (let k = 0; k < step; k++) {
        const s = sems[next++ % sems.length]!;
        s.tryAcquire()?.release();
      }
    }
    await sleep(100);
  }
  return cpuUs() - c0;
}

export interface ReporterSample {
  /** Agent-process µs per semaphore-second added by connect(). */
  agentUs: number;
  /** Hub-process µs per semaphore-second while connected (undefined without /proc). */
  hubUs: number | undefined;
  /** Semaphores the agent left out (over the hub's per-agent limit). */
  omitted: number;
}

/** One round: both phases on n fresh semaphores. */
export async function reporterRound(hub: HubChild, n: number, load: Load, seconds: number, connectedFirst: boolean): Promise<ReporterSample> {
  const sems = Array.from({ length: n }, (_, i) => new Semaphore({ name: `tenant-${i}`, permits: 4 }));
  try {
    const ms = seconds * 1000;
    let without = 0;
    let withAgent = 0;
    let hubUs: number | undefined;
    let omitted = 0;
    const plain = async () => {
      without = await runLoad(sems, load, ms);
    };
    const connected = async () => {
      const agent = connect({ url: hub.url, service: `bench-${n}-${load}` });
      try {
        const t0 = performance.now();
        while (!agent.connected && performance.now() - t0 < 10_000) await sleep(20);
        // Past the first register and the first full batch: the steady state is what is measured.
        // At 10,000 the hub takes ~10 s to read them within a connection's work budget.
        await runLoad(sems, load, 2500);
        const settle = performance.now() + 30_000;
        while (agent.status().bufferedBatches > 1 && performance.now() < settle) await runLoad(sems, load, 500);
        const h0 = hub.cpuUs();
        withAgent = await runLoad(sems, load, ms);
        const h1 = hub.cpuUs();
        hubUs = h0 === undefined || h1 === undefined ? undefined : (h1 - h0) / (n * seconds);
        omitted = agent.status().omitted;
      } finally {
        await agent.close();
      }
    };
    if (connectedFirst) {
      await connected();
      await plain();
    } else {
      await plain();
      await connected();
    }
    return { agentUs: (withAgent - without) / (n * seconds), hubUs, omitted };
  } finally {
    for (const s of sems) await s.close();
  }
}
