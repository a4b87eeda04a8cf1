// One uPlot per mount. The chart is created in an effect (never during render), fed by its
// feed's arrays with setData at most once per animation frame through the shared scheduler,
// and resized by a ResizeObserver in the same frame loop. React re-renders never touch it.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { fmtClock, fmtCount, fmtDuration, fmtRate, fmtTimeTick, isUtcClock } from "../logic/format.js";
import type { ChartFeed, ChartSpec, Marker, Unit } from "./chart-spec.js";
import { chartColors, cssVar, withAlpha } from "./chart-theme.js";
import { keepChart, schemeIsDark, takeChart, type ChartBinding } from "./chart-pool.js";
import { cancelFrame, claimHeavyWork, scheduleFrame } from "./frame-scheduler.js";
import { offscreenHost } from "./offscreen-host.js";

export interface ChartHandle {
  spec: ChartSpec;
  plot: uPlot;
  feed: ChartFeed;
}

function fmtValue(unit: Unit, v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  if (unit === "ms") return fmtDuration(v);
  if (unit === "rate") return fmtRate(v);
  return fmtCount(v);
}

/**
 * The ticks an axis drew, on the chart's element (`data-ticks-x`, `data-ticks-y`, `data-ticks-y2`):
 * the canvas's labels in words, for whoever reads the page rather than its pixels; and the time
 * axis's printed labels (`data-ticks-x-labels`, "|"-separated, "" where a tick goes unlabelled).
 */
function noteTicks(u: uPlot, axis: "ticksX" | "ticksY" | "ticksY2" | "ticksXLabels", splits: readonly (number | string)[]): void {
  const text = splits.join(axis === "ticksXLabels" ? "|" : " ");
  if (u.root.dataset[axis] !== text) u.root.dataset[axis] = text;
}

/**
 * Dates for the time axis's splits, in the zone times are said in (format.ts): read at each draw,
 * so a kept chart follows. UTC in a replay, where a local split would fall on a local hour.
 */
function zonedDate(ms: number): Date {
  return isUtcClock() ? uPlot.tzDate(new Date(ms), "Etc/UTC") : new Date(ms);
}

function axisValues(unit: Unit): uPlot.Axis.Values {
  return (u, splits, axisIdx) => {
    noteTicks(u, axisIdx === 1 ? "ticksY" : "ticksY2", splits);
    return splits.map((v) => (unit === "ms" ? fmtDuration(v) : fmtCount(v)));
  };
}

/**
 * Time ticks per chart width: the x axis's spacing is this share of the plot, so charts of
 * different widths (one with a second y axis beside one without) pick the same times.
 */
const X_TICKS = 6;
/** Below this spacing a chart is too narrow to share its neighbours' ticks: it takes fewer. */
const X_TICK_MIN_PX = 50;

/** Markers closer than this (CSS px) are drawn as one, named by their count. */
export const MARKER_MERGE_PX = 5;

interface MarkerGroup {
  x: number;
  markers: Marker[];
}

/** The markers drawn on chart `chartId`: those for every chart and its own. */
function markersOf(markers: readonly Marker[], chartId: string): readonly Marker[] {
  return markers.every((m) => m.chartId === undefined) ? markers : markers.filter((m) => m.chartId === undefined || m.chartId === chartId);
}

/** A group's label: the one marker's, else how many (alerts, limit changes, or both). */
function groupLabel(g: MarkerGroup): string {
  if (g.markers.length === 1) return g.markers[0].label;
  const limits = g.markers.filter((m) => m.kind === "limit").length;
  return limits === 0 ? `${g.markers.length} alerts` : limits === g.markers.length ? `${limits} changes` : `${g.markers.length} events`;
}

/** Markers sorted by time, grouped where their lines would fall within MARKER_MERGE_PX of each other. */
function groupMarkers(u: uPlot, markers: readonly Marker[], px: number): MarkerGroup[] {
  const groups: MarkerGroup[] = [];
  for (const m of [...markers].sort((a, b) => a.t - b.t)) {
    const x = u.valToPos(m.t, "x", true);
    const last = groups[groups.length - 1];
    if (last !== undefined && x - last.x < MARKER_MERGE_PX * px) last.markers.push(m);
    else groups.push({ x, markers: [m] });
  }
  return groups;
}

/** Counts and rates start at 0, with headroom for the marker labels; a flat zero line still gets a scale. */
function yRange(_u: uPlot, _min: number, max: number): uPlot.Range.MinMax {
  const top = Number.isFinite(max) && max > 0 ? max * 1.15 : 1;
  return [0, top];
}

