// Case 3: heap bytes per queued waiter. All permits are held, `n` acquires queue behind them, and
// the heap (after forced full collections) is compared before and after. What a waiter costs
// includes the promise its caller holds, since every real caller holds one.
//
// Each sample runs in a fresh child process (memory-child.ts). Why: heapUsed deltas are only as
// clean as the heap around them, and the parent's heap has just churned through millions of
// promises from the timing cases, with lazily grown V8 structures (feedback, code, new-space
// sizing) that can be first allocated in the middle of a measurement, and a contender that leaves
// state behind (timers, registries; issue 5's pool adapters) would skew the ones after it. A child
// that runs one small warm-up and then one measurement sees only the contender under test.
// Checked: with forced full GCs, in-process samples agree with child samples within ~1% for all
// six contenders, so BENCH_MEMORY_INPROC=1 (and quick runs, where it is the default) is a fair,
// faster alternative; the child costs ~1-2 s of start-up per sample.

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { BenchCase } from "./case.js";
import type { Contender } from "../contenders.js";

function settle(): Promise<void> {
  // A macrotask turn: every microtask the enqueue scheduled has run, as it would in a live service.
  return new Promise((resolve) => setImmediate(resolve));
}

function collectFully(gc: () => void): void {
  // Two passes: the first may only clear weak references and finalization work the second frees.
  gc();
  gc();
}

/** Needs --expose-gc. Runs in whichever process calls it (the child, normally). */
export async function measureBytesPerWaiter(contender: Contender, waiters: number, permits: number): Promise<number> {
  const gc = globalThis.gc;
  if (!gc) throw new Error("bytes_per_waiter needs node --expose-gc");
  const lim = contender.make(permits);
  try {
    await lim.seize();
    // Preallocated with undefined (not 0) so storing promises never reallocates it or changes its
    // elements kind: the holding array is the harness's cost, not the waiters'.
    const held = new Array<unknown>(waiters).fill(undefined);
    await settle();
    collectFully(gc);
    const before = process.memoryUsage().heapUsed;
    lim.enqueue(waiters, held);
    await settle();
    collectFully(gc);
    const after = process.memoryUsage().heapUsed;

    // Sanity: every waiter must really be queued. Checked after the heap reading, since the
    // `.then` callbacks allocate.
    let admitted = 0;
    for (const w of held) void (w as Promise<unknown>).then(() => admitted++);
    await settle();
    if (admitted !== 0) throw new Error(`${contender.name}: ${admitted} of ${waiters} waiters were admitted while every permit was held`);

    await lim.drain(held);
    await settle();
    if (admitted !== waiters) throw new Error(`${contender.name}: drain admitted ${admitted} of ${waiters} waiters`);
    return (after - before) / waiters;
  } finally {
    await lim.close();
  }
}

const CHILD = fileURLToPath(new URL("../memory-child.ts", import.meta.url));

function childExecArgv(): string[] {
  // Keep the loader flags (--import tsx) the parent runs with; never profile the children.
  const args = process.execArgv.filter((a) => !/^--(cpu|heap)-prof/.test(a));
  if (!args.includes("--expose-gc")) args.push("--expose-gc");
  return args;
}

/**
 * Runs `file` with `args` in a fresh node (the parent's loader flags, --expose-gc) and resolves to
 * the number `field` of the JSON object on its last stdout line; `what` names it in errors.
 */
export function numberFromChild(file: string, args: readonly string[], field: string, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...childExecArgv(), file, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const last = out.trim().split("\n").at(-1) ?? "";
      try {
        const value = (JSON.parse(last) as Record<string, unknown>)[field];
        if (code === 0 && typeof value === "number") return resolve(value);
      } catch {
        // fall through to the error below, which shows what the child said
      }
      reject(new Error(`${what} exited ${code}: ${(err || out).trim().slice(-2000)}`));
    });
  });
}

function measureInChild(contender: Contender, waiters: number, permits: number): Promise<number> {
  return numberFromChild(CHILD, [contender.name, String(waiters), String(permits)], "bytesPerWaiter", `memory child for ${contender.name}`);
}

export const memory: BenchCase = {
  id: "bytes_per_waiter",
  label: "bytes/waiter",
  title: "memory: heap bytes per queued waiter (lower is better)",
  unit: "B",
  better: "lower",
  timed: false,

  async warmup(contender, config) {
    // A child warms itself up; in-process mode warms up here with a small queue.
    if (!config.memoryInChild) await measureBytesPerWaiter(contender, 1_000, config.memoryPermits);
  },

  measure(contender, config) {
    if (!config.memoryInChild) return measureBytesPerWaiter(contender, config.memoryWaiters, config.memoryPermits);
    return measureInChild(contender, config.memoryWaiters, config.memoryPermits);
  },
};
