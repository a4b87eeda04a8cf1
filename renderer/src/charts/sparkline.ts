// One sparkline on a small canvas: permits in use as an area against the cap (the top of the
// box), with the queue as a line over it when anything waited. Drawn by the painter, never by
// React; a canvas is sized once for the device pixel ratio.
import type { SparkRing } from "../data/sparkline-ring.js";

export interface SparkColors {
  line: string;
  fill: string;
  wait: string;
  cap: string;
}

/** Span shown: the last minute of samples, so sparklines line up across rows. */
export const SPARK_SPAN_MS = 60_000;

export function sizeCanvas(canvas: HTMLCanvasElement, cssWidth: number, cssHeight: number): void {
  const dpr = Math.min(window.devicePixelRatio || 1, 3);
  const w = Math.round(cssWidth * dpr);
  const h = Math.round(cssHeight * dpr);
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
}

export function drawSparkline(ctx: CanvasRenderingContext2D, ring: SparkRing | undefined, cap: number, colors: SparkColors): void {
  const canvas = ctx.canvas;
  const w = canvas.width;
  const h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  if (ring === undefined || ring.length === 0) return;

  const pad = Math.max(1, Math.round(h * 0.08));
  const last = ring.t[ring.at(ring.length - 1)];
  const x0 = last - SPARK_SPAN_MS;
  let top = Math.max(cap, 1);
  let maxWait = 0;
  for (let i = 0; i < ring.length; i++) {
    const j = ring.at(i);
    if (ring.inUse[j] > top) top = ring.inUse[j];
    if (ring.waiters[j] > maxWait) maxWait = ring.waiters[j];
  }
  const xOf = (t: number): number => ((t - x0) / SPARK_SPAN_MS) * (w - 1);
  const yOf = (v: number): number => h - pad - (v / top) * (h - 2 * pad);

  // Cap: a hairline at the top of the scale.
  ctx.strokeStyle = colors.cap;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(0, yOf(cap) + 0.5);
  ctx.lineTo(w, yOf(cap) + 0.5);
  ctx.stroke();

  ctx.beginPath();
  let started = false;
  let firstX = 0;
  let lastX = 0;
  for (let i = 0; i < ring.length; i++) {
    const j = ring.at(i);
    if (ring.t[j] < x0) continue;
    const x = xOf(ring.t[j]);
    const y = yOf(ring.inUse[j]);
    if (!started) {
      ctx.moveTo(x, y);
      firstX = x;
      started = true;
    } else ctx.lineTo(x, y);
    lastX = x;
  }
  if (!started) return;
  ctx.lineWidth = Math.max(1, h / 22);
  ctx.strokeStyle = colors.line;
  ctx.stroke();
  ctx.lineTo(lastX, h);
  ctx.lineTo(firstX, h);
  ctx.closePath();
  ctx.fillStyle = colors.fill;
  ctx.fill();

  if (maxWait > 0) {
    // The queue on its own scale, in the lower half: its shape matters, not its height against N.
    const wy = (v: number): number => h - pad - (v / maxWait) * (h / 2 - pad);
    ctx.beginPath();
    started = false;
    for (let i = 0; i < ring.length; i++) {
      const j = ring.at(i);
      if (ring.t[j] < x0) continue;
      const x = xOf(ring.t[j]);
      if (!started) {
        ctx.moveTo(x, wy(ring.waiters[j]));
        started = true;
      } else ctx.lineTo(x, wy(ring.waiters[j]));
    }
    ctx.strokeStyle = colors.wait;
    ctx.lineWidth = Math.max(1, h / 26);
    ctx.stroke();
  }
}
