// What instrument() adds per uncontended acquire + release, in process CPU time, for every adapter
// row of bench:agent (`<lib>+instrument` against its baseline `<lib>`): the two run in short chunks
// that alternate (the order flips every round), medians of many rounds, as flight-ab.ts does for
// the flight recorder. CPU time is not inflated by other processes taking the core, so the added
// cost holds on a busy machine where run.ts's wall-time medians swing.
// Each pair runs in a fresh child process (in one process, the pairs run before it change what V8
// learned and the later ones measure slower), twice: with node's default flags, and with
// --no-allocation-site-pretenuring. By default V8 may start allocating a loop's short-lived
// objects (promises, closures) in the old generation, and a run then pays full collections: the
// same pair measures in one regime or the other from run to run; without pretenuring it is steady.
// `node --import tsx bench/agent/adapter-ab.ts`; BENCH_ROUNDS (default 40), BENCH_CONTENDERS
// (instrumented rows to run, e.g. pg-pool+instrument). Prints one JSON line.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CONTENDERS, type Contender, type Limiter } from "./contenders.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
/** CPU time per chunk: process.cpuUsage() may count in scheduler ticks, so a chunk spans several. */
const CHUNK_MS = 25;
const PERMITS = 4;
const only = process.env.BENCH_CONTENDERS?.split(",").filter(Boolean);

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const quantile = (a: number[], q: number): number => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(q * a.length))]!;

interface PairResult {
  bare_cpu_ns: number;
  instrumented_cpu_ns: number;
  added_ns: number;
  /** 10th to 90th percentile of the per-round added cost: how much it swings. */
  added_ns_p10: number;
  added_ns_p90: number;
  ratio: number;
  chunk: number;
}

async function abPair(bare: Contender, inst: Contender): Promise<PairResult> {
  const a: Limiter = bare.make(PERMITS);
  const b: Limiter = inst.make(PERMITS);
  const cycles = inst.abCycles ?? 5_000;
  try {
    for (let w = 0; w < 20; w++) {
      await a.cycle(cycles);
      await b.cycle(cycles);
    }
    const c0 = cpuUs();
    await b.cycle(4 * cycles);
    const chunk = Math.max(cycles, Math.round((4 * cycles * CHUNK_MS * 1000) / Math.max(1, cpuUs() - c0)));
    const ns = { a: [] as number[], b: [] as number[] };
    const added: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order: ["a" | "b", Limiter][] = round % 2 === 0 ? [["a", a], ["b", b]] : [["b", b], ["a", a]];
      const got = { a: 0, b: 0 };
      for (const [k, lim] of order) {
        const c0 = cpuUs();
        await lim.cycle(chunk);
        got[k] = ((cpuUs() - c0) * 1000) / chunk;
        ns[k].push(got[k]);
      }
      added.push(got.b - got.a);
    }
    const bareNs = median(ns.a);
    const instNs = median(ns.b);
    return { bare_cpu_ns: bareNs, instrumented_cpu_ns: instNs, added_ns: instNs - bareNs, added_ns_p10: quantile(added, 0.1), added_ns_p90: quantile(added, 0.9), ratio: instNs / bareNs, chunk };
  } finally {
    await a.close();
    await b.close();
  }
}

/** One pair in a fresh process (this file, with that pair only); its JSON line's result. */
function inChild(name: string, flags: readonly string[]): PairResult {
  const stdout = execFileSync(process.execPath, [...flags, ...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_CONTENDERS: name, BENCH_AB_CHILD: "1" },
    stdio: ["ignore", "pipe", "ignore"],
    encoding: "utf8",
  });
  const line = JSON.parse(stdout.trim().split("\n").at(-1)!) as { cpu_ns: Record<string, PairResult> };
  return line.cpu_ns[name]!;
}

async function main(): Promise<void> {
  const byName = new Map(CONTENDERS.map((c) => [c.name, c] as const));
  // Rows that need a server are left to run.ts (redis-semaphore: a network round trip per call),
  // unless their calls stay in process once warm (mysql2): the child starts that server.
  const pairs = CONTENDERS.filter((c) => c.name.endsWith("+instrument") && c.baseline !== undefined && (c.needs === undefined || c.callsStayInProcess === true) && (only === undefined || only.includes(c.name)));
  const out: Record<string, PairResult> = {};
  for (const inst of pairs) {
    const bare = byName.get(inst.baseline!);
    if (bare === undefined) throw new Error(`${inst.name}: no baseline row ${inst.baseline}`);
    if (process.env.BENCH_AB_CHILD === "1") {
      const why = await inst.needs?.start();
      if (why !== undefined) throw new Error(`${inst.name}: ${why}`);
      try {
        out[inst.name] = await abPair(bare, inst);
      } finally {
        await inst.needs?.stop();
      }
      continue;
    }
    for (const [key, flags] of [[inst.name, []], [`${inst.name} no-pretenuring`, ["--no-allocation-site-pretenuring"]]] as const) {
      const r = inChild(inst.name, flags);
      out[key] = r;
      process.stderr.write(
        `${key} (chunks of ${r.chunk}): bare ${r.bare_cpu_ns.toFixed(0)} ns, instrumented ${r.instrumented_cpu_ns.toFixed(0)} ns CPU per acquire+release: ` +
          `+${r.added_ns.toFixed(0)} ns (p10–p90 ${r.added_ns_p10.toFixed(0)}–${r.added_ns_p90.toFixed(0)}), ${r.ratio.toFixed(2)}x\n`,
      );
    }
  }
  console.log(JSON.stringify({ bench: "agent-adapter-ab", rounds: ROUNDS, chunk_ms: CHUNK_MS, cpu_ns: out }));
}

void main();