function showLatest(u: uPlot): void {
  const n = u.data[0]?.length ?? 0;
  if (n > 0) u.setLegend({ idx: n - 1 }, false);
}

/** Each plot's tooltip, and whether the pointer is over that plot (synced charts move their cursors too). */
const tips = new WeakMap<uPlot, { el: HTMLDivElement; hovered: boolean }>();

function attachTip(u: uPlot): void {
  const el = document.createElement("div");
  el.className = "chart-tip";
  el.hidden = true;
  u.over.appendChild(el);
  const tip = { el, hovered: false };
  tips.set(u, tip);
  u.over.addEventListener("mouseenter", () => (tip.hovered = true));
  u.over.addEventListener("mouseleave", () => {
    tip.hovered = false;
    el.hidden = true;
  });
}

/** Markers within this many CSS pixels of the cursor are named in the tooltip... */
const MARKER_HOVER_PX = 6;
/** ...the latest this many of them. */
const MARKER_TIP_LINES = 6;

/**
 * The tooltip at the cursor, on the chart under the pointer only: the time, each shown series'
 * value, and the alerts whose markers are under the cursor (their hover text).
 */
function updateTip(u: uPlot, spec: ChartSpec, colors: readonly string[], markers: readonly Marker[]): void {
  const tip = tips.get(u);
  const idx = u.cursor.idx;
  const left = u.cursor.left ?? -1;
  const top = u.cursor.top ?? -1;
  if (tip === undefined) return;
  if (!tip.hovered || idx === null || idx === undefined || left < 0) {
    tip.el.hidden = true;
    return;
  }
  const lines: [string, string, string | null][] = [["", `${fmtClock(u.data[0][idx])}${isUtcClock() ? " UTC" : ""}`, null]];
  const near = markersOf(markers, spec.id).filter((m) => Math.abs(u.valToPos(m.t, "x") - left) <= MARKER_HOVER_PX).sort((a, b) => a.t - b.t);
  // An adaptive limit may change every tenth of a second: the tip names the latest few.
  if (near.length > MARKER_TIP_LINES) lines.push(["", `${near.length - MARKER_TIP_LINES} earlier here`, "marker"]);
  for (const m of near.slice(-MARKER_TIP_LINES)) lines.push(["", m.title ?? m.label, m.kind === "limit" ? "limit" : "marker"]);
  spec.series.forEach((s, i) => {
    const series = u.series[i + 1];
    if (series.show === false) return;
    const unit = s.unit ?? (s.scale === "y2" ? (spec.y2 ?? spec.y) : spec.y);
    lines.push([s.label, fmtValue(unit, u.data[i + 1][idx]), colors[i]]);
  });
  tip.el.replaceChildren(
    ...lines.map(([label, value, color]) => {
      const row = document.createElement("div");
      row.className = color === "marker" ? "tip-marker" : color === "limit" ? "tip-marker tip-limit" : "tip-row";
      if (color !== null && color !== "marker" && color !== "limit") {
        const dot = document.createElement("span");
        dot.className = "tip-dot";
        dot.style.background = color;
        row.append(dot);
      }
      row.append(label === "" ? value : `${label} ${value}`);
      return row;
    }),
  );
  tip.el.hidden = false;
  // Beside the cursor, flipped to its left near the right edge.
  const w = tip.el.offsetWidth;
  const x = left + 12 + w > u.over.clientWidth ? left - 12 - w : left + 12;
  tip.el.style.transform = `translate(${Math.max(0, x)}px, ${Math.max(0, Math.min(top + 12, u.over.clientHeight - tip.el.offsetHeight))}px)`;
}

