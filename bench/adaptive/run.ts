// bench:adaptive — callers with a static N too low, right and too high, and an adaptive N, each
// against its own copy of a downstream with a knee (downstream.ts, a child process), all at once.
// Each caller offers the same open-loop load with a deadline per request; reported: goodput
// (answers within the deadline per second), p50/p99 latency of those, and errors (no permit
// within PERMIT_WAIT_MS, or no answer within the deadline). Two cases: a steady downstream, then one that slows
// halfway through (fewer workers, slower service: the best static N changes). Requests that
// arrive during the warm-up are served but not counted; the downstreams change phase together.
import { fork, type ChildProcess } from "node:child_process";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { Semaphore } from "../../agent/src/index.js";
import { positiveInt } from "../support/env.js";

const DURATION_MS = positiveInt("BENCH_ADAPTIVE_MS", 12_000);
const WARMUP_MS = positiveInt("BENCH_ADAPTIVE_WARMUP_MS", 3000);
const ROUNDS = positiveInt("BENCH_ADAPTIVE_ROUNDS", 3);
const TRACE = process.env.BENCH_ADAPTIVE_TRACE === "1";
const DEADLINE_MS = 500;
/** How long an arrival may wait for a permit: past it the call is shed (an error), not queued behind the whole backlog. */
const PERMIT_WAIT_MS = 50;
const ADAPTIVE = { min: 1, max: 200, initial: 4 };

interface Phase {
  /** From the end of the warm-up. */
  atMs: number;
  workers: number;
  serviceMs: number;
}
interface Case {
  title: string;
  phases: Phase[];
  ratePerSec: number;
  statics: { label: string; n: number }[];
}

const CASES: Case[] = [
  {
    title: "steady: 8 workers × 80 ms (100/s), offered 120/s",
    phases: [{ atMs: 0, workers: 8, serviceMs: 80 }],
    ratePerSec: 120,
    statics: [
      { label: "static 2 (too low)", n: 2 },
      { label: "static 8 (right)", n: 8 },
      { label: "static 64 (too high)", n: 64 },
    ],
  },
  {
    title: "slows halfway: 16 workers × 80 ms (200/s), then 4 × 160 ms (25/s), offered 120/s",
    phases: [
      { atMs: 0, workers: 16, serviceMs: 80 },
      { atMs: DURATION_MS / 2, workers: 4, serviceMs: 160 },
    ],
    ratePerSec: 120,
    statics: [
      { label: "static 4 (right after)", n: 4 },
      { label: "static 16 (right before)", n: 16 },
      { label: "static 64 (too high)", n: 64 },
    ],
  },
];

interface Result {
  label: string;
  adaptive: boolean;
  ok: number;
  errors: number;
  latencies: number[];
  finalCap: number;
  lastReason: string;
  /** The cap every 500 ms from the end of the warm-up. */
  caps: number[];
}

interface Row {
  label: string;
  adaptive: boolean;
  goodput: number;
  p50: number;
  p99: number;
  errors: number;
  finalCap: number;
}

