// The local cap used while Redis is down (onRedisDown: "local"): a plain FIFO of waiters on a
// count, each bounded by the semaphore's own acquireTimeout and its abort signal.
import { abortReason } from "../../errors.js";

interface LocalWaiter {
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

  /** true once a permit is taken; false when `timeoutMs` passes first; rejects with the signal's reason. */
  acquire(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    if (this.used < this.permits && this.queue.length === 0) {
      this.used++;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve, reject) => {
      const w: LocalWaiter = {
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

  release(): void {
    const next = this.queue.shift();
    // Handed straight to the next waiter: the count does not change.
    if (next !== undefined) next.resolve(true);
    else if (this.used > 0) this.used--;
  }
}
