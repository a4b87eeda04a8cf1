// Which sample batches (by seq) an agent has had accepted: a bitmap over the last WINDOW seqs
// above a floor. Fixed memory per agent however long it runs; a seq below the floor is too old
// to tell and is treated as seen (at-least-once delivery re-sends oldest first, so a batch that
// old was either accepted long ago or is history the hub no longer wants).
export class SeqWindow {
  static readonly WINDOW = 4096;
  private floor = 0;
  private readonly bits = new Uint32Array(SeqWindow.WINDOW / 32);

  has(seq: number): boolean {
    if (seq < this.floor) return true;
    if (seq >= this.floor + SeqWindow.WINDOW) return false;
    const i = seq % SeqWindow.WINDOW;
    return (this.bits[i >>> 5] & (1 << (i & 31))) !== 0;
  }

  add(seq: number): void {
    if (seq < this.floor) return;
    if (seq >= this.floor + SeqWindow.WINDOW) this.advance(seq - SeqWindow.WINDOW + 1);
    const i = seq % SeqWindow.WINDOW;
    this.bits[i >>> 5] |= 1 << (i & 31);
  }

  /** Seqs below this are treated as seen. */
  get low(): number {
    return this.floor;
  }

  private advance(newFloor: number): void {
    if (newFloor - this.floor >= SeqWindow.WINDOW) {
      this.bits.fill(0);
    } else {
      // Each seq is cleared once as the floor passes it: amortised O(1) per add.
      for (let s = this.floor; s < newFloor; s++) {
        const i = s % SeqWindow.WINDOW;
        this.bits[i >>> 5] &= ~(1 << (i & 31));
      }
    }
    this.floor = newFloor;
  }
}
