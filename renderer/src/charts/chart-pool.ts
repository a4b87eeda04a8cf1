// Detail charts outlive their detail view: when a view closes, each chart is taken off the page
// and kept (one per spec), and the next view shows it again with its own feed. Opening a view
// then costs a redraw, not a new uPlot (its DOM, a canvas context, a backing store the first
// clear allocates), and closing one leaves no canvases for the GC to finalize.
import type uPlot from "uplot";
import { releaseCanvasesLater } from "./canvas-release.js";
import type { ChartFeed, ChartSpec } from "./chart-spec.js";

/** What a chart's options read at draw time: swapped when the chart moves to another view. */
export interface ChartBinding {
  feed: ChartFeed;
  /** Past creation: uPlot calls hooks while it is still being built. */
  ready: boolean;
  /** The colour scheme its colours were read in (they are baked into the options). */
  dark: boolean;
}

/** A feed with nothing: what a kept chart points at, so it holds no view's data alive. */
export const IDLE_FEED: ChartFeed = {
  subscribe: () => () => undefined,
  version: () => 0,
  ready: () => false,
  data: (columns) => [[], ...columns.map(() => [])] as unknown as uPlot.AlignedData,
  xRange: () => null,
  markers: () => [],
  levels: () => [],
};

const darkQuery = typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null;

export function schemeIsDark(): boolean {
  return darkQuery?.matches ?? false;
}

interface Kept {
  plot: uPlot;
  binding: ChartBinding;
}

const kept = new Map<ChartSpec, Kept>();

/** Destroys a chart and frees its canvases soon after (canvas-release.ts). */
export function destroyPlot(plot: uPlot): void {
  const canvases = [...plot.root.querySelectorAll("canvas")];
  plot.destroy();
  releaseCanvasesLater(canvases);
}

/** The kept chart for this spec, if its colours are still the scheme's; it is the caller's now. */
export function takeChart(spec: ChartSpec): Kept | undefined {
  const k = kept.get(spec);
  if (k === undefined) return undefined;
  kept.delete(spec);
  if (k.binding.dark === schemeIsDark()) return k;
  destroyPlot(k.plot);
  return undefined;
}

/** Takes a chart off the page and keeps it for the next view of this spec (the newest one wins). */
export function keepChart(spec: ChartSpec, plot: uPlot, binding: ChartBinding): void {
  binding.feed = IDLE_FEED;
  // No mouseleave comes for a chart taken off the page: its cursor would show in the next view.
  plot.setCursor({ left: -10, top: -10 }, false);
  plot.root.remove();
  const old = kept.get(spec);
  if (old !== undefined && old.plot !== plot) destroyPlot(old.plot);
  kept.set(spec, { plot, binding });
}

