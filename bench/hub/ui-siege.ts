// The /ui siege case: a hub at its design scale (9,990 semaphores streaming at 1 s from a
// simulator child) and a real agent (the agent library in a child, 10 semaphores at 200 ms) whose
// acks are timed, first quietly, then while 100 dashboards connect at once from one address and
// ask for SNAPSHOT_REQUESTS snapshots, one at a time (bench/hub/dashboards.ts). Per phase: the real
// agent's ack p50/p99/max, the hub's longest event-loop block (monitorEventLoopDelay in the hub
// child) and its scavenges. Each round starts a fresh hub, so the spread between rounds is the machine's.
// Alone: `node --import tsx bench/hub/ui-siege.ts` (BENCH_UI_SIEGE_ROUNDS, default 3;
// BENCH_SERVER_NODE_ARGS: more node flags for the hub child, e.g. "--trace-gc-nvp").
import os from "node:os";
import { fileURLToPath } from "node:url";
import { HUB_NODE_FLAGS } from "../../main/hub/node-flags.js";
import { spawnChild, type Child } from "./child.js";
import { loadConfig, type HubBenchConfig } from "./config.js";
import type { AckRecord } from "./fairness.js";
import type { ServerReport } from "./messages.js";
import { percentile } from "./report.js";

export type SiegeMessage =
  | { type: "listening"; url: string }
  | { type: "ready"; connected: number }
  | { type: "connected" }
  | { type: "probe"; acks: AckRecord[] }
  | ServerReport
  | { type: "dashboards:ready"; admitted: number }
  | { type: "dashboards:done"; admitted: number; refusedBy: Record<string, number>; snapshots: number; rateRefused: number; failed: number; dropped: number; disconnected: number; reconnected: number };

export interface SiegePhase {
  readonly acks: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Acks not ok, and seq gaps, over the phase: both must be 0. */
  readonly lost: number;
  readonly loopMaxMs: number;
  readonly rssMb: number;
  /** The longest garbage collection of each kind over the phase, ms. */
  readonly gcMaxMs: { readonly minor: number; readonly major: number };
  /** Young-generation collections over the phase and their mean pause, ms. */
  readonly scavenges: number;
  readonly scavengeMeanMs: number;
}

export interface UiSiegeRound {
  readonly quiet: SiegePhase;
  readonly dashboards: SiegePhase & { readonly admitted: number; readonly refused: number; readonly snapshots: number; readonly rateRefused: number; readonly failed: number; readonly dropped: number; readonly disconnected: number; readonly reconnected: number };
}

const fixture = fileURLToPath(new URL("../../test/e2e/stream/fixtures/service.ts", import.meta.url));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** With the real agent's 10, the hub's default cap per address (10,000). */
const SIMULATED = 9990;
const PHASE_MS = 15_000;
/** Snapshots the dashboards ask for in a round, one at a time, at most one per SNAPSHOT_EVERY_MS: 15 s when the hub keeps up. */
const SNAPSHOT_REQUESTS = 30;
const SNAPSHOT_EVERY_MS = PHASE_MS / SNAPSHOT_REQUESTS;
const f = (x: number, d: number) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");

/** One measured window around `run`: the real agent's acks in it and the hub child's loop and GC. */
export async function phase(hub: Child<SiegeMessage>, agent: Child<SiegeMessage>, run: () => Promise<void>): Promise<SiegePhase> {
  const from = Date.now();
  hub.send("mark");
  await run();
  hub.send("report");
  const to = Date.now();
  const report = await hub.next("report", 60_000);
  await sleep(1000);
  agent.send("probe");
  const acks = (await agent.next("probe", 30_000)).acks.filter((a) => a.at > from && a.at <= to);
  const ms = acks
    .filter((a) => a.ok)
    .map((a) => a.ms)
    .sort((a, b) => a - b);
  const seqs = acks.map((a) => a.seq).sort((a, b) => a - b);
  let gaps = 0;
  for (let i = 1; i < seqs.length; i++) if (seqs[i] !== seqs[i - 1] + 1) gaps++;
  return {
    acks: acks.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: ms.at(-1) ?? Number.NaN,
    lost: acks.length - ms.length + gaps,
    loopMaxMs: report.gc?.loopDelayMaxMs ?? Number.NaN,
    rssMb: report.rss / 2 ** 20,
    gcMaxMs: { minor: report.gc?.minor.maxMs ?? Number.NaN, major: Math.max(report.gc?.major.maxMs ?? Number.NaN, report.gc?.incremental.maxMs ?? Number.NaN) },
    scavenges: report.gc?.minor.count ?? 0,
    scavengeMeanMs: report.gc === undefined || report.gc.minor.count === 0 ? Number.NaN : report.gc.minor.ms / report.gc.minor.count,
  };
}

