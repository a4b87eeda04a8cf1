// Work that scales with the fleet (a /ui snapshot or delta at 10,000 semaphores) is written as a
// generator that yields every few items; it is run in the dashboards' part of each event-loop
// turn's budget (core/turn-budget.ts), so agents' messages are read between slices instead of
// waiting behind the whole job.
import { performance } from "node:perf_hooks";

export type Job = Generator<void, void, void>;

/** Runs `job` until it ends or `deadline` (performance.now()) passes. True when it ended. */
export function runUntil(job: Job, deadline: number): boolean {
  for (;;) {
    if (job.next().done === true) return true;
    if (performance.now() >= deadline) return false;
  }
}

/** Runs a generator to its end in one piece and returns its result (tests, a replay's resync). */
export function runToEnd<T>(job: Generator<void, T, void>): T {
  for (;;) {
    const r = job.next();
    if (r.done === true) return r.value;
  }
}
