// The flight recorder's cost on a busy machine: the same Semaphore with the recorder on (default)
// and off, measured in process CPU time (process.cpuUsage) rather than wall time, in short chunks
// that alternate on/off (the order flips every round), medians of many rounds. CPU time is not
// inflated by other processes taking the core, which swamps wall-time medians on a shared 2-core
// machine (run.ts reports the CPU share of each sample; below ~0.5 its timings are noise).
// `node --import tsx bench/agent/flight-ab.ts`; BENCH_ROUNDS (default 60). Prints one JSON line.
import { Semaphore } from "../../agent/src/index.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const CYCLES = 20_000;
const TASKS = 10_000;

const on = new Semaphore({ name: "flight-ab-on", permits: 4 });
const off = new Semaphore({ name: "flight-ab-off", permits: 4, flightRecorder: false });

async function cycle(s: Semaphore, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const p = await s.acquire();
    p.release();
  }
}

async function contended(s: Semaphore, n: number): Promise<void> {
  const tasks: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    tasks.push(
      (async () => {
        const p = await s.acquire();
        await null;
        p.release();
      })(),
    );
  }
  await Promise.all(tasks);
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1];

async function main(): Promise<void> {
  for (let w = 0; w < 30; w++) {
    await cycle(on, CYCLES);
    await cycle(off, CYCLES);
    await contended(on, TASKS);
    await contended(off, TASKS);
  }
  const ns = { on: [] as number[], off: [] as number[] };
  const ops = { on: [] as number[], off: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const order: ["on" | "off", Semaphore][] = round % 2 === 0 ? [["on", on], ["off", off]] : [["off", off], ["on", on]];
    for (const [k, s] of order) {
      const c0 = cpuUs();
      await cycle(s, CYCLES);
      ns[k].push(((cpuUs() - c0) * 1000) / CYCLES);
    }
    for (const [k, s] of order) {
      const c0 = cpuUs();
      await contended(s, TASKS);
      ops[k].push(TASKS / ((cpuUs() - c0) / 1e6));
    }
  }
  const u = { on: median(ns.on), off: median(ns.off) };
  const c = { on: median(ops.on), off: median(ops.off) };
  process.stderr.write(
    `uncontended CPU ns/op: on ${u.on.toFixed(1)}, off ${u.off.toFixed(1)} (on/off ${(u.on / u.off).toFixed(3)}); ` +
      `contended ops per CPU-second: on ${Math.round(c.on)}, off ${Math.round(c.off)} (on/off ${(c.on / c.off).toFixed(3)})\n`,
  );
  console.log(JSON.stringify({ bench: "agent-flight", rounds: ROUNDS, uncontended_cpu_ns: u, contended_ops_per_cpu_s: c }));
  await on.close();
  await off.close();
}

void main();