async function round(config: HubBenchConfig, log: (line: string) => void): Promise<UiSiegeRound> {
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  const hub = spawnChild<SiegeMessage>("./server-hub.ts", { BENCH_TOTAL_SEMAPHORES: "10000" }, ["--expose-gc", ...HUB_NODE_FLAGS, ...extra]);
  const children: Child<SiegeMessage>[] = [hub];
  try {
    const { url } = await hub.next("listening", 60_000);
    const sim = spawnChild<SiegeMessage>(
      "./simulator.ts",
      { BENCH_URL: url, BENCH_SIM_AGENTS: "10", BENCH_SIM_FIRST: "0", BENCH_SEMAPHORES: String(SIMULATED / 10), BENCH_INTERVAL_MS: "1000" },
      [],
      config.simulatorNice,
    );
    children.push(sim);
    await sim.next("ready", 180_000);
    const agent = spawnChild<SiegeMessage>(fixture, { HUB_URL: url, SERVICE: "siege", INSTANCE: "a1", INTERVAL_MS: "200", SCENARIOS: "steady:10" });
    children.push(agent);
    await agent.next("connected", 60_000);
    await sleep(3000);

    const quiet = await phase(hub, agent, () => sleep(PHASE_MS / 3));
    let board: Extract<SiegeMessage, { type: "dashboards:done" }> | undefined;
    const dashboards = await phase(hub, agent, async () => {
      const env = { BENCH_URL: url, BENCH_DASHBOARDS: "100", BENCH_SNAPSHOT_REQUESTS: String(SNAPSHOT_REQUESTS), BENCH_SNAPSHOT_EVERY_MS: String(SNAPSHOT_EVERY_MS) };
      const d = spawnChild<SiegeMessage>("./dashboards.ts", env, [], config.simulatorNice);
      children.push(d);
      await d.next("dashboards:ready", 120_000);
      d.send("ask");
      board = await d.next("dashboards:done", 10 * PHASE_MS).catch(async () => {
        d.send("stop");
        return d.next("dashboards:done", 60_000);
      });
      await d.stop();
    });
    const refused = Object.values(board?.refusedBy ?? {}).reduce((n, x) => n + x, 0);
    log(`  /ui siege: quiet ack p99 ${f(quiet.p99, 1)} ms; 100 dashboards: ack p99 ${f(dashboards.p99, 1)} ms, loop max ${f(dashboards.loopMaxMs, 0)} ms`);
    return { quiet, dashboards: { ...dashboards, admitted: board?.admitted ?? 0, refused, snapshots: board?.snapshots ?? 0, rateRefused: board?.rateRefused ?? 0, failed: board?.failed ?? 0, dropped: board?.dropped ?? 0, disconnected: board?.disconnected ?? 0, reconnected: board?.reconnected ?? 0 } };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}

export async function uiSiege(config: HubBenchConfig, log: (line: string) => void, rounds: number): Promise<UiSiegeRound[]> {
  const out: UiSiegeRound[] = [];
  for (let i = 0; i < rounds; i++) out.push(await round(config, log));
  return out;
}

/** The case's table, the spread over rounds, its target checks and its JSON fields. */
export function uiSiegeReport(rounds: readonly UiSiegeRound[]): { lines: string[]; checks: string[]; json: Record<string, unknown> } {
  if (rounds.length === 0) return { lines: [], checks: [], json: {} };
  const rows = rounds.flatMap((r, i) => {
    const row = (name: string, p: SiegePhase, extra: string) =>
      `  #${i + 1} ${name.padEnd(15)} acks ${String(p.acks).padStart(4)}  p50 ${f(p.p50, 2).padStart(6)}  p99 ${f(p.p99, 2).padStart(7)}  max ${f(p.max, 1).padStart(7)} ms  lost ${p.lost}  loop max ${f(p.loopMaxMs, 0).padStart(5)} ms (gc ${f(p.gcMaxMs.minor, 0)}/${f(p.gcMaxMs.major, 0)}; ${p.scavenges} scavenges, mean ${f(p.scavengeMeanMs, 1)} ms)  rss ${f(p.rssMb, 0)} MB${extra}`;
    const d = r.dashboards;
    return [
      row("quiet", r.quiet, ""),
      row("100 dashboards", d, `  (${d.admitted} admitted, ${d.refused} refused, ${d.dropped} dropped before their snapshot, ${d.disconnected} after, ${d.reconnected} reconnected; ${d.snapshots} snapshots, ${d.rateRefused} snapshot:get rate-refused, ${d.failed} failed)`),
    ];
  });
  const p99 = rounds.map((r) => r.dashboards.p99);
  const loop = rounds.map((r) => r.dashboards.loopMaxMs);
  const spread = (xs: number[]) => `${f(Math.min(...xs), 1)}–${f(Math.max(...xs), 1)}`;
  const lines = [
    `/ui siege: 9,990 semaphores at 1 s and a real agent of 10 at 200 ms; 100 dashboards connect at once and ask for ${SNAPSHOT_REQUESTS} snapshots, one at a time`,
    ...rows,
    `  spread over ${rounds.length} round(s): ack p99 ${spread(p99)} ms, loop max ${spread(loop)} ms; load average ${os.loadavg()[0].toFixed(2)} at the end`,
  ];
  const check = (ok: boolean, what: string) => `${ok ? "PASS" : "FAIL"} ${what}`;
  const checks = [
    check(Math.max(...p99) < 50, `a real agent's ack p99 while 100 dashboards ask for snapshots under 50 ms: worst round ${f(Math.max(...p99), 2)} ms`),
    check(Math.max(...loop) <= 50, `no event-loop block over 50 ms meanwhile: worst ${f(Math.max(...loop), 0)} ms`),
    check(rounds.every((r) => r.quiet.lost + r.dashboards.lost === 0), "no batch of the real agent lost or out of order"),
  ];
  const round2 = (x: number) => (Number.isFinite(x) ? Math.round(x * 100) / 100 : null);
  return { lines, checks, json: { ui_siege_ack_p99_ms: p99.map(round2), ui_siege_loop_max_ms: loop.map(round2) } };
}

if (/ui-siege\.ts$/.test(process.argv[1] ?? "")) {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const r = uiSiegeReport(await uiSiege(loadConfig(), log, Number(process.env.BENCH_UI_SIEGE_ROUNDS ?? 3)));
  process.stdout.write(`${[...r.lines, "", ...r.checks].join("\n")}\n`);
  process.exit(0);
}
