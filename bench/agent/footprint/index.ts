// Issue 33's rows of `npm run bench:agent`: what the agent costs a host with many semaphores
// (bytes per idle live semaphore, beside the peers', at 10 and 10,000; the reporter's CPU per
// semaphore-second at 100, 1,000 and 10,000, with and without connect()). Printed as tables
// before the main report's targets; its figures join the JSON line under `footprint`.
// BENCH_FOOTPRINT=0 skips it; BENCH_FOOTPRINT_SECONDS (default 4) per measured phase;
// BENCH_FOOTPRINT_PARTS=bytes or =reporter runs one table.
import { positiveInt } from "../../support/env.js";
import type { BenchConfig } from "../config.js";
import { table } from "../report.js";
import { fmt, fmtPct, summarize } from "../stats.js";
import { startHubChild } from "./hub-child.js";
import { reporterRound, type Load } from "./reporter-cost.js";
import { BYTE_KINDS, bytesPerSemaphoreInChild, type Activity } from "./semaphore-bytes.js";

export interface FootprintSection {
  readonly text: string;
  readonly json: Record<string, unknown>;
}

const COUNTS = [10, 10_000] as const;
const SIZES = [100, 1_000, 10_000] as const;
const LOADS: readonly Load[] = ["idle", "light"];

const cell = (xs: number[]) => {
  const s = summarize(xs);
  return `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)}, ${fmtPct(s.spread)})`;
};

export async function runFootprint(config: BenchConfig, log: (line: string) => void): Promise<FootprintSection | undefined> {
  if (process.env.BENCH_FOOTPRINT === "0") return undefined;
  const rounds = config.quick ? 1 : Math.min(config.rounds, 3);
  const seconds = positiveInt("BENCH_FOOTPRINT_SECONDS", config.quick ? 1 : 4);
  const out: string[] = [];
  const json: Record<string, unknown> = {};

  // BENCH_FOOTPRINT_PARTS=bytes or =reporter: one of the two tables (both by default).
  const parts = process.env.BENCH_FOOTPRINT_PARTS?.split(",") ?? ["bytes", "reporter"];
  if (parts.includes("bytes")) await bytesRows(rounds, out, json, log);
  // Timed in CPU on a shared machine: all the rounds asked for (the byte counts agree within ~1 %).
  if (parts.includes("reporter")) await reporterRows(config.quick ? 1 : config.rounds, seconds, out, json, log);
  return { text: out.join("\n"), json };
}

async function bytesRows(rounds: number, out: string[], json: Record<string, unknown>, log: (line: string) => void): Promise<void> {
  // ---- bytes per live semaphore ----
  const activities: Activity[] = ["idle", "used", "busy"];
  const bytes = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const n of COUNTS) {
      for (const activity of activities) {
        for (const k of BYTE_KINDS) {
          const key = `${k.name}|${n}|${activity}`;
          const v = await bytesPerSemaphoreInChild(k.name, n, activity);
          bytes.set(key, [...(bytes.get(key) ?? []), v]);
        }
        log(`footprint bytes round ${round + 1}/${rounds}: n=${n} ${activity}`);
      }
    }
  }
  out.push(
    "",
    `memory: heap + array-buffer bytes per live semaphore (lower is better); median (min–max, spread) over ${rounds} child processes each;`,
    "idle: made, never used; used: 4 acquire/release pairs each; busy: 2,000 pairs each (a flight recorder at its capacity)",
  );
  const header = ["contender", ...COUNTS.flatMap((n) => activities.map((a) => `${a} @${n.toLocaleString("en-US")}`)), "idle @10,000 / async-sema"];
  const med = (name: string, n: number, a: Activity) => summarize(bytes.get(`${name}|${n}|${a}`) ?? []).median;
  out.push(
    table(
      header,
      BYTE_KINDS.map((k) => [
        k.name,
        ...COUNTS.flatMap((n) => activities.map((a) => cell(bytes.get(`${k.name}|${n}|${a}`) ?? []))),
        `${(med(k.name, 10_000, "idle") / med("async-sema", 10_000, "idle")).toFixed(2)}x`,
      ]),
    ),
  );
  json.bytes_per_semaphore = Object.fromEntries(
    BYTE_KINDS.map((k) => [k.name, Object.fromEntries(COUNTS.flatMap((n) => activities.map((a) => [`${a}_${n}`, Math.round(med(k.name, n, a))])))]),
  );
  const idle = med("semscope", 10_000, "idle");
  const sema = med("async-sema", 10_000, "idle");
  out.push(
    `  ${idle <= 2048 ? "PASS" : "FAIL"}  semscope idle bytes/semaphore <= 2 KB: ${fmt(idle)} B`,
    `  ${idle <= sema ? "PASS" : "FAIL"}  (stretch) semscope idle bytes/semaphore <= async-sema: ${fmt(idle)} vs ${fmt(sema)} B`,
  );

}

async function reporterRows(rounds: number, seconds: number, out: string[], json: Record<string, unknown>, log: (line: string) => void): Promise<void> {
  // ---- reporter CPU per semaphore-second ----
  const hub = await startHubChild();
  const agentUs = new Map<string, number[]>();
  const hubUs = new Map<string, number[]>();
  const omitted = new Map<string, number>();
  try {
    for (let round = 0; round < rounds; round++) {
      for (const n of SIZES) {
        for (const load of LOADS) {
          const key = `${n}|${load}`;
          const r = await reporterRound(hub, n, load, seconds, round % 2 === 1);
          agentUs.set(key, [...(agentUs.get(key) ?? []), r.agentUs]);
          if (r.hubUs !== undefined) hubUs.set(key, [...(hubUs.get(key) ?? []), r.hubUs]);
          omitted.set(key, r.omitted);
          log(`footprint reporter round ${round + 1}/${rounds}: n=${n} ${load}: agent ${fmt(r.agentUs)} µs, hub ${fmt(r.hubUs)} µs per semaphore-second`);
        }
      }
    }
  } finally {
    await hub.stop();
  }
  out.push(
    "",
    `reporter: CPU µs per semaphore-second, connect() at the default 1 s interval to a real hub (child process); ` +
      `agent = this process with connect() minus without, same load, phases alternating; median (min–max, spread) over ${rounds} rounds of ${seconds} s`,
  );
  out.push(
    table(
      ["semaphores", "load", "agent µs/sem-s", "hub µs/sem-s", "omitted by agent"],
      SIZES.flatMap((n) => LOADS.map((load) => [n.toLocaleString("en-US"), load, cell(agentUs.get(`${n}|${load}`) ?? []), cell(hubUs.get(`${n}|${load}`) ?? []), String(omitted.get(`${n}|${load}`) ?? "-")])),
    ),
  );
  const at1000 = summarize(agentUs.get("1000|light") ?? []).median;
  out.push(`  ${at1000 <= 5 ? "PASS" : "FAIL"}  reporter at 1,000 semaphores (light load) <= 5 µs per semaphore-second: ${fmt(at1000)} µs`);
  json.reporter_us_per_semaphore_second = Object.fromEntries(
    SIZES.flatMap((n) =>
      LOADS.map((load) => [`${load}_${n}`, { agent: Math.round(summarize(agentUs.get(`${n}|${load}`) ?? []).median * 100) / 100, hub: Math.round(summarize(hubUs.get(`${n}|${load}`) ?? []).median * 100) / 100 }]),
    ),
  );
}
