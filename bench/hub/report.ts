// The table, the target checks and the JSON line of the hub benchmark.
import os from "node:os";
import { damonState } from "../support/kernel-reclaim.js";
import type { HubBenchConfig } from "./config.js";
import type { FairnessResult } from "./fairness.js";
import { nameFloodLines, type NameFloodResult } from "./name-flood.js";
import { uiSiegeReport, type UiSiegeRound } from "./ui-siege.js";
import type { ParseCost } from "./parse-cost.js";
import type { GcPauses, GcSummary, ServerReport, SimReport } from "./messages.js";

export interface RunResult {
  kind: "hub" | "bare";
  round: number;
  server: ServerReport;
  /** The server before any agent connected. */
  idle: ServerReport;
  sims: SimReport[];
  hour?: { bytesPerSemaphore: number; growthPerHour: number; semaphores: number };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const f = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : "-");
const mb = (b: number) => (b / 1048576).toFixed(1);

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

interface Totals {
  items: number;
  cpuUs: number;
  wallMs: number;
  latencies: number[];
  refused: number;
  timeouts: number;
  simCpuUs: number;
}

function totals(runs: readonly RunResult[]): Totals {
  const t: Totals = { items: 0, cpuUs: 0, wallMs: 0, latencies: [], refused: 0, timeouts: 0, simCpuUs: 0 };
  for (const r of runs) {
    t.cpuUs += r.server.cpuUs;
    t.wallMs += r.server.wallMs;
    for (const s of r.sims) {
      t.items += s.itemsAcked;
      t.refused += s.refused;
      t.timeouts += s.timeouts;
      t.simCpuUs += s.cpuUs;
      for (const l of s.latencies) t.latencies.push(l);
    }
  }
  t.latencies.sort((a, b) => a - b);
  return t;
}

export function environmentLine(config: HubBenchConfig): string {
  const cpus = os.cpus();
  return (
    `node ${process.version} ${process.platform}/${process.arch}, ${cpus.length} CPU x ${cpus[0]?.model.trim() ?? "?"}; ` +
    `${config.agents} agents x ${config.semaphoresPerAgent} semaphores at ${config.intervalMs} ms from ${config.simulators} simulator processes; ` +
    `${config.rounds} ABBA round(s) of ${config.warmupMs / 1000} s warm-up (bare ${config.bareWarmupMs / 1000} s) + ${config.measureMs / 1000} s measured per server` +
    `${config.quick ? "; QUICK smoke run (do not quote these numbers)" : ""}; load average ${os.loadavg()[0]!.toFixed(2)}; ` +
    `kernel DAMON ${damonState()}`
  );
}

