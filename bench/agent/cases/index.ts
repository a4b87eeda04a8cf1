// The cases, in report order. EXTENSION POINT: append a BenchCase here (and its id to CaseId in
// contenders.ts) and it is warmed up, interleaved, summarized and put into the JSON line.

import type { BenchCase } from "./case.js";
import { uncontended } from "./uncontended.js";
import { contended } from "./contended.js";
import { memory } from "./memory.js";

export const CASES: readonly BenchCase[] = [uncontended, contended, memory];
export type { BenchCase } from "./case.js";
export { supports } from "./case.js";
