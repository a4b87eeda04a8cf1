// One reusable window for a reader that looks at a range, computes from it and keeps nothing of
// it: the hub's diagnoses, which read an alerted semaphore's 1 s tier every 5–30 s (three minutes
// of it when an incident begins). A fresh window per read is 27 Float64Arrays of ~180 rows
// (~40 KB) of garbage, for every alert being diagnosed.

import { createWindow, readWindowInto, type ColumnarWindow, type MutableWindow, type TierReader } from "./columnar-window.js";

export class WindowScratch {
  private win: MutableWindow<ColumnarWindow> | undefined;
  private capacity = 0;

  /**
   * The rows of `reader` with fromT ≤ t ≤ toT, as readWindow() gives them, written into storage
   * reused from call to call. Valid until the next read through this scratch; its columns may be
   * longer than `length`: read rows below `length` only.
   */
  read(reader: TierReader, fromT: number, toT: number): ColumnarWindow {
    return readWindowInto(reader, fromT, toT, (n) => this.storage(reader, n));
  }

  private storage(reader: TierReader, n: number): MutableWindow<ColumnarWindow> {
    if (this.win === undefined || n > this.capacity) {
      this.capacity = Math.max(n, 2 * this.capacity, 16);
      this.win = createWindow(reader.tier, this.capacity, false);
    }
    return this.win;
  }
}
