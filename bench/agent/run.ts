// Entry point of `npm run bench:agent`: warm up every contender, run interleaved rounds, report.
// Progress goes to stderr so stdout is the report, ending with one JSON line.

import { loadConfig } from "./config.js";
import { CONTENDERS, type BenchResource, type CaseId } from "./contenders.js";
import { CASES as ALL_CASES, supports } from "./cases/index.js";
import { environmentLine, report, type Samples } from "./report.js";
import { fmt } from "./stats.js";
import { runFootprint } from "./footprint/index.js";

const config = loadConfig();
/** The subset BENCH_CONTENDERS / BENCH_CASES asks for; an unknown name is a typo, so it stops the run. */
function select<T>(all: readonly T[], key: (x: T) => string, only: readonly string[] | undefined, env: string): T[] {
  if (!only) return [...all];
  const known = all.map(key);
  const unknown = only.filter((n) => !known.includes(n));
  if (unknown.length) throw new RangeError(`${env}: unknown ${unknown.join(", ")}; known: ${known.join(", ")}`);
  return all.filter((x) => only.includes(key(x)));
}
const contenders = select(CONTENDERS, (k) => k.name, config.onlyContenders, "BENCH_CONTENDERS");
const CASES = select(ALL_CASES, (c) => c.id, config.onlyCases, "BENCH_CASES");
const log = (line: string) => process.stderr.write(line + "\n");

log(`bench:agent: ${environmentLine(config)}`);
log(`bench:agent: contenders ${contenders.map((c) => c.name).join(", ")}`);

// A contender that throws on a case (a bug in it, or in its adapter here) loses that case, not the
// whole run: the others are still measured, the error is printed, and the exit code is 1.
const failed = new Map<string, string>();
const failKey = (caseId: string, name: string) => `${caseId}/${name}`;
function fail(caseId: string, name: string, err: unknown): void {
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  failed.set(failKey(caseId, name), message.split("\n").slice(0, 4).join(" | "));
  log(`ERROR ${failKey(caseId, name)}: ${message}`);
}

// Servers the selected rows need (redis-server for the redis-semaphore rows), started once. One
// that is not installed skips its rows (a line here and in the report, exit code unchanged); one
// that fails to start fails its rows' cases like any other error.
const skipped = new Map<string, string>();
const running: BenchResource[] = [];
for (const resource of new Set(contenders.flatMap((k) => (k.needs === undefined ? [] : [k.needs])))) {
  const users = contenders.filter((k) => k.needs === resource);
  let why: string | undefined;
  try {
    why = await resource.start();
  } catch (err) {
    for (const k of users) for (const c of CASES) if (supports(k, c.id)) fail(c.id, k.name, err);
    continue;
  }
  if (why === undefined) {
    running.push(resource);
    continue;
  }
  for (const k of users) {
    skipped.set(k.name, why);
    contenders.splice(contenders.indexOf(k), 1);
  }
  log(`SKIP ${users.map((k) => k.name).join(", ")}: ${why}`);
}

// Warm up everything before the first timed round, so no contender's early rounds pay for JIT.
for (const k of contenders) {
  const t0 = performance.now();
  for (const c of CASES) {
    if (!supports(k, c.id) || failed.has(failKey(c.id, k.name))) continue;
    try {
      await c.warmup(k, config);
    } catch (err) {
      fail(c.id, k.name, err);
    }
  }
  log(`warm-up ${k.name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const samples: Samples = new Map(CASES.map((c) => [c.id, new Map()] as const));
for (let round = 0; round < config.rounds; round++) {
  for (const c of CASES) {
    const eligible = contenders.filter((k) => supports(k, c.id));
    // Round-robin, starting one contender later each round, so none is always first after a GC
    // or always right after the heaviest contender.
    const order = eligible.map((_, i) => eligible[(i + round) % eligible.length]!);
    const line: string[] = [];
    for (const k of order) {
      if (failed.has(failKey(c.id, k.name))) continue;
      // CPU time over wall time: below ~0.9 another process took the CPU during the sample. On a
      // shared 2-core machine that happens, and the report says so instead of hiding it.
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      let value: number;
      try {
        value = await c.measure(k, config);
      } catch (err) {
        fail(c.id, k.name, err);
        continue;
      }
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const byContender = samples.get(c.id)!;
      const entry = byContender.get(k.name) ?? { values: [], cpuShares: [] };
      entry.values.push(value);
      if (c.timed) entry.cpuShares.push((cpu.user + cpu.system) / 1000 / wallMs);
      byContender.set(k.name, entry);
      line.push(`${k.name} ${fmt(value)}`);
    }
    log(`round ${round + 1}/${config.rounds} ${c.id}: ${line.join(", ")}`);
  }
}

// A failed pair's earlier samples are dropped: a case that crashed part-way is not a result.
for (const key of failed.keys()) {
  const [caseId, name] = key.split("/") as [string, string];
  samples.get(caseId as CaseId)?.delete(name);
}
// Issue 33's rows (bytes per live semaphore, reporter CPU per semaphore-second): footprint/.
const footprint = await runFootprint(config, log);
console.log(report(config, CASES, contenders, samples, failed, skipped, footprint));
for (const resource of running) await resource.stop();
if (failed.size > 0) process.exitCode = 1;