function startDownstream(first: Phase): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(join(import.meta.dirname, "downstream.ts"), [JSON.stringify(first)], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  return new Promise((resolve, reject) => {
    child.once("message", (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once("exit", (code) => reject(new Error(`downstream exited with ${code}`)));
  });
}

function call(port: number, agent: Agent, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => req.destroy(new Error("deadline")), timeoutMs);
    const req = request({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
      res.resume();
      res.on("end", () => {
        clearTimeout(timer);
        resolve();
      });
      res.on("error", reject);
    });
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

/** Offers `rate` arrivals per second from `start` (shared by every caller) for the warm-up and the measured run. */
async function runCaller(label: string, sem: Semaphore, port: number, rate: number, start: number): Promise<Result> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const r: Result = { label, adaptive: sem.adaptiveLimit !== undefined, ok: 0, errors: 0, latencies: [], finalCap: 0, lastReason: "", caps: [] };
  const measureFrom = start + WARMUP_MS;
  const end = measureFrom + DURATION_MS;
  const pending = new Set<Promise<void>>();
  let sent = 0;
  while (performance.now() < end) {
    // Open loop: as many arrivals as the rate owes by now, whatever became of the earlier ones.
    const now = performance.now();
    const due = Math.floor(((now - start) / 1000) * rate);
    const counted = now >= measureFrom;
    if (counted && r.caps.length <= (now - measureFrom) / 500) r.caps.push(sem.permits);
    for (; sent < due; sent++) {
      const t0 = performance.now();
      const p = sem
        .use(() => call(port, agent, Math.max(1, DEADLINE_MS - (performance.now() - t0))), { timeoutMs: PERMIT_WAIT_MS })
        .then(
          () => {
            const ms = performance.now() - t0;
            if (!counted) return;
            if (ms <= DEADLINE_MS) {
              r.ok++;
              r.latencies.push(ms);
            } else r.errors++;
          },
          () => {
            if (counted) r.errors++;
          },
        )
        .finally(() => pending.delete(p));
      pending.add(p);
    }
    await new Promise((res) => setTimeout(res, 5));
  }
  r.finalCap = sem.permits;
  r.lastReason = sem.adaptiveLimit?.reason ?? "";
  await Promise.allSettled([...pending]);
  agent.destroy();
  return r;
}

function pct(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function row(r: Result): Row {
  const s = r.latencies.sort((a, b) => a - b);
  return { label: r.label, adaptive: r.adaptive, goodput: r.ok / (DURATION_MS / 1000), p50: pct(s, 0.5), p99: pct(s, 0.99), errors: r.errors, finalCap: r.finalCap };
}

async function runCase(c: Case, round: number): Promise<Row[]> {
  const callers = [...c.statics.map((s) => ({ label: s.label, permits: s.n as number | undefined })), { label: `adaptive ${ADAPTIVE.min}..${ADAPTIVE.max}`, permits: undefined }];
  const downs = await Promise.all(callers.map(() => startDownstream(c.phases[0])));
  const start = performance.now();
  const switches = c.phases.slice(1).map((p) => setTimeout(() => downs.forEach((d) => d.child.send({ workers: p.workers, serviceMs: p.serviceMs })), WARMUP_MS + p.atMs));
  const results = await Promise.all(
    callers.map((k, i) => {
      const name = `bench-${round}-${c.title.slice(0, 6)}-${i}`;
      const sem = k.permits !== undefined ? new Semaphore({ name, permits: k.permits }) : new Semaphore({ name, permits: { adaptive: ADAPTIVE } });
      return runCaller(k.label, sem, downs[i].port, c.ratePerSec, start).finally(() => sem.close());
    }),
  );
  for (const t of switches) clearTimeout(t);
  for (const d of downs) d.child.kill();
  console.log(`\n${c.title} — round ${round + 1}, ${DURATION_MS / 1000} s after ${WARMUP_MS / 1000} s of warm-up, deadline ${DEADLINE_MS} ms`);
  console.log("caller                      goodput/s   p50 ms   p99 ms   errors   final cap");
  const rows = results.map(row);
  for (const r of rows) {
    console.log(
      [r.label.padEnd(26), r.goodput.toFixed(0).padStart(10), range([r.p50], 1).padStart(8), range([r.p99], 1).padStart(8), String(r.errors).padStart(8), String(r.finalCap).padStart(11)].join(" "),
    );
  }
  const a = results[results.length - 1];
  if (a.lastReason !== "") console.log(`adaptive's last change: ${a.lastReason}`);
  if (TRACE) console.log(`adaptive's cap every 0.5 s: ${a.caps.join(" ")}`);
  return rows;
}

/** The adaptive caller against the static ones in one round: goodput and p99 over the best static N's, goodput over the best of every static N. */
function ratios(rows: Row[]): { goodput: number; p99: number } {
  const statics = rows.filter((r) => !r.adaptive);
  const a = rows.find((r) => r.adaptive) as Row;
  const best = statics.reduce((b, r) => (r.goodput > b.goodput ? r : b));
  return { goodput: a.goodput / best.goodput, p99: a.p99 / best.p99 };
}

/** min–max of `xs`; a latency of a caller that had no answer in time is NaN, shown as "—". */
function range(xs: number[], digits: number): string {
  if (xs.some((x) => x !== x)) return "—";
  const lo = Math.min(...xs).toFixed(digits);
  const hi = Math.max(...xs).toFixed(digits);
  return lo === hi ? lo : `${lo}–${hi}`;
}

const all: Row[][][] = CASES.map(() => []);
// Rounds interleave the cases, so a burst of load on the machine falls on both rather than one.
for (let round = 0; round < ROUNDS; round++) for (const [i, c] of CASES.entries()) all[i].push(await runCase(c, round));

console.log(`\nsummary over ${ROUNDS} round(s): ranges (min–max)`);
for (const [i, c] of CASES.entries()) {
  console.log(`\n${c.title}`);
  console.log("caller                      goodput/s      p50 ms        p99 ms   final cap");
  for (const [k, first] of all[i][0].entries()) {
    const rs = all[i].map((rows) => rows[k]);
    console.log(
      [
        first.label.padEnd(26),
        range(rs.map((r) => r.goodput), 0).padStart(10),
        range(rs.map((r) => r.p50), 0).padStart(11),
        range(rs.map((r) => r.p99), 0).padStart(13),
        range(rs.map((r) => r.finalCap), 0).padStart(11),
      ].join(" "),
    );
  }
  const q = all[i].map(ratios);
  console.log(`adaptive / best static N: goodput ${range(q.map((x) => x.goodput), 2)}×, p99 ${range(q.map((x) => x.p99), 2)}×`);
}
process.exit(0);