/** Options whose hooks read the feed through `bound`, so a kept chart can serve another view. */
function makeOptions(spec: ChartSpec, bound: ChartBinding, width: number, k = 1): uPlot.Options {
  // k: every size times k, for an export drawn at k times the screen's resolution.
  const c = chartColors();
  const font = `${11 * k}px ${c.font}`;
  const px = devicePixelRatio * k;
  const axis = (scale: string, unit: Unit, side: 1 | 3): uPlot.Axis => ({
    scale,
    side,
    stroke: c.axis,
    font,
    size: 52 * k,
    gap: 4 * k,
    grid: side === 3 ? { stroke: c.grid, width: 1 } : { show: false },
    ticks: { show: false },
    values: axisValues(unit),
    // Counts are whole: no tick at 0.5 or 1.5 permits.
    ...(unit === "count" ? { incrs: [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 100_000, 1_000_000] } : {}),
  });
  const colors = spec.series.map((s) => cssVar(s.color));
  const series: uPlot.Series[] = [
    { label: "Time", value: (_u, v) => (v === null ? "—" : fmtClock(v)) },
    ...spec.series.map((s, i): uPlot.Series => {
      const color = colors[i];
      const unit = s.unit ?? (s.scale === "y2" ? (spec.y2 ?? spec.y) : spec.y);
      return {
        label: s.label,
        scale: s.scale ?? "y",
        stroke: color,
        width: (s.width ?? 1.5) * k,
        ...(s.dash !== undefined ? { dash: s.dash.map((d) => d * k) } : {}),
        ...(s.fill === true ? { fill: withAlpha(color, 0.12) } : {}),
        points: { show: false },
        value: (_u, v) => fmtValue(unit, v),
      };
    }),
  ];
  const axes: uPlot.Axis[] = [
    {
      stroke: c.axis,
      font,
      grid: { stroke: c.grid, width: 1 },
      ticks: { show: false },
      size: 26 * k,
      gap: 4 * k,
      space: (_u, _axis, _min, _max, dim) => Math.max(X_TICK_MIN_PX * k, dim / X_TICKS),
      // A tick at the very left would print over the y axis's labels: it goes unlabelled.
      values: (u, splits, _axis, _space, incr) => {
        noteTicks(u, "ticksX", splits);
        const labels = splits.map((v) => (u.valToPos(v, "x") < 16 * k ? "" : fmtTimeTick(v, incr)));
        noteTicks(u, "ticksXLabels", labels);
        return labels;
      },
    },
    axis("y", spec.y, 3),
  ];
  if (spec.y2 !== undefined) axes.push(axis("y2", spec.y2, 1));

  return {
    width,
    height: spec.height,
    ms: 1,
    tzDate: zonedDate,
    pxAlign: 0,
    series,
    axes,
    scales: {
      x: { time: true, range: (_u, min, max) => bound.feed.xRange() ?? [min, max] },
      y: { range: yRange },
      ...(spec.y2 !== undefined ? { y2: { range: yRange } } : {}),
    },
    // A marker in each series' colour (the stylesheet draws markers as bars, without uPlot's
    // border, which is where a line series had its colour); clicking an entry toggles its series.
    legend: { show: k === 1, live: true, markers: { width: 0, fill: (_u, i) => (i > 0 ? colors[i - 1] : "transparent") } },
    cursor: { sync: { key: "semscope-detail" }, drag: { x: false, y: false }, points: { size: 6 } },
    padding: [10 * k, 18 * k, 0, 0],
    hooks: {
      init: [(u) => attachTip(u)],
      // Away from the cursor, the legend reads the latest point: a live readout, not dashes.
      setCursor: [
        (u) => {
          // uPlot sets the cursor while it is still being built: too early for setLegend.
          if (bound.ready && (u.cursor.idx === null || u.cursor.idx === undefined)) showLatest(u);
          updateTip(u, spec, colors, bound.feed.markers());
        },
      ],
      draw: [
        (u) => {
          const ctx = u.ctx;
          const { left, top, width: w, height: h } = u.bbox;
          ctx.save();
          ctx.lineWidth = Math.max(1, px);
          // uPlot leaves the y axis's right alignment set.
          ctx.textAlign = "left";
          ctx.textBaseline = "alphabetic";
          for (const level of bound.feed.levels()) {
            if (level.chartId !== spec.id) continue;
            const y = u.valToPos(level.value, "y", true);
            if (!(y >= top && y <= top + h)) continue;
            ctx.strokeStyle = c.budget;
            ctx.setLineDash([6 * px, 4 * px]);
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + w, y);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.fillStyle = c.budget;
            ctx.font = `${11 * px}px ${c.font}`;
            ctx.fillText(level.label, left + 6 * px, y - 4 * px);
          }
          // One line per group of markers (at 24 h, alerts minutes apart fall on neighbouring
          // pixels and drew a thick bar), labelled on every chart; a label that would print over
          // the one before it is left out.
          let labelEnd = -Infinity;
          const drawn: string[] = [];
          for (const g of groupMarkers(u, markersOf(bound.feed.markers(), spec.id), px)) {
            const x = g.x;
            if (!(x >= left && x <= left + w)) continue;
            // A group of limit changes only is drawn in the cap's colour; one with an alert in it, as an alert.
            const colour = g.markers.every((m) => m.kind === "limit") ? c.limit : c.marker;
            ctx.strokeStyle = colour;
            ctx.setLineDash([4 * px, 3 * px]);
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + h);
            ctx.stroke();
            ctx.setLineDash([]);
            const label = groupLabel(g);
            ctx.font = `${10.5 * px}px ${c.font}`;
            const labelWidth = ctx.measureText(label).width;
            const shown = x >= labelEnd && x + labelWidth + 8 * px <= left + w;
            drawn.push(`${Math.round((x - left) / px)}:${g.markers.length}:${shown ? label : ""}`);
            if (!shown) continue;
            // On a chip of the panel colour, so the label reads over lines and the cap.
            ctx.fillStyle = c.panel;
            ctx.fillRect(x + 2 * px, top + 1 * px, labelWidth + 6 * px, 14 * px);
            labelEnd = x + labelWidth + 12 * px;
            ctx.fillStyle = colour;
            ctx.fillText(label, x + 5 * px, top + 12 * px);
          }
          // As the ticks: what the markers drew (x in CSS px from the plot's left, how many, the label).
          const markersText = drawn.join(" | ");
          if (u.root.dataset.markers !== markersText) u.root.dataset.markers = markersText;
          ctx.restore();
        },
      ],
    },
  };
}

