// A chart's data as CSV (RFC 4180): one row per point, the time both as ISO 8601 (for people and
// spreadsheets) and as epoch ms (for scripts), then one column per series. Gap rows (every
// series null, inserted so uPlot breaks the line) are not data and are left out.

export interface CsvSeries {
  label: string;
  values: ArrayLike<number | null | undefined>;
}

/** Quote a field when it holds a comma, a quote, or a line break (quotes doubled). */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function num(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "";
  // Enough digits for any measured value without float noise such as 0.30000000000000004.
  return String(Math.round(v * 1e6) / 1e6);
}

export function chartCsv(t: ArrayLike<number>, series: readonly CsvSeries[]): string {
  const lines = [["time", "t_ms", ...series.map((s) => s.label)].map(csvField).join(",")];
  for (let i = 0; i < t.length; i++) {
    let any = false;
    const cells: string[] = [];
    for (const s of series) {
      const v = s.values[i];
      if (v !== null && v !== undefined) any = true;
      cells.push(num(v));
    }
    if (!any && series.length > 0) continue;
    lines.push([new Date(t[i]).toISOString(), String(Math.round(t[i])), ...cells].join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}

/** A file name safe on every OS: "checkout-web-1-db-in-use-20240301-140327.csv". */
export function exportFileName(parts: readonly string[], at: number, ext: string): string {
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  const base = parts
    .join("-")
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 120);
  return `${base || "semscope"}-${stamp}.${ext}`;
}