export function report(config: HubBenchConfig, runs: readonly RunResult[], fair?: FairnessResult, parse?: ParseCost, flood?: NameFloodResult, siege: readonly UiSiegeRound[] = []): string {
  const ui = uiSiegeReport(siege);
  const out: string[] = [`Semscope hub benchmark: ${environmentLine(config)}`, ""];
  const semaphores = config.agents * config.semaphoresPerAgent;
  const perRun = runs.map((r) => {
    const t = totals([r]);
    return [
      `${r.kind} #${r.round + 1}`,
      String(r.sims.reduce((n, s) => n + s.connected, 0)),
      f(t.items / (t.wallMs / 1000), 0),
      f(t.cpuUs / t.items, 2),
      f((t.cpuUs / 1000 / t.wallMs) * 100, 0),
      f(percentile(t.latencies, 50), 2),
      f(percentile(t.latencies, 99), 2),
      f(t.latencies.at(-1) ?? Number.NaN, 1),
      String(t.refused + t.timeouts),
      mb(r.server.rss),
      f((t.simCpuUs / 1000 / t.wallMs) * 100, 0),
    ];
  });
  out.push("Per run (CPU µs per sample: the server process's user+system time over the window ÷ sample items acked in it)");
  out.push(table(["server", "agents", "samples/s", "cpu µs/sample", "cpu % core", "ack p50 ms", "ack p99 ms", "ack max ms", "lost", "rss MB", "sim cpu %"], perRun));

  const paused = runs.filter((r) => r.server.gc !== undefined);
  if (paused.length > 0) {
    out.push("", "Pauses in the window (main thread): collections, and the event loop's delay (what an arriving message waits for)");
    const g = (p: GcPauses) => `${p.count} / ${f(p.ms, 0)} / ${f(p.maxMs, 1)}`;
    out.push(
      table(
        ["server", "minor GC n / ms / max", "major GC n / ms / max", "incremental n / ms / max", "loop delay p99 ms", "loop delay max ms"],
        paused.map((r) => {
          const p = r.server.gc as GcSummary;
          return [`${r.kind} #${r.round + 1}`, g(p.minor), g(p.major), g(p.incremental), f(p.loopDelayP99Ms, 1), f(p.loopDelayMaxMs, 1)];
        }),
      ),
    );
  }

  const hub = totals(runs.filter((r) => r.kind === "hub"));
  const bare = totals(runs.filter((r) => r.kind === "bare"));
  const hubUs = hub.cpuUs / hub.items;
  const bareUs = bare.cpuUs / bare.items;
  const ratio = hubUs / bareUs;
  const lastHub = [...runs].reverse().find((r) => r.kind === "hub");
  const hour = runs.find((r) => r.hour !== undefined)?.hour;
  out.push("", "Summary (all rounds pooled)");
  out.push(
    table(
      ["server", "cpu µs/sample", "ack p50 ms", "ack p99 ms", "ack max ms", "acks"],
      [
        ["hub", f(hubUs, 2), f(percentile(hub.latencies, 50), 2), f(percentile(hub.latencies, 99), 2), f(hub.latencies.at(-1) ?? Number.NaN, 1), String(hub.latencies.length)],
        ["bare", f(bareUs, 2), f(percentile(bare.latencies, 50), 2), f(percentile(bare.latencies, 99), 2), f(bare.latencies.at(-1) ?? Number.NaN, 1), String(bare.latencies.length)],
        ["hub / bare", f(ratio, 2), "", "", "", ""],
      ],
    ),
  );
  if (lastHub !== undefined) {
    const seconds = (config.warmupMs + config.measureMs) / 1000;
    out.push("", "Hub memory");
    out.push(
      `  live, after ~${f(seconds, 0)} s of 1 s samples: history ${mb(lastHub.server.historyBytes ?? 0)} MB for ${lastHub.server.histories} semaphores = ` +
        `${f((lastHub.server.historyBytes ?? 0) / semaphores, 0)} B each; RSS ${mb(lastHub.idle.rss)} → ${mb(lastHub.server.rss)} MB = ` +
        `${f((lastHub.server.rss - lastHub.idle.rss) / semaphores, 0)} B per semaphore (everything: sockets, engine, history)`,
    );
    if (hour !== undefined) {
      out.push(
        `  an hour of 1 s history (${hour.semaphores} semaphores of this workload into the hub's HistoryStore): ${f(hour.bytesPerSemaphore, 0)} B per semaphore ` +
          `(1 s tier full at 15 min), then +${f(hour.growthPerHour, 0)} B per further hour (1 m tier; full at 24 h: 305,416 B in all)`,
      );
    }
  }
  if (fair !== undefined) {
    out.push("", "Fairness: two real agents (10 semaphores at 200 ms) while a hostile agent floods within every limit");
    out.push(
      table(
        ["phase", "acks", "ack p50 ms", "ack p99 ms", "ack max ms"],
        [
          ["quiet", String(fair.quiet.n), f(fair.quiet.p50, 2), f(fair.quiet.p99, 2), f(fair.quiet.max, 1)],
          ["under the flood", String(fair.flood.n), f(fair.flood.p50, 2), f(fair.flood.p99, 2), f(fair.flood.max, 1)],
        ],
      ),
    );
    const h = fair.hostile;
    out.push(
      `  hostile: ${h.itemsPerBatch} items (${f(h.bytes / 1024, 0)} KiB) a batch, ${h.ok} stored, ${h.refused} refused, ${f(h.itemsPerSecond, 0)} items/s stored; ` +
        `real agents: ${fair.notOk} acks not ok, ${fair.gaps} seq gaps`,
    );
  }
  if (parse !== undefined) {
    out.push("", `Checking a full samples batch (1,000 items, ${f(parse.bytes / 1024, 0)} KiB), medians: fast path ${f(parse.fastMs, 2)} ms, zod ${f(parse.zodMs, 1)} ms`);
  }
  if (flood !== undefined) out.push("", ...nameFloodLines(flood));
  if (ui.lines.length > 0) out.push("", ...ui.lines);
  const check = (ok: boolean, what: string) => `${ok ? "PASS" : "FAIL"} ${what}`;
  out.push("", "Targets (a report, not a gate)");
  out.push(check(ratio <= 1.5, `hub CPU per sample within 1.5x of the bare server's: ${f(ratio, 2)}x`));
  out.push(check(percentile(hub.latencies, 99) < 50, `hub ack p99 under 50 ms: ${f(percentile(hub.latencies, 99), 2)} ms`));
  out.push(check(hub.refused + hub.timeouts === 0, `no sample batch refused or timed out: ${hub.refused + hub.timeouts}`));
  if (parse !== undefined) out.push(check(parse.fastMs * 10 <= parse.zodMs, `the samples fast path at most 1/10 of zod's cost: ${f(parse.zodMs / parse.fastMs, 0)}x cheaper`));
  if (fair !== undefined) {
    out.push(check(fair.flood.p99 <= 50, `a real agent's ack p99 under a hostile flood at most 50 ms: ${f(fair.flood.p99, 2)} ms (quiet: ${f(fair.quiet.p99, 2)} ms)`));
  }
  out.push(...ui.checks);
  out.push(
    JSON.stringify({
      bench: "hub",
      agents: config.agents,
      semaphores,
      cpu_us_per_sample: { hub: round(hubUs), bare: round(bareUs) },
      ratio: round(ratio),
      ack_p50_ms: round(percentile(hub.latencies, 50)),
      ack_p99_ms: round(percentile(hub.latencies, 99)),
      bytes_per_semaphore_hour: hour === undefined ? null : Math.round(hour.bytesPerSemaphore),
      fair_ack_p50_ms: fair === undefined ? null : round(fair.flood.p50),
      fair_ack_p99_ms: fair === undefined ? null : round(fair.flood.p99),
      flood_heap_mb: flood === undefined ? null : { capped: round(flood.capped.after.heapUsed / 2 ** 20), uncapped: round(flood.uncapped.after.heapUsed / 2 ** 20) },
      ...ui.json,
    }),
  );
  return out.join("\n");
}

const round = (x: number) => (Number.isFinite(x) ? Math.round(x * 100) / 100 : null);
