// Summary statistics over the per-round samples of one contender on one case.

export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** (max - min) / median: how much the rounds disagree; a large value means the median is shaky. */
  readonly spread: number;
  readonly samples: readonly number[];
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function summarize(xs: readonly number[]): Summary {
  const m = median(xs);
  const min = xs.length ? Math.min(...xs) : Number.NaN;
  const max = xs.length ? Math.max(...xs) : Number.NaN;
  return { median: m, min, max, spread: (max - min) / m, samples: xs };
}

/** Three significant digits at most, but never hide integer digits (1,234,567 stays whole). */
export function fmt(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return "-";
  const abs = Math.abs(x);
  if (abs >= 1000) return Math.round(x).toLocaleString("en-US");
  if (abs >= 100) return x.toFixed(0);
  if (abs >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

export function fmtRatio(x: number | undefined): string {
  return x === undefined || !Number.isFinite(x) ? "-" : `${x.toFixed(2)}x`;
}

export function fmtPct(x: number | undefined): string {
  return x === undefined || !Number.isFinite(x) ? "-" : `${(x * 100).toFixed(1)}%`;
}
