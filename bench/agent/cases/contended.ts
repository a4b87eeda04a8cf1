// Case 2: many tasks contending for few permits, ops/s. Every task but the first few queues, so
// this measures the wait queue and the hand-off from release() to the next waiter.

import type { BenchCase } from "./case.js";
import { collectGarbage } from "./case.js";
import type { Contender } from "../contenders.js";

async function run(contender: Contender, tasks: number, permits: number): Promise<number> {
  const lim = contender.make(permits);
  // Allocated before the clock starts: the array is the harness's cost, not the semaphore's.
  const pending = new Array<Promise<void>>(tasks);
  try {
    collectGarbage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < tasks; i++) pending[i] = lim.task();
    await Promise.all(pending);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    return tasks / seconds;
  } finally {
    await lim.close();
  }
}

export const contended: BenchCase = {
  id: "contended_ops",
  label: "contended ops/s",
  title: "contended: all tasks start at once, few permits (ops/s, higher is better)",
  unit: "ops/s",
  better: "higher",
  timed: true,

  async warmup(contender, config) {
    // Smaller than the real run: a queue that is O(n) per hand-off (async-mutex) would spend
    // seconds here otherwise, and 2 x 10,000 tasks is plenty to compile every path.
    const tasks = Math.min(config.contendedTasks, 10_000);
    for (let i = 0; i < 2; i++) await run(contender, tasks, config.contendedPermits);
  },

  measure(contender, config) {
    return run(contender, config.contendedTasks, config.contendedPermits);
  },
};
