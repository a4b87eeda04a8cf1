// Forgetting agents a slice per event-loop turn: an agent evicted to make room may hold 10,000
// semaphores, and retiring them all (alerts, groups, histories) in the turn of the newcomer's
// message blocked every other agent's acks. Nothing half-forgotten is read: the core finishes
// every pending forget before it is read from outside or takes an input under the same name.

/** One agent being forgotten: `step(n)` does up to n units of it and says whether it is done. */
export interface ForgetJob {
  /** agentKey(service, instance): its semaphores' keys start with it. */
  readonly name: string;
  step(n: number): boolean;
}

/** Units (a semaphore retired, a history dropped) per turn: a few milliseconds on a loaded machine. */
export const FORGET_SLICE = 128;

export class ForgetSlices {
  private readonly queue: ForgetJob[] = [];
  private readonly names = new Map<string, number>();
  private timer: NodeJS.Immediate | undefined;

  get pending(): number {
    return this.queue.length;
  }

  add(job: ForgetJob): void {
    this.queue.push(job);
    this.names.set(job.name, (this.names.get(job.name) ?? 0) + 1);
    this.timer ??= setImmediate(() => this.turn());
  }

  /** Whether an agent under `name` is still being forgotten. */
  has(name: string): boolean {
    return this.names.has(name);
  }

  /** Every pending forget, done now. */
  finish(): void {
    if (this.queue.length === 0) return;
    this.run(Infinity);
  }

  private turn(): void {
    this.timer = undefined;
    this.run(FORGET_SLICE);
    if (this.queue.length > 0) this.timer = setImmediate(() => this.turn());
  }

  private run(budget: number): void {
    while (this.queue.length > 0 && budget > 0) {
      const job = this.queue[0]!;
      const n = Math.min(budget, FORGET_SLICE);
      budget -= n;
      if (!job.step(n)) continue;
      this.queue.shift();
      const left = (this.names.get(job.name) ?? 1) - 1;
      if (left === 0) this.names.delete(job.name);
      else this.names.set(job.name, left);
    }
  }
}
