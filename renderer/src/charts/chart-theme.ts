// Chart colours come from the same CSS variables as the rest of the UI (app/theme.css), read
// when a chart is created; a change of system theme re-creates the charts.

// Read once per colour scheme: getComputedStyle on a page that just changed (a detail view
// mounting, a chart appended) recalculates the style of the whole document, and it was the
// largest single cost of opening a detail view in profiles. The variables change only with
// the scheme (theme.css switches on prefers-color-scheme).
const scheme = typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null;
const cache = new Map<string, string>();
let cachedDark: boolean | null = null;

export function cssVar(name: string, fallback = "#888"): string {
  const dark = scheme?.matches ?? false;
  if (dark !== cachedDark) {
    cache.clear();
    cachedDark = dark;
  }
  let v = cache.get(name);
  if (v === undefined) {
    v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    // Empty: the stylesheet may not be in yet; ask again next time.
    if (v !== "") cache.set(name, v);
  }
  return v === "" ? fallback : v;
}

/** `#rrggbb` (or anything else, unchanged) with an alpha, for area fills. */
export function withAlpha(color: string, alpha: number): string {
  const m = /^#([0-9a-f]{6})$/i.exec(color);
  if (m === null) return color;
  const n = parseInt(m[1], 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

export interface ChartColors {
  axis: string;
  grid: string;
  text: string;
  panel: string;
  marker: string;
  /** An adaptive limit's change markers: the cap line's colour. */
  limit: string;
  budget: string;
  font: string;
}

export function chartColors(): ChartColors {
  return {
    axis: cssVar("--c-axis"),
    grid: cssVar("--c-grid"),
    text: cssVar("--text"),
    panel: cssVar("--panel", "#fff"),
    marker: cssVar("--c-marker"),
    limit: cssVar("--c-cap"),
    budget: cssVar("--c-budget"),
    font: cssVar("--font", "sans-serif"),
  };
}
