// A semaphore's cap as its share of a budget among the live replicas of its service and name:
// heartbeats on a timer, the split from the member list, shrink at once, grow after a lease
// period (grow-gate.ts), and the last share kept while the coordinator cannot be reached. With
// more live replicas than the budget, the permits rotate (split.ts): a replica whose turn it is
// not holds 0, says so once with a process warning, and its acquires wait for its turn.
// Nothing here awaits on the host's path or throws into it: a failed heartbeat is a state.
import { randomUUID } from "node:crypto";
import type { SampleShare } from "../../../shared/protocol/types.js";
import { defaultInstance } from "../reporter/identity.js";
import { GrowGate } from "./grow-gate.js";
import { RedisMembers } from "./redis-members.js";
import type { ShareConfig } from "./share-options.js";
import { shareOf } from "./split.js";

/** What the share changes: the semaphore's cap (Semaphore.resize, which never revokes a held permit). */
export interface ShareTarget {
  cap(): number;
  setCap(cap: number): void;
}

export class ReplicaShare {
  /** This replica's member id: unique, and readable in Redis (instance first). */
  readonly member = `${defaultInstance()}~${randomUUID().slice(0, 8)}`;
  private readonly members: RedisMembers;
  private readonly gate: GrowGate;
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight = false;
  private stopped = false;
  private replicas = 0;
  private target: number;
  /** Until a heartbeat fails: a replica that has not heard back yet is starting, not cut off. */
  private reachable = true;
  private lastError = "";
  private connectingSince: number | undefined;
  private rotating = false;

  constructor(
    private readonly cfg: ShareConfig,
    private readonly budget: number,
    private readonly sem: ShareTarget,
  ) {
    this.members = new RedisMembers(cfg.redis, cfg.key, cfg.timeoutMs);
    this.gate = new GrowGate(cfg.leaseMs);
    this.target = sem.cap();
  }

  start(): void {
    this.timer = setInterval(() => this.beat(), this.cfg.heartbeatMs);
    this.timer.unref?.();
    this.beat();
  }

  /** What the sample reports. */
  state(): SampleShare {
    return { budget: this.budget, replicas: this.replicas, target: this.target, reachable: this.reachable };
  }

  /** Why the last heartbeat failed ("" after one that worked). */
  get error(): string {
    return this.lastError;
  }

  /** Stops heartbeating and gives the lease up, so the others re-divide without waiting for it to lapse. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.members.leave(this.member).catch(() => undefined);
  }

  private beat(): void {
    if (this.inFlight || this.stopped) return;
    // A connection still being made is waited for, up to timeoutMs, before it counts as a
    // failure: a starting replica's first beats would otherwise report Redis unreachable.
    if (this.members.connecting) {
      const now = performance.now();
      this.connectingSince ??= now;
      if (now - this.connectingSince < this.cfg.timeoutMs) return;
    } else this.connectingSince = undefined;
    this.inFlight = true;
    this.members.heartbeat(this.member, this.cfg.leaseMs).then(
      ({ live, nowMs }) => {
        this.inFlight = false;
        if (this.stopped) return;
        this.reachable = true;
        this.lastError = "";
        this.replicas = live.includes(this.member) ? live.length : live.length + 1;
        this.target = shareOf(this.budget, live, this.member, Math.floor(nowMs / this.cfg.turnMs));
        this.warnRotation();
        const next = this.gate.next(this.sem.cap(), this.target, performance.now());
        if (next !== this.sem.cap()) this.sem.setCap(next);
      },
      (err: unknown) => {
        this.inFlight = false;
        if (this.stopped) return;
        this.reachable = false;
        this.lastError = err instanceof Error ? err.message : String(err);
        this.gate.reset();
      },
    );
  }

  private warnRotation(): void {
    const rotating = this.replicas > this.budget;
    if (rotating && !this.rotating) {
      const n = this.replicas;
      process.emitWarning(
        `semscope: ${n} live replicas share a budget of ${this.budget} (${this.cfg.key}): each holds 1 permit for ${this.cfg.turnMs} ms in turn and 0 for the rest; acquires wait for their turn`,
        { code: "SEMSCOPE_SHARE_ROTATION" },
      );
    }
    this.rotating = rotating;
  }
}