/**
 * Draws each spec once, offscreen, on a few synthetic points, and keeps the charts for the first
 * detail view (chart-pool.ts). That view otherwise runs uPlot and our options, axes and draw hooks
 * cold (parsed and compiled as they go): tens of milliseconds on the very open a user waits for.
 * Call it when the page is idle; each chart is its own task, so none of them is long. `done`
 * runs after the last one.
 */
export function warmCharts(specs: readonly ChartSpec[], idle: (fn: () => void) => void, done?: () => void): void {
  const host = offscreenHost();
  // The detail view's own grid (detail.css), so each chart is warmed at the width a detail view
  // gives it and the first view reuses it without resizing its canvas.
  const charts = document.createElement("div");
  charts.className = "charts";
  const body = document.createElement("div");
  body.className = "detail-body";
  body.append(charts, document.createElement("aside"));
  host.append(body);
  const slots = specs.map(() => {
    const card = document.createElement("div");
    card.className = "card chart-card";
    const plotEl = document.createElement("div");
    plotEl.className = "chart-plot";
    card.append(plotEl);
    charts.append(card);
    return plotEl;
  });
  const n = 120;
  const t0 = Date.now() - n * 1000;
  const t = Array.from({ length: n }, (_, i) => t0 + i * 1000);
  const column = (k: number) => Array.from({ length: n }, (_, i) => 5 + 4 * Math.sin(i / (7 + k)));
  const feed: ChartFeed = {
    subscribe: () => () => undefined,
    version: () => 0,
    ready: () => true,
    data: (columns) => [t, ...columns.map((_, k) => column(k))] as unknown as uPlot.AlignedData,
    xRange: () => [t[0], t[n - 1]],
    markers: () => [{ t: t[n >> 1], label: "warm" }],
    levels: () => [],
  };
  const queue = specs.map((spec, i) => ({ spec, el: slots[i] }));
  const next = (): void => {
    const item = queue.shift();
    if (item === undefined) {
      host.remove();
      done?.();
      return;
    }
    const { spec, el } = item;
    try {
      if (host.parentNode === null) document.body.appendChild(host);
      const binding: ChartBinding = { feed, ready: true, dark: schemeIsDark() };
      // Read in an idle callback, on a page at rest: the layout it forces is this host's alone.
      const width = Math.max(200, el.clientWidth);
      const plot = new uPlot(makeOptions(spec, binding, width), feed.data(spec.series.map((s) => s.column)), el);
      // A live update's path too: setData and a legend readout.
      plot.setData(feed.data(spec.series.map((s) => s.column)));
      showLatest(plot);
      // Kept: the first detail view shows this chart rather than building its own.
      keepChart(spec, plot, binding);
    } catch (err) {
      // Only ever a head start: a failure here must not be the user's problem.
      console.warn("semscope: chart warm-up failed", err);
      queue.length = 0;
    }
    idle(next);
  };
  idle(next);
}

/** What an axis counts, in its unit: "permits", "per second", "duration (ms · s)". */
export function axisUnit(label: string, unit: Unit): string {
  return unit === "ms" ? `${label} (ms · s)` : label;
}

/**
 * The chart drawn again, offscreen, at `k` times its size (fonts, lines and gaps with it) over
 * the same data and time range: for a PNG sharper than the screen's. The caller draws the
 * canvas, then calls `dispose`.
 */
