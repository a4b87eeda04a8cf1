// The performance targets semscope is held to. A FAIL is reported, never turned into an exit code:
// this is a measurement, and a noisy machine must not break a build.

import type { CaseId } from "./contenders.js";

// Partial: BENCH_CASES may have skipped a case.
export type Medians = Partial<Record<CaseId, Record<string, number | undefined>>>;

export interface TargetResult {
  readonly label: string;
  /** undefined: a contender it needs was not measured. */
  readonly pass: boolean | undefined;
  readonly detail: string;
}

interface Target {
  readonly label: string;
  readonly caseId: CaseId;
  readonly subject: string;
  readonly reference: string;
  /** Holds when subject and reference medians satisfy it. */
  readonly holds: (subject: number, reference: number) => boolean;
  /** What the subject is allowed, as a multiple of the reference, for the detail line. */
  readonly limit: string;
}

const better = (caseId: CaseId, reference: string): Target => {
  const higher = caseId === "contended_ops";
  return {
    label: `semscope ${caseId} better than ${reference}`,
    caseId,
    subject: "semscope",
    reference,
    holds: higher ? (s, r) => s > r : (s, r) => s < r,
    limit: higher ? "> 1.00x" : "< 1.00x",
  };
};

export const TARGETS: readonly Target[] = [
  { label: "semscope contended_ops >= async-sema", caseId: "contended_ops", subject: "semscope", reference: "async-sema", holds: (s, r) => s >= r, limit: ">= 1.00x" },
  { label: "semscope bytes_per_waiter <= async-sema", caseId: "bytes_per_waiter", subject: "semscope", reference: "async-sema", holds: (s, r) => s <= r, limit: "<= 1.00x" },
  { label: "semscope uncontended_ns <= 2x async-sema", caseId: "uncontended_ns", subject: "semscope", reference: "async-sema", holds: (s, r) => s <= 2 * r, limit: "<= 2.00x" },
  ...(["async-mutex", "p-limit"] as const).flatMap((ref) =>
    (["uncontended_ns", "contended_ops", "bytes_per_waiter"] as const).map((id) => better(id, ref)),
  ),
];

export function checkTargets(medians: Medians): TargetResult[] {
  return TARGETS.map((t) => {
    const s = medians[t.caseId]?.[t.subject];
    const r = medians[t.caseId]?.[t.reference];
    if (s === undefined || r === undefined) {
      const why = medians[t.caseId] === undefined ? `case ${t.caseId} not run` : `${s === undefined ? t.subject : t.reference} not run`;
      return { label: t.label, pass: undefined, detail: `not measured (${why})` };
    }
    return {
      label: t.label,
      pass: t.holds(s, r),
      detail: `${t.subject} ${s.toPrecision(4)} vs ${t.reference} ${r.toPrecision(4)}: ratio ${(s / r).toFixed(2)}x, needs ${t.limit}`,
    };
  });
}
