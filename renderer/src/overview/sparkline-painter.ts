// Draws every visible sparkline in one animation frame. Rows hand over their canvas when they
// mount; the store's updates only mark the painter dirty. Per frame it redraws the canvases
// whose ring changed since their last draw, so 40 visible rows cost 40 short paths, and 460
// rows off screen cost nothing.
import { cssVar } from "../charts/chart-theme.js";
import { cancelFrame, scheduleFrame } from "../charts/frame-scheduler.js";
import { drawSparkline, sizeCanvas, type SparkColors } from "../charts/sparkline.js";
import type { FleetStore } from "../data/fleet-store.js";

interface Slot {
  /** Taken once: getContext per draw shows up in profiles at 500 rows. */
  ctx: CanvasRenderingContext2D;
  drawn: number;
}

export const SPARK_WIDTH = 120;
export const SPARK_HEIGHT = 22;
/** Sparkline drawing per animation frame, in ms of script. */
const FRAME_BUDGET_MS = 4;

export class SparklinePainter {
  private readonly slots = new Map<string, Slot>();
  /** Per canvas, not per key: the list hands a canvas from row to row as it scrolls. */
  private readonly contexts = new WeakMap<HTMLCanvasElement, CanvasRenderingContext2D>();
  private colors: SparkColors | null = null;

  constructor(private readonly store: FleetStore) {}

  attach(key: string, canvas: HTMLCanvasElement | null): void {
    if (canvas === null) {
      this.slots.delete(key);
      return;
    }
    let ctx = this.contexts.get(canvas);
    if (ctx === undefined) {
      sizeCanvas(canvas, SPARK_WIDTH, SPARK_HEIGHT);
      const c = canvas.getContext("2d");
      if (c === null) return;
      this.contexts.set(canvas, (ctx = c));
    }
    this.slots.set(key, { ctx, drawn: -1 });
    this.invalidate();
  }

  /** Re-read colours (the theme changed) and redraw everything. */
  retheme(): void {
    this.colors = null;
    for (const s of this.slots.values()) s.drawn = -1;
    this.invalidate();
  }

  invalidate = (): void => scheduleFrame(this.paint);

  dispose(): void {
    cancelFrame(this.paint);
    this.slots.clear();
  }

  private readonly paint = (): void => {
    const colors = (this.colors ??= {
      line: cssVar("--c-spark"),
      fill: cssVar("--c-spark-fill"),
      wait: cssVar("--c-spark-wait"),
      cap: cssVar("--border-strong"),
    });
    const start = performance.now();
    for (const [key, slot] of this.slots) {
      const ring = this.store.sparks.get(key);
      const v = ring?.version ?? 0;
      if (v === slot.drawn) continue;
      // A list just mounted has every canvas to draw, in the frame that also lays out and
      // paints the new page: past the budget, the rest (still marked undrawn) go in the next frame.
      if (performance.now() - start > FRAME_BUDGET_MS) {
        this.invalidate();
        return;
      }
      slot.drawn = v;
      drawSparkline(slot.ctx, ring, this.store.semaphore(key)?.cap ?? 0, colors);
    }
  };
}
