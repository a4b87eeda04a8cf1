// Draws every visible sparkline in one animation frame. Rows hand over the element that holds
// their sparkline when they mount; the painter puts a canvas in it and the store's updates only
// mark the painter dirty. Per frame it redraws the canvases whose ring changed since their last
// draw, so 40 visible rows cost 40 short paths, and 460 rows off screen cost nothing.
import { cssVar } from "../charts/chart-theme.js";
import { cancelFrame, scheduleFrame } from "../charts/frame-scheduler.js";
import { drawSparkline, sizeCanvas, type SparkColors } from "../charts/sparkline.js";
import type { DashboardStore } from "../data/dashboard-store.js";

interface Canvas {
  canvas: HTMLCanvasElement;
  /** Taken once: getContext per draw shows up in profiles at 500 rows. */
  ctx: CanvasRenderingContext2D;
}

interface Slot extends Canvas {
  host: HTMLElement;
  /** The semaphore shown, null once its row let go (the host may be handed to another row). */
  key: string | null;
  drawn: number;
}

export const SPARK_WIDTH = 120;
export const SPARK_HEIGHT = 22;
/** Sparkline drawing per animation frame, in ms of script. */
const FRAME_BUDGET_MS = 4;
/** Canvases kept for reuse: a few screens of rows. */
const POOL_MAX = 160;

/**
 * Canvases of rows that went away, for the next rows, across painters: a list mounted again
 * (back from a detail view) takes the last list's canvases instead of allocating a backing
 * store per row, and the old ones are not left to the GC, whose canvas pre-finalizers made a
 * 20-30 ms pause in whatever the page did next (the next detail view opening).
 */
const pool: Canvas[] = [];

function takeCanvas(): Canvas | null {
  const reused = pool.pop();
  if (reused !== undefined) {
    // Another row's line until this row's first draw: blank instead.
    reused.ctx.clearRect(0, 0, reused.canvas.width, reused.canvas.height);
    return reused;
  }
  const canvas = document.createElement("canvas");
  canvas.className = "spark";
  canvas.setAttribute("aria-hidden", "true");
  sizeCanvas(canvas, SPARK_WIDTH, SPARK_HEIGHT);
  const ctx = canvas.getContext("2d");
  return ctx === null ? null : { canvas, ctx };
}

function giveBack(c: Canvas): void {
  if (pool.length < POOL_MAX) pool.push({ canvas: c.canvas, ctx: c.ctx });
}

export class SparklinePainter {
  private readonly byKey = new Map<string, Slot>();
  /** Per host element, not per key: the list hands a row's DOM from row to row as it scrolls. */
  private readonly byHost = new Map<HTMLElement, Slot>();
  /** Slots whose row let go: back to the pool unless another row took the host meanwhile. */
  private loose: Slot[] = [];
  private colors: SparkColors | null = null;

  constructor(private readonly store: DashboardStore) {}

  /** A row's sparkline holder (null: the row with this key let go of it). */
  attach(key: string, host: HTMLElement | null): void {
    if (host === null) {
      const slot = this.byKey.get(key);
      if (slot === undefined) return;
      this.byKey.delete(key);
      slot.key = null;
      this.loose.push(slot);
      this.invalidate();
      return;
    }
    let slot = this.byHost.get(host);
    if (slot === undefined) {
      const c = takeCanvas();
      if (c === null) return;
      host.appendChild(c.canvas);
      slot = { ...c, host, key: null, drawn: -1 };
      this.byHost.set(host, slot);
    }
    if (slot.key !== null && slot.key !== key) this.byKey.delete(slot.key);
    slot.key = key;
    slot.drawn = -1;
    this.byKey.set(key, slot);
    this.invalidate();
  }

  /** Re-read colours (the theme changed) and redraw everything. */
  retheme(): void {
    this.colors = null;
    for (const s of this.byKey.values()) s.drawn = -1;
    this.invalidate();
  }

  invalidate = (): void => scheduleFrame(this.paint);

  /** The list is gone: every canvas goes back to the pool. */
  dispose(): void {
    cancelFrame(this.paint);
    for (const s of this.byHost.values()) giveBack(s);
    this.byHost.clear();
    this.byKey.clear();
    this.loose = [];
  }

  private release(): void {
    for (const s of this.loose) {
      // Handed to the row that replaced it, or still on the page: not free.
      if (s.key !== null || s.host.isConnected || this.byHost.get(s.host) !== s) continue;
      this.byHost.delete(s.host);
      giveBack(s);
    }
    this.loose = [];
  }

  private readonly paint = (): void => {
    if (this.loose.length > 0) this.release();
    const colors = (this.colors ??= {
      line: cssVar("--c-spark"),
      fill: cssVar("--c-spark-fill"),
      wait: cssVar("--c-spark-wait"),
      cap: cssVar("--border-strong"),
    });
    const start = performance.now();
    for (const [key, slot] of this.byKey) {
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
