// Export of one chart: PNG from its canvas (canvas.toBlob, with the title and legend drawn in,
// on the panel colour, since the canvas itself is transparent and its legend is HTML; drawn
// again at 2x on a screen of lower resolution), and its
// data as CSV (logic/csv.ts). Both are handed to the browser as a download.
import { chartCsv, exportFileName } from "../logic/csv.js";
import { chartColors, cssVar } from "./chart-theme.js";
import { renderScaled, type ChartHandle } from "./uplot-chart.js";

function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.rel = "noopener";
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoked later: some browsers read the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Exports are drawn at least this many device pixels per CSS pixel, whatever the screen's. */
export const EXPORT_MIN_PIXEL_RATIO = 2;

export async function chartPngBlob(h: ChartHandle, subtitle: string): Promise<Blob> {
  const k = Math.max(1, Math.ceil(EXPORT_MIN_PIXEL_RATIO / devicePixelRatio));
  const scaled = k > 1 ? renderScaled(h, k) : null;
  try {
    // uPlot sizes and draws a new chart in a microtask after it is built.
    if (scaled !== null) await new Promise<void>((r) => queueMicrotask(r));
    return await drawPng(h, scaled?.canvas ?? h.plot.ctx.canvas, subtitle);
  } finally {
    scaled?.dispose();
  }
}

function drawPng(h: ChartHandle, src: HTMLCanvasElement, subtitle: string): Promise<Blob> {
  const dpr = src.width / Math.max(1, h.plot.width);
  if (!(dpr >= 1)) return Promise.reject(new Error(`chart not drawn yet (${src.width} px wide)`));
  const c = chartColors();
  const header = Math.round(46 * dpr);
  const out = document.createElement("canvas");
  out.width = src.width + Math.round(16 * dpr);
  out.height = src.height + header + Math.round(10 * dpr);
  const ctx = out.getContext("2d");
  if (ctx === null) return Promise.reject(new Error("no 2d context"));
  ctx.fillStyle = c.panel;
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.fillStyle = c.text;
  ctx.font = `600 ${13 * dpr}px ${c.font}`;
  ctx.textBaseline = "top";
  ctx.fillText(h.spec.title, 10 * dpr, 8 * dpr);
  // Measured in the title's own font: measured in the subtitle's, it came out short and the
  // subtitle was drawn over the title.
  const titleWidth = ctx.measureText(h.spec.title).width;
  ctx.font = `${11 * dpr}px ${c.font}`;
  ctx.fillStyle = c.axis;
  ctx.fillText(subtitle, 10 * dpr + titleWidth + 12 * dpr, 10 * dpr);
  let x = 10 * dpr;
  for (const s of h.spec.series) {
    ctx.fillStyle = cssVar(s.color);
    ctx.fillRect(x, 30 * dpr, 12 * dpr, 3 * dpr);
    x += 16 * dpr;
    ctx.fillStyle = c.text;
    ctx.fillText(s.label, x, 26 * dpr);
    x += ctx.measureText(s.label).width + 14 * dpr;
  }
  ctx.drawImage(src, Math.round(8 * dpr), header);
  return new Promise((resolve, reject) => out.toBlob((b) => (b === null ? reject(new Error("toBlob failed")) : resolve(b)), "image/png"));
}

export async function exportPng(h: ChartHandle, nameParts: readonly string[], subtitle: string): Promise<void> {
  download(await chartPngBlob(h, subtitle), exportFileName([...nameParts, h.spec.title], Date.now(), "png"));
}

export function chartCsvText(h: ChartHandle): string {
  const data = h.feed.data(h.spec.series.map((s) => s.column));
  const t = data[0] as ArrayLike<number>;
  return chartCsv(
    t,
    h.spec.series.map((s, i) => ({ label: s.label, values: data[i + 1] as ArrayLike<number | null> })),
  );
}

export function exportCsv(h: ChartHandle, nameParts: readonly string[]): void {
  download(new Blob([chartCsvText(h)], { type: "text/csv;charset=utf-8" }), exportFileName([...nameParts, h.spec.title], Date.now(), "csv"));
}
