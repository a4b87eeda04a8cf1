// The fairness case: a hostile agent within every limit (the most expensive valid samples batch,
// as fast as its message rate allows) must not slow another agent's stream. Two real agents
// (the semscope-agent library in child processes, 10 semaphores at 200 ms) stream to a hub
// child; their ack latencies are taken quietly, then while the hostile agent floods. The
// children are the stream tests' own fixtures (test/e2e/stream/fixtures: service.ts times every
// `samples` ack the real agent gets; flood.ts is the hostile agent), so the test and the bench
// drive the same processes: the test checks what the protocol promises, this measures how fast.
import { fileURLToPath } from "node:url";
import { HUB_NODE_FLAGS } from "../../main/hub/node-flags.js";
import { spawnChild, type Child } from "./child.js";
import type { HubBenchConfig } from "./config.js";
import { percentile } from "./report.js";

export interface AckRecord {
  seq: number;
  ms: number;
  ok: boolean;
  at: number;
}

type FixtureMessage =
  | { type: "listening"; url: string }
  | { type: "connected" }
  | { type: "probe"; acks: AckRecord[] }
  | { type: "flood:ready"; bytes: number; items: number }
  | { type: "flood:first"; at: number }
  | { type: "flood:done"; sent: number; ok: number; refused: number; errors: number; reasons: Record<string, number> };

export interface LatencySummary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface FairnessResult {
  readonly quiet: LatencySummary;
  /** Acks that arrived while the flood was on, after the hub had created the hostile's semaphores. */
  readonly flood: LatencySummary;
  /** Acks (of any time) that were not ok, and seq gaps: both must be 0. */
  readonly notOk: number;
  readonly gaps: number;
  readonly hostile: { readonly itemsPerBatch: number; readonly bytes: number; readonly ok: number; readonly refused: number; readonly itemsPerSecond: number };
}

const fixture = (name: string) => fileURLToPath(new URL(`../../test/e2e/stream/fixtures/${name}`, import.meta.url));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const INTERVAL_MS = 200;
const QUIET_MS = 6000;

function summarize(ms: number[]): LatencySummary {
  const sorted = [...ms].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
}

export async function fairness(config: HubBenchConfig, log: (line: string) => void): Promise<FairnessResult | undefined> {
  if (config.fairFloodMs === 0) return undefined;
  // The hub as bench:hub runs it (server-hub.ts), room for the hostile's 1,000 semaphores.
  const hub = spawnChild<FixtureMessage>("./server-hub.ts", { BENCH_TOTAL_SEMAPHORES: "2000" }, ["--expose-gc", ...HUB_NODE_FLAGS]);
  const children: Child<FixtureMessage>[] = [hub];
  try {
    const { url } = await hub.next("listening", 60_000);
    const agents = ["f1", "f2"].map((instance) => {
      const c = spawnChild<FixtureMessage>(fixture("service.ts"), { HUB_URL: url, SERVICE: "fair", INSTANCE: instance, INTERVAL_MS: String(INTERVAL_MS), SCENARIOS: "steady:10" });
      children.push(c);
      return c;
    });
    await Promise.all(agents.map((a) => a.next("connected", 60_000)));
    const quietFrom = Date.now();
    await sleep(QUIET_MS);
    const quietTo = Date.now();
    const flood = spawnChild<FixtureMessage>(fixture("flood.ts"), { HUB_URL: url, DURATION_MS: String(config.fairFloodMs) });
    children.push(flood);
    const ready = await flood.next("flood:ready", 60_000);
    const first = await flood.next("flood:first", 60_000);
    const done = await flood.next("flood:done", config.fairFloodMs + 60_000);
    const floodTo = Date.now();
    // What was in flight when the flood ended comes back within a few intervals.
    await sleep(5 * INTERVAL_MS);
    const lists = await Promise.all(
      agents.map(async (a) => {
        a.send("probe");
        return (await a.next("probe", 30_000)).acks;
      }),
    );
    const acks = lists.flat();
    const within = (from: number, to: number) => acks.filter((a) => a.at > from && a.at <= to).map((a) => a.ms);
    let gaps = 0;
    for (const list of lists) {
      const seqs = list.map((a) => a.seq).sort((a, b) => a - b);
      for (let i = 1; i < seqs.length; i++) if (seqs[i] !== seqs[i - 1] + 1) gaps++;
    }
    const seconds = (floodTo - first.at) / 1000;
    const result: FairnessResult = {
      quiet: summarize(within(quietFrom, quietTo)),
      flood: summarize(within(first.at, floodTo)),
      notOk: acks.filter((a) => !a.ok).length,
      gaps,
      hostile: { itemsPerBatch: ready.items, bytes: ready.bytes, ok: done.ok, refused: done.refused, itemsPerSecond: seconds > 0 ? ((done.ok - 1) * ready.items) / seconds : Number.NaN },
    };
    log(`  fairness: quiet p99 ${result.quiet.p99.toFixed(1)} ms over ${result.quiet.n}; under the flood p50 ${result.flood.p50.toFixed(1)} / p99 ${result.flood.p99.toFixed(1)} ms over ${result.flood.n}`);
    return result;
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}
