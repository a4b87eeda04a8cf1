// What a benchmark case is. EXTENSION POINT: a new case implements BenchCase and is added to
// CASES in cases/index.ts; its `id` becomes a key of the final JSON line.

import type { BenchConfig } from "../config.js";
import type { CaseId, Contender } from "../contenders.js";

export interface BenchCase {
  readonly id: CaseId;
  /** Short column header. */
  readonly label: string;
  /** One line for the detail table's heading. */
  readonly title: string;
  readonly unit: string;
  readonly better: "lower" | "higher";
  /** The result is a time or a rate, so a busy machine distorts it (the report shows the CPU share). */
  readonly timed: boolean;
  /** Run untimed until the contender's code paths are compiled; may calibrate sizes for `measure`. */
  warmup(contender: Contender, config: BenchConfig): Promise<void>;
  /** One sample, in `unit`. */
  measure(contender: Contender, config: BenchConfig): Promise<number>;
}

/**
 * A full collection before a timed run, so that garbage left by the previous contender is not
 * collected (and billed) during this one. A no-op without --expose-gc.
 */
export function collectGarbage(): void {
  globalThis.gc?.();
}

export function supports(contender: Contender, id: CaseId): boolean {
  return contender.cases === undefined || contender.cases.includes(id);
}
