// The flood-to-the-caps case: hub memory after new names from several hosts, enough to pass both
// of the hub's caps in all (2,000 agents, 20,000 semaphores: main/hub/options.ts) while no one
// address passes its own (1,000 agents, 10,000 semaphores). 2,400 agents from four loopback
// addresses (127.0.0.2-5), each saying hello, registering 10 new names, sending one batch and
// leaving: 24,000 names, in three rounds of 800 (the third passes the caps). The same flood
// against a hub with its default caps and one with the caps lifted, in one run, each beside a
// real agent whose acks are timed, with the hub's longest loop block (name-flood.ts's side()).
// Alone: `node --import tsx bench/hub/cap-flood.ts` (BENCH_CAP_FLOOD_AGENTS).
import { floodAgent, floodChecks, floodPhaseLines, side, type FloodSide } from "./name-flood.js";

const ADDRESSES = 4;
const PER_AGENT = 10;
const ROUNDS = 3;

export interface CapFloodResult {
  readonly agents: number;
  readonly capped: FloodSide;
  readonly uncapped: FloodSide;
}

export async function capFlood(log: (line: string) => void, agents = Number(process.env.BENCH_CAP_FLOOD_AGENTS ?? 2400)): Promise<CapFloodResult> {
  const flood = (url: string, name: string, k: number) => floodAgent(url, name, PER_AGENT, `127.0.0.${2 + (k % ADDRESSES)}`);
  const perRound = Math.ceil(agents / ROUNDS);
  const capped = await side("default caps", {}, ROUNDS, perRound, log, flood, "cap-flood");
  const lifted = 100_000_000;
  const uncapped = await side("caps lifted", { maxAgents: lifted, maxAgentsPerAddress: lifted, maxSemaphores: lifted, maxSemaphoresPerAddress: lifted }, ROUNDS, perRound, log, flood, "cap-flood");
  return { agents: perRound * ROUNDS, capped, uncapped };
}

const MB = 1024 * 1024;

export function capFloodLines(r: CapFloodResult): string[] {
  const row = (s: FloodSide) => {
    const a = s.after.admission;
    const refused = a === undefined ? "" : `; refused ${a.refused.agents} agents, ${a.refused.semaphores} semaphore messages; ${a.evictedAgents} agents evicted`;
    return [
      `  ${s.label.padEnd(13)} rss ${(s.before.rss / MB).toFixed(0)} → ${(s.after.rss / MB).toFixed(0)} MB, heap ${(s.before.heapUsed / MB).toFixed(0)} → ${(s.after.heapUsed / MB).toFixed(0)} MB; holds ${s.after.agents} agents, ${s.after.semaphores} semaphores, ${s.after.histories} histories${refused}`,
      ...floodPhaseLines(s),
    ];
  };
  return [
    `flood to the caps: ${r.agents} agents × ${PER_AGENT} new names from ${ADDRESSES} addresses in ${ROUNDS} rounds, every agent gone after one batch; a real agent (10 semaphores at 200 ms) beside it`,
    ...row(r.capped),
    ...row(r.uncapped),
    ...floodChecks("flood to the caps, default caps", r.capped),
  ];
}

if (/cap-flood\.ts$/.test(process.argv[1] ?? "")) {
  const r = await capFlood((line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${capFloodLines(r).join("\n")}\n`);
  process.exit(0);
}
