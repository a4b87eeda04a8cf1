// Forgetting agents a slice per event-loop turn: an agent evicted to make room may hold 10,000
// semaphores, and retiring them all (alerts, groups, histories) in the turn of the newcomer's
// message blocked every other agent's acks. Nothing half-forgotten is read: the agent, its
// semaphores and histories leave every index readers use at once (HubCore.forgetSoon), and
// their alerts are hidden from reads; the slices resolve those and free the memory. An input
// under the agent's name finishes its forget first, so the name starts afresh.

/** One agent being forgotten: `step(n)` does up to n units of it and says whether it is done. */
export interface ForgetJob {
  /** agentKey(service, instance): its semaphores' keys start with it. */
  readonly name: string;
  step(n: number): boolean;
}

/** Units (a semaphore retired, a history's rows given back) per turn: a few milliseconds on a loaded machine. */
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

  /** One slice of the oldest pending forget. */
  private turn(): void {
    this.timer = undefined;
    const job = this.queue[0];
    if (job !== undefined && job.step(FORGET_SLICE)) {
      this.queue.shift();
      this.done(job);
    }
    if (this.queue.length > 0) this.timer = setImmediate(() => this.turn());
  }

  private done(job: ForgetJob): void {
    const left = (this.names.get(job.name) ?? 1) - 1;
    if (left === 0) this.names.delete(job.name);
    else this.names.set(job.name, left);
  }
}
