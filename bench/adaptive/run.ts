// bench:adaptive — callers with a static N too low, right and too high, and an adaptive N, each
// against its own copy of a downstream with a knee (downstream.ts, a child process), all at once.
// Each caller offers the same open-loop load with a deadline per request; reported: goodput
// (answers within the deadline per second), p50/p99 latency of those, and errors (no permit
// within PERMIT_WAIT_MS, or no answer within the deadline). Two cases: a steady downstream, then one that slows
// halfway through (fewer workers, slower service: the best static N changes).
import { fork, type ChildProcess } from "node:child_process";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { Semaphore } from "../../agent/src/index.js";
import { positiveInt } from "../support/env.js";

const DURATION_MS = positiveInt("BENCH_ADAPTIVE_MS", 12_000);
const ROUNDS = positiveInt("BENCH_ADAPTIVE_ROUNDS", 1);
const DEADLINE_MS = 500;
/** How long an arrival may wait for a permit: past it the call is shed (an error), not queued behind the whole backlog. */
const PERMIT_WAIT_MS = 50;

interface Phase {
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
  ok: number;
  errors: number;
  latencies: number[];
  finalCap: number;
  lastReason: string;
}

function startDownstream(phases: Phase[]): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(join(import.meta.dirname, "downstream.ts"), [JSON.stringify(phases)], { execArgv: ["--import", "tsx"], stdio: "inherit" });
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

async function runCaller(label: string, sem: Semaphore, port: number, rate: number): Promise<Result> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const r: Result = { label, ok: 0, errors: 0, latencies: [], finalCap: 0, lastReason: "" };
  const start = performance.now();
  const pending = new Set<Promise<void>>();
  let sent = 0;
  while (performance.now() - start < DURATION_MS) {
    // Open loop: as many arrivals as the rate owes by now, whatever became of the earlier ones.
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    for (; sent < due; sent++) {
      const t0 = performance.now();
      const p = sem
        .use(() => call(port, agent, Math.max(1, DEADLINE_MS - (performance.now() - t0))), { timeoutMs: PERMIT_WAIT_MS })
        .then(
          () => {
            const ms = performance.now() - t0;
            if (ms <= DEADLINE_MS) {
              r.ok++;
              r.latencies.push(ms);
            } else r.errors++;
          },
          () => void r.errors++,
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

async function runCase(c: Case, round: number): Promise<void> {
  const callers = [...c.statics.map((s) => ({ label: s.label, permits: s.n as number | undefined })), { label: "adaptive 1..200", permits: undefined }];
  const downs = await Promise.all(callers.map(() => startDownstream(c.phases)));
  const results = await Promise.all(
    callers.map((k, i) => {
      const name = `bench-${round}-${c.title.slice(0, 6)}-${i}`;
      const sem = k.permits !== undefined ? new Semaphore({ name, permits: k.permits }) : new Semaphore({ name, permits: { adaptive: { min: 1, max: 200, initial: 4 } } });
      return runCaller(k.label, sem, downs[i].port, c.ratePerSec).finally(() => sem.close());
    }),
  );
  for (const d of downs) d.child.kill();
  console.log(`\n${c.title} — round ${round + 1}, ${DURATION_MS / 1000} s, deadline ${DEADLINE_MS} ms`);
  console.log("caller                      goodput/s   p50 ms   p99 ms   errors   final cap");
  for (const r of results) {
    const s = r.latencies.sort((a, b) => a - b);
    const line = [
      r.label.padEnd(26),
      (r.ok / (DURATION_MS / 1000)).toFixed(0).padStart(10),
      pct(s, 0.5).toFixed(1).padStart(8),
      pct(s, 0.99).toFixed(1).padStart(8),
      String(r.errors).padStart(8),
      String(r.finalCap).padStart(11),
    ];
    console.log(line.join(" "));
  }
  const last = results[results.length - 1].lastReason;
  if (last !== "") console.log(`adaptive's last change: ${last}`);
}

for (let round = 0; round < ROUNDS; round++) for (const c of CASES) await runCase(c, round);
process.exit(0);
