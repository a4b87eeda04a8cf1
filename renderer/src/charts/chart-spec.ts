// What a chart shows, declared as data (detail/chart-specs.ts), and what feeds it. A feed owns
// the columns; a chart only reads them once per frame when the feed's version moved.
import type uPlot from "uplot";

export type Unit = "count" | "ms" | "rate";

export interface SeriesSpec {
  label: string;
  /** Column in the feed. */
  column: string;
  /** CSS variable with the colour (app/theme.css). */
  color: string;
  width?: number;
  dash?: number[];
  /** Shade the area under the line. */
  fill?: boolean;
  /** "y" (left axis) or "y2" (right axis). */
  scale?: "y" | "y2";
  unit?: Unit;
}

export interface ChartSpec {
  id: string;
  title: string;
  /** What a reader should take from it, shown under the title. */
  subtitle?: string;
  series: SeriesSpec[];
  y: Unit;
  y2?: Unit;
  /** What the left (and right) axis counts, with its unit: "permits", "ms". */
  yLabel: string;
  y2Label?: string;
  height: number;
}

/** A vertical line at a moment (an alert raised, a change of an adaptive limit). */
export interface Marker {
  t: number;
  label: string;
  /** The hover text: which alert, when, what it said; for a limit, the change and its reason. */
  title?: string;
  /** "limit": a change of the cap, drawn in the cap's colour on `chartId`'s chart only. Default "alert": on every chart. */
  kind?: "alert" | "limit";
  /** The chart (ChartSpec.id) it is drawn on; absent: every chart. */
  chartId?: string;
}

/** A horizontal line at a level (a fleet budget). */
export interface Level {
  chartId: string;
  value: number;
  label: string;
}

export interface ChartFeed {
  /** Called whenever data, range or markers change; the chart redraws in the next frame. */
  subscribe(fn: () => void): () => void;
  version(): number;
  /** False until the first data arrived: a chart is created then, drawn once, with its data. */
  ready(): boolean;
  /** `[t, ...columns]`, references to the feed's arrays (uPlot copies nothing). */
  data(columns: readonly string[]): uPlot.AlignedData;
  /** The x range to show, or null to fit the data. */
  xRange(): [number, number] | null;
  markers(): readonly Marker[];
  levels(): readonly Level[];
}
