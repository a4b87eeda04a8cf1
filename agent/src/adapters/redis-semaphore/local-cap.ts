// The local cap used while Redis is down (onRedisDown: "local"): a plain FIFO of waiters on a
// count, each bounded by the semaphore's own acquireTimeout and its abort signal.
import { abortReason } from "../../errors.js";

interface LocalWaiter {
  readonly weight: number;
  resolve(granted: boolean): void;
  reject(err: unknown): void;
  cleanup(): void;
}

export class LocalCap {
  private used = 0;
  private readonly queue: LocalWaiter[] = [];

  constructor(readonly permits: number) {}

  get inUse(): number {
    return this.used;
  }

  /** true once `weight` permits are taken; false when `timeoutMs` passes first; rejects with the signal's reason. */
  acquire(timeoutMs: number, signal?: AbortSignal, weight = 1): Promise<boolean> {
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    if (this.used + weight <= this.permits && this.queue.length === 0) {
      this.used += weight;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve, reject) => {
      const w: LocalWaiter = {
        weight,
        resolve: (granted) => {
          w.cleanup();
          resolve(granted);
        },
        reject: (err) => {
          w.cleanup();
          reject(err);
        },
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
        },
      };
      const drop = () => {
        const i = this.queue.indexOf(w);
        if (i >= 0) this.queue.splice(i, 1);
        // A heavy head leaving may let lighter waiters behind it in.
        if (i === 0) this.grantHead();
      };
      const onAbort = () => {
        drop();
        w.reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        drop();
        w.resolve(false);
      }, Math.max(0, timeoutMs));
      timer.unref?.();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(w);
    });
  }

  release(weight = 1): void {
    this.used = Math.max(0, this.used - weight);
    this.grantHead();
  }

  /** First come, first served: the head is granted once its weight fits, and nobody passes it. */
  private grantHead(): void {
    for (let next = this.queue[0]; next !== undefined && this.used + next.weight <= this.permits; next = this.queue[0]) {
      this.queue.shift();
      this.used += next.weight;
      next.resolve(true);
    }
  }
}