export function renderScaled(h: ChartHandle, k: number): { canvas: HTMLCanvasElement; dispose: () => void } {
  const host = offscreenHost();
  const el = document.createElement("div");
  host.append(el);
  if (host.parentNode === null) document.body.appendChild(host);
  const { min, max } = h.plot.scales.x;
  const src = h.feed;
  const feed: ChartFeed = {
    subscribe: () => () => undefined,
    version: () => src.version(),
    ready: () => true,
    data: (columns) => src.data(columns),
    xRange: () => (min !== undefined && max !== undefined ? [min, max] : src.xRange()),
    markers: () => src.markers(),
    levels: () => src.levels(),
  };
  const binding: ChartBinding = { feed, ready: true, dark: schemeIsDark() };
  const opts = { ...makeOptions(h.spec, binding, h.plot.width * k, k), height: h.spec.height * k };
  const plot = new uPlot(opts, h.feed.data(h.spec.series.map((s) => s.column)), el);
  return {
    canvas: plot.ctx.canvas,
    dispose: () => {
      plot.destroy();
      host.remove();
    },
  };
}

export interface UplotChartProps {
  spec: ChartSpec;
  feed: ChartFeed;
  /** Bumped when the system theme flips: the chart is re-created with the new colours. */
  themeKey: string;
  onReady?: (handle: ChartHandle | null) => void;
}

export function UplotChart({ spec, feed, themeKey, onReady }: UplotChartProps) {
  const ref = useRef<HTMLDivElement>(null);
  const readyRef = useRef(onReady);
  readyRef.current = onReady;

  useEffect(() => {
    const el = ref.current;
    if (el === null) return;
    const columns = spec.series.map((s) => s.column);
    let binding: ChartBinding | null = null;
    let plot: uPlot | null = null;
    let drawn = -1;
    // Unknown until the chart is created (or the observer reports): reading clientWidth here, in
    // the mount's effect, forced a layout of the whole new page before anything was drawn (the
    // largest single cost of opening a detail view). At creation, one chart per frame, the
    // frame's own layout has usually run and the read is free.
    let width = -1;
    // Created with its first data, so the first draw is the real one (an empty chart drawn and
    // then redrawn costs two passes over axes and fonts).
    const create = (): void => {
      if (width < 0) width = Math.max(200, el.clientWidth);
      drawn = feed.version();
      const k = takeChart(spec);
      let p: uPlot;
      if (k !== undefined) {
        // The last view's chart: same DOM and canvas, this view's data.
        binding = k.binding;
        binding.feed = feed;
        p = k.plot;
        el.appendChild(p.root);
        if (p.width !== width) p.setSize({ width, height: spec.height });
        p.setData(feed.data(columns));
      } else {
        binding = { feed, ready: false, dark: schemeIsDark() };
        p = new uPlot(makeOptions(spec, binding, width), feed.data(columns), el);
      }
      plot = p;
      binding.ready = true;
      showLatest(p);
      performance.mark("semscope:chart-created");
      readyRef.current?.({ spec, plot: p, feed });
    };
    const draw = (): void => {
      if (!feed.ready()) return;
      if (plot === null) {
        if (claimHeavyWork()) create();
        else scheduleFrame(draw);
        return;
      }
      if (width > 0 && plot.width !== width) plot.setSize({ width, height: spec.height });
      const v = feed.version();
      if (v === drawn) return;
      drawn = v;
      plot.setData(feed.data(columns));
      if (plot.cursor.idx === null || plot.cursor.idx === undefined || (plot.cursor.left ?? -1) < 0) showLatest(plot);
    };
    const unsubscribe = feed.subscribe(() => {
      // The first chart to get its data is created at once (nothing of it is on screen yet, so
      // this is its one and only draw); the others, and every later update, go through the frame.
      if (plot === null && feed.ready() && claimHeavyWork()) create();
      else scheduleFrame(draw);
    });
    const observer = new ResizeObserver((entries) => {
      const w = Math.floor(entries[entries.length - 1].contentRect.width);
      if (w === width) return;
      width = Math.max(200, w);
      scheduleFrame(draw);
    });
    observer.observe(el);
    return () => {
      unsubscribe();
      observer.disconnect();
      cancelFrame(draw);
      if (plot !== null && binding !== null) {
        readyRef.current?.(null);
        keepChart(spec, plot, binding);
      }
    };
  }, [spec, feed, themeKey]);

  return <div className="chart-plot" ref={ref} style={{ minHeight: spec.height + 34 }} />;
}
