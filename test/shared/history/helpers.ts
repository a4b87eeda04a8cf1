// Builders and brute-force references for the history tests.
import { DenseHist, bucketMidMs, type SparseHist, type Summary } from "../../../shared/histogram.js";
import type { Sample } from "../../../shared/protocol/types.js";
import { makeSample } from "../../fixtures/protocol.js";

/** A Summary as an agent built on DenseHist would send it for these bucket counts and max. */
export function summaryOf(hist: SparseHist, max: number): Summary {
  const d = new DenseHist();
  d.addSparse(hist, max);
  return { ...d.summary(), count: hist.reduce((n, [, c]) => n + c, 0) };
}

/** An idle sample of semaphore "s". */
export function sample(over: Partial<Sample> = {}): Sample {
  return makeSample({ id: "s", ...over });
}

/** Nearest-rank quantile over every recorded duration, expanded one by one and sorted. */
export function bruteQuantile(hists: readonly SparseHist[], max: number, q: number): number {
  const all: number[] = [];
  for (const h of hists) for (const [b, c] of h) for (let i = 0; i < c; i++) all.push(b);
  if (all.length === 0) return 0;
  all.sort((a, b) => a - b);
  const b = all[Math.max(1, Math.ceil(q * all.length)) - 1];
  const mid = bucketMidMs(b);
  if (b === 0) return Math.min(mid, max);
  return max > 0 ? Math.min(mid, max) : mid;
}

/** |a - b| within a relative tolerance (Float32 storage keeps ~7 significant digits). */
export function close(a: number, b: number, rel = 1e-6): boolean {
  return Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b));
}

export const T0 = Date.UTC(2026, 0, 1); // on a minute boundary
