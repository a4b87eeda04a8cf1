// The diagnosis from a dashboard's chart columns: the detail view holds the same 1 s rows the hub
// diagnosed (history:get, live samples appended), with null rows where the line breaks. Read
// through diagnose() here, the Little's-law panel names the same cause and the same N as the
// alert's diagnosis for the same window: there is one computation of both.
import { diagnose, type Diagnosis, type DiagnosisContext, type DiagnosisSeries } from "./diagnose.js";

/** Chart columns aligned on `t` (null: a gap row, or a column the source lacks). */
export type DiagnosisColumns = { readonly [K in Exclude<keyof DiagnosisSeries, "length" | "t">]?: ArrayLike<number | null> };

/** How far back the hub's diagnosis reads before its moment (main/hub/core/alert-evidence.ts). */
export const DIAGNOSIS_READ_MS = 180_000;

const FIELDS = [
  "cap", "inUse", "waiters", "acquiredPerSec", "releasedPerSec", "timeoutsPerSec", "rejectionsPerSec", "abortsPerSec",
  "intervalMs", "holdCount", "holdP50", "holdP90", "holdP99", "waitCount", "waitP99",
] as const satisfies readonly (keyof DiagnosisColumns)[];
// Compile-time check that the list names every column diagnose() reads.
const _everyColumnListed: [Exclude<keyof DiagnosisColumns, (typeof FIELDS)[number]>] extends [never] ? true : false = true;

/**
 * The rows with `toT - DIAGNOSIS_READ_MS ≤ t ≤ toT` that carry a sample (an `inUse`), dense, as
 * diagnose() reads them; a column the source lacks reads 0.
 */
export function columnsSeries(t: ArrayLike<number>, cols: DiagnosisColumns, toT: number): DiagnosisSeries {
  const rows: number[] = [];
  const inUse = cols.inUse;
  for (let i = 0; i < t.length; i++) {
    if (t[i] < toT - DIAGNOSIS_READ_MS || t[i] > toT) continue;
    const u = inUse?.[i];
    if (u !== null && u !== undefined) rows.push(i);
  }
  const out: Record<string, number[]> = { t: rows.map((i) => t[i]) };
  for (const f of FIELDS) {
    const c = cols[f];
    out[f] = rows.map((i) => c?.[i] ?? 0);
  }
  return { ...(out as unknown as Omit<DiagnosisSeries, "length">), length: rows.length };
}

/** diagnose() over the chart columns up to `toT` (the moment shown): null without rows. `ctx`: as the hub gives it. */
export function diagnoseColumns(t: ArrayLike<number>, cols: DiagnosisColumns, toT: number, ctx?: DiagnosisContext): Diagnosis | null {
  return diagnose(columnsSeries(t, cols, toT), ctx);
}
