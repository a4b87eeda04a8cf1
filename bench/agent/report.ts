// Turns the per-round samples into the human tables, the target checks and the JSON line.

import os from "node:os";
import type { BenchConfig } from "./config.js";
import type { CaseId, Contender } from "./contenders.js";
import type { BenchCase } from "./cases/index.js";
import { fmt, fmtPct, fmtRatio, median, summarize, type Summary } from "./stats.js";
import { checkTargets, type Medians } from "./targets.js";
import type { FootprintSection } from "./footprint/index.js";

/** samples[caseId][contender]: one value per round, and for timed cases the CPU share of that round. */
export type Samples = Map<CaseId, Map<string, { values: number[]; cpuShares: number[] }>>;

/** Below this CPU share a timed sample was slowed by other processes. */
const BUSY_SHARE = 0.9;

/** Ratio columns every detail table shows (value ÷ reference). */
const REFERENCES = ["async-sema", "floor"] as const;
/** Names the JSON line always has, even when one was not measured (null then). */
const JSON_CONTENDERS = ["semscope", "semscope-stacks", "async-sema", "async-mutex", "p-limit", "floor"];

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

export function environmentLine(config: BenchConfig): string {
  const cpus = os.cpus();
  return (
    `node ${process.version} ${process.platform}/${process.arch}, ${cpus.length} CPU x ${cpus[0]?.model.trim() ?? "?"}; ` +
    `${config.rounds} interleaved rounds${config.quick ? ", QUICK smoke run (small sizes: do not quote these numbers)" : ""}; ` +
    `contended ${config.contendedTasks.toLocaleString("en-US")} tasks / ${config.contendedPermits} permits; ` +
    `memory ${config.memoryWaiters.toLocaleString("en-US")} waiters (${config.memoryInChild ? "child process per sample" : "in process"}); ` +
    `forced gc ${globalThis.gc ? "on" : "OFF (run with node --expose-gc)"}; ` +
    `load average ${os.loadavg()[0]!.toFixed(2)}`
  );
}

export function report(
  config: BenchConfig,
  cases: readonly BenchCase[],
  contenders: readonly Contender[],
  samples: Samples,
  failed: ReadonlyMap<string, string>,
  /** Contenders not run because a server they need is not installed, with why. */
  skipped: ReadonlyMap<string, string> = new Map(),
  /** Issue 33's rows (footprint/), when they ran. */
  footprint?: FootprintSection,
): string {
  const out: string[] = [];
  const summaries = new Map<CaseId, Map<string, Summary>>();
  for (const c of cases) {
    const byContender = new Map<string, Summary>();
    for (const [name, xs] of samples.get(c.id) ?? []) byContender.set(name, summarize(xs.values));
    summaries.set(c.id, byContender);
  }
  const med = (id: CaseId, name: string) => summaries.get(id)?.get(name)?.median;

  out.push(`Semscope agent benchmark: ${environmentLine(config)}`, "");
  out.push(`Summary: medians over ${config.rounds} rounds`);
  out.push(
    table(
      ["contender", ...cases.map((c) => c.label), "description"],
      contenders.map((k) => [k.name, ...cases.map((c) => fmt(med(c.id, k.name))), k.description]),
    ),
  );

  const withBaseline = contenders.some((k) => k.baseline !== undefined);
  const busy: string[] = [];
  for (const c of cases) {
    out.push("", `${c.title}; ratio = contender / reference; spread = (max - min) / median`);
    const header = ["contender", "median", "min", "max", "spread", ...REFERENCES.map((r) => `/ ${r}`)];
    if (c.timed) header.push("cpu share");
    if (withBaseline) header.push("/ own baseline");
    const rows: string[][] = [];
    for (const k of contenders) {
      const s = summaries.get(c.id)?.get(k.name);
      if (!s) continue;
      const row = [k.name, fmt(s.median), fmt(s.min), fmt(s.max), fmtPct(s.spread)];
      for (const r of REFERENCES) {
        const ref = med(c.id, r);
        row.push(fmtRatio(ref === undefined ? undefined : s.median / ref));
      }
      if (c.timed) {
        const shares = samples.get(c.id)?.get(k.name)?.cpuShares ?? [];
        const lowest = Math.min(...shares);
        if (lowest < BUSY_SHARE) busy.push(`${c.id}/${k.name}`);
        row.push(`${median(shares).toFixed(2)} (min ${lowest.toFixed(2)})`);
      }
      if (withBaseline) {
        const ref = k.baseline === undefined ? undefined : med(c.id, k.baseline);
        row.push(ref === undefined ? "" : `${fmtRatio(s.median / ref)} vs ${k.baseline}`);
      }
      rows.push(row);
    }
    out.push(table(header, rows));
  }

  const medians = Object.fromEntries(
    cases.map((c) => [c.id, Object.fromEntries(contenders.map((k) => [k.name, med(c.id, k.name)]))]),
  ) as Medians;
  out.push(
    "",
    "cpu share = process CPU time / wall time of a sample (GC helper threads can push it above 1).",
    busy.length === 0
      ? `Every timed sample had at least ${BUSY_SHARE} of a CPU: the machine was quiet enough.`
      : `WARNING: ${busy.length} contender/case pairs had a sample below ${BUSY_SHARE} of a CPU (another process ran): ${busy.join(", ")}. ` +
          "Medians absorb a few such rounds; if many are affected, rerun on a quiet machine or raise BENCH_ROUNDS.",
  );
  if (skipped.size > 0) {
    out.push("", `SKIPPED (${skipped.size} contenders not run; null in the JSON line):`);
    for (const [name, why] of skipped) out.push(`  ${name}: ${why}`);
  }
  if (failed.size > 0) {
    out.push("", `ERRORS (${failed.size} case/contender pairs not measured; exit code 1):`);
    for (const [key, message] of failed) out.push(`  ${key}: ${message}`);
  }
  if (footprint !== undefined) out.push(footprint.text);
  out.push("", "Targets (medians):");
  for (const t of checkTargets(medians)) {
    out.push(`  ${t.pass === undefined ? "SKIP" : t.pass ? "PASS" : "FAIL"}  ${t.label}: ${t.detail}`);
  }

  // Last line: machine-readable, keyed by contender. Precision: what the rounds can support.
  const round = (id: CaseId, x: number | undefined): number | null => {
    if (x === undefined || !Number.isFinite(x)) return null;
    return id === "contended_ops" ? Math.round(x) : Math.round(x * 10) / 10;
  };
  const json: Record<string, unknown> = { bench: "agent" };
  const names = [...new Set([...JSON_CONTENDERS, ...contenders.map((k) => k.name), ...skipped.keys()])];
  for (const c of cases) json[c.id] = Object.fromEntries(names.map((n) => [n, round(c.id, med(c.id, n))]));
  if (footprint !== undefined) json.footprint = footprint.json;
  out.push("", JSON.stringify(json));
  return out.join("\n");
}
