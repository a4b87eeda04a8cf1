// Forgetting agents a slice per event-loop turn: an agent evicted to make room may hold 10,000
// semaphores, and retiring them all (alerts, groups, histories) in the turn of the newcomer's
// message blocked every other agent's acks. The slices are the "forgets" of the hub's turn budget
// (turn-budget.ts): as many per turn as its budget leaves room for, one at least every few turns. Nothing half-forgotten is read: the agent, its
// semaphores and histories leave every index readers use at once (HubCore.forgetSoon), and
// their alerts are hidden from reads; the slices resolve those and free the memory. An input
// under the agent's name finishes its forget first, so the name starts afresh.

import { performance } from "node:perf_hooks";
import type { Task, TurnBudget } from "./turn-budget.js";

/** One agent being forgotten: `step(n)` does up to n units of it and says whether it is done. */
export interface ForgetJob {
  /** agentKey(service, instance): its semaphores' keys start with it. */
  readonly name: string;
  step(n: number): boolean;
}

/** Units (a semaphore retired, a history's rows given back) per step, between looks at the clock: a ms or two on a loaded machine. */
export const FORGET_SLICE = 128;

export class ForgetSlices {
  private readonly queue: ForgetJob[] = [];
  private readonly names = new Map<string, number>();
  private readonly task: Task = { kind: "forgets", run: (deadline) => this.run(deadline) };

  constructor(private readonly turns: TurnBudget) {}

  get pending(): number {
    return this.queue.length;
  }

  add(job: ForgetJob): void {
    this.queue.push(job);
    this.names.set(job.name, (this.names.get(job.name) ?? 0) + 1);
    this.turns.want(this.task);
  }

  /** Whether an agent under `name` is still being forgotten. */
  has(name: string): boolean {
    return this.names.has(name);
  }

  /** The pending forgets of agents under `name` (every one without it), done now. */
  finish(name?: string): void {
    if (name !== undefined && !this.names.has(name)) return;
    for (let i = 0; i < this.queue.length; ) {
      const job = this.queue[i]!;
      if (name !== undefined && job.name !== name) {
        i++;
        continue;
      }
      let done = false;
      while (!done) done = job.step(Infinity);
      this.queue.splice(i, 1);
      this.done(job);
    }
  }

  /** Slices of the oldest pending forgets until `deadline` (one at least); true while some are left. */
  private run(deadline: number): boolean {
    do {
      const job = this.queue[0];
      if (job === undefined) break;
      if (job.step(FORGET_SLICE)) {
        this.queue.shift();
        this.done(job);
      }
    } while (this.queue.length > 0 && performance.now() < deadline);
    return this.queue.length > 0;
  }

  private done(job: ForgetJob): void {
    const left = (this.names.get(job.name) ?? 1) - 1;
    if (left === 0) this.names.delete(job.name);
    else this.names.set(job.name, left);
  }
}
