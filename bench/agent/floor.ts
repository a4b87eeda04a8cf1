// The floor: the least a correct FIFO counting semaphore can do. A counter, and a wait queue that is
// an array read from a moving head index (Array#shift would copy the whole queue on every hand-off).

export class FloorSemaphore {
  private free: number;
  private queue: Array<(() => void) | undefined> = [];
  private head = 0;

  constructor(permits: number) {
    this.free = permits;
  }

  acquire(): Promise<void> {
    // free > 0 implies an empty queue (release hands a permit straight to a waiter), so this cannot barge.
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.queue.push(resolve);
    });
  }

  release(): void {
    if (this.head === this.queue.length) {
      this.free++;
      return;
    }
    const next = this.queue[this.head]!;
    // Clear the slot so a granted waiter's closure can be collected before the queue compacts.
    this.queue[this.head++] = undefined;
    if (this.head === this.queue.length) {
      // Drained: reuse the array from the start, no copy needed.
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      // Compaction: once the dead prefix is at least half the array, copy the live tail out. Each
      // element is copied at most once per halving, so hand-off stays O(1) amortized.
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    next();
  }
}
