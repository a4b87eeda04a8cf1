// Sizes and knobs for the agent benchmark, read once from the environment so every file agrees.
import { list, positiveInt } from "../support/env.js";

export interface BenchConfig {
  /** Interleaved rounds; each case reports the median over them. */
  readonly rounds: number;
  /** BENCH_QUICK=1: a smoke run that checks the harness works, not a measurement to quote. */
  readonly quick: boolean;
  /** Case 1: each timed uncontended run lasts at least this long, so timer resolution and one-off pauses stay small. */
  readonly uncontendedTargetMs: number;
  /** Case 2: tasks started at once against `contendedPermits`. */
  readonly contendedTasks: number;
  readonly contendedPermits: number;
  /** Case 3: waiters queued behind `memoryPermits` held permits. */
  readonly memoryWaiters: number;
  readonly memoryPermits: number;
  /**
   * Case 3 in a fresh child process per sample (see cases/memory.ts). BENCH_MEMORY_INPROC=1 turns it
   * off, =0 forces it on. Off by default in quick runs: a child's start-up (tsx + the agent's
   * imports, ~2 s on a busy 2-core machine) would be most of a smoke run's time.
   */
  readonly memoryInChild: boolean;
  /** BENCH_CASES / BENCH_CONTENDERS (comma-separated): run a subset while working on one thing; unset = all. */
  readonly onlyCases: readonly string[] | undefined;
  readonly onlyContenders: readonly string[] | undefined;
}

export function loadConfig(): BenchConfig {
  const quick = process.env.BENCH_QUICK === "1";
  return {
    rounds: positiveInt("BENCH_ROUNDS", 5),
    quick,
    uncontendedTargetMs: quick ? 20 : 200,
    contendedTasks: quick ? 10_000 : 100_000,
    contendedPermits: 10,
    memoryWaiters: quick ? 10_000 : 100_000,
    memoryPermits: 10,
    memoryInChild: process.env.BENCH_MEMORY_INPROC === "1" ? false : process.env.BENCH_MEMORY_INPROC === "0" ? true : !quick,
    onlyCases: list("BENCH_CASES"),
    onlyContenders: list("BENCH_CONTENDERS"),
  };
}
