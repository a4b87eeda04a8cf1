// Fixed-length Float64Array slots, each a view into a slab shared with others, handed out and
// taken back: the open minute of every history (minute-tier.ts), a semaphore tracker's rule state
// and its first timeouts window (shared/alerts).
//
// Why: a Float64Array of its own is an ArrayBuffer of its own, allocated and zeroed outside the
// heap, which V8 tracks one by one (and counts towards the external memory that starts a full
// collection). A flood of new semaphores made thousands of them in one turn. A slot is a view
// into a slab allocated once, and a slot given back is handed out again first.
import { SLAB_BYTES, slabBuffer } from "./column-ring.js";

export class SlotPool {
  readonly slotsPerSlab: number;
  private readonly free: Float64Array[] = [];
  /** The slab slots are carved from, and how many it has handed out. */
  private slab: Float64Array | undefined = undefined;
  private carved = 0;
  private slabs = 0;

  /** `sharedSlabs`: see RowPool. */
  constructor(
    readonly slotLength: number,
    slabBytes = SLAB_BYTES,
    private readonly sharedSlabs = false,
  ) {
    if (!Number.isInteger(slotLength) || slotLength < 1) throw new RangeError(`slotLength must be an integer ≥ 1, got ${slotLength}`);
    this.slotsPerSlab = Math.max(1, Math.floor(slabBytes / (slotLength * Float64Array.BYTES_PER_ELEMENT)));
  }

  /** A slot: zeros if new, else as its last holder left it. */
  take(): Float64Array {
    const free = this.free.pop();
    if (free !== undefined) return free;
    if (this.slab === undefined || this.carved === this.slotsPerSlab) {
      const length = this.slotsPerSlab * this.slotLength;
      this.slab = new Float64Array(slabBuffer(length * Float64Array.BYTES_PER_ELEMENT, this.sharedSlabs), 0, length);
      this.carved = 0;
      this.slabs++;
    }
    const at = this.carved++ * this.slotLength;
    return this.slab.subarray(at, at + this.slotLength);
  }

  /** Takes a slot back (its holder no longer reads or writes it). */
  give(slot: Float64Array): void {
    this.free.push(slot);
  }

  /** Bytes of the slabs allocated, whether their slots are held or free. */
  bytes(): number {
    return this.slabs * this.slotsPerSlab * this.slotLength * Float64Array.BYTES_PER_ELEMENT;
  }

  /** Slots held now. */
  get held(): number {
    return (this.slabs === 0 ? 0 : (this.slabs - 1) * this.slotsPerSlab + this.carved) - this.free.length;
  }
}
