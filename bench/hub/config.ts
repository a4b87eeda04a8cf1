// Sizes and knobs for the hub benchmark, read once from the environment so every file agrees.

export interface HubBenchConfig {
  /** BENCH_QUICK=1: a ~20 s smoke run that checks the harness works, not a measurement to quote. */
  readonly quick: boolean;
  /** Simulated agents in all, and the child processes that drive them. */
  readonly agents: number;
  readonly simulators: number;
  readonly semaphoresPerAgent: number;
  readonly intervalMs: number;
  /** Per server run: connecting and warming up, then the measured window. */
  readonly warmupMs: number;
  /**
   * The bare server's warm-up: it stores nothing, so after its code is warm a longer one measures
   * the same thing later. At most warmupMs (10 s unless set): a hub measured 12 minutes in then has
   * its baseline measured a minute after its own window, not 13 minutes apart on a machine whose
   * speed drifts by more than that (bare 10.5–14.5 µs a sample in late windows on record).
   */
  readonly bareWarmupMs: number;
  readonly measureMs: number;
  /** Server runs in ABBA order (hub, bare, bare, hub, ...), so slow drift on a shared machine falls on both. */
  readonly rounds: number;
  /** The fairness case: how long the hostile agent floods (0: skip the case). */
  readonly fairFloodMs: number;
  /**
   * Scheduling priority (nice) of the simulator children: they stand in for agents on other
   * machines, and at normal priority four of them keep a 2-core box's run queue full, so the
   * server under test waits for a core (and an ack for its simulator) up to ~100 ms at a time.
   */
  readonly simulatorNice: number;
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

export function loadConfig(): HubBenchConfig {
  const quick = process.env.BENCH_QUICK === "1";
  const warmupMs = positiveInt("BENCH_WARMUP_MS", quick ? 2000 : 10_000);
  return {
    quick,
    agents: positiveInt("BENCH_AGENTS", quick ? 40 : 1000),
    simulators: positiveInt("BENCH_SIMULATORS", quick ? 2 : 4),
    semaphoresPerAgent: positiveInt("BENCH_SEMAPHORES", 10),
    intervalMs: positiveInt("BENCH_INTERVAL_MS", 1000),
    warmupMs,
    bareWarmupMs: positiveInt("BENCH_BARE_WARMUP_MS", Math.min(warmupMs, quick ? 2000 : 10_000)),
    measureMs: positiveInt("BENCH_MEASURE_MS", quick ? 4000 : 40_000),
    rounds: positiveInt("BENCH_ROUNDS", quick ? 1 : 2),
    fairFloodMs: process.env.BENCH_FAIR_FLOOD_MS === "0" ? 0 : positiveInt("BENCH_FAIR_FLOOD_MS", quick ? 5000 : 20_000),
    simulatorNice: process.env.BENCH_SIM_NICE === "0" ? 0 : Math.min(19, positiveInt("BENCH_SIM_NICE", 10)),
  };
}
