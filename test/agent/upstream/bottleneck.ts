// Transparency check (issue 30): bottleneck's own mocha suite, at the tag matching the pinned
// version, run twice in a scratch folder: on bare limiters, and with every limiter the suite makes
// passed through instrument() (with a leak watch, so the stack path runs too). A test that passes
// bare and fails instrumented is the adapter's fault; the script lists those and exits 1 if any.
// The suite is timing-based (durations checked within a tolerance), so a loaded machine fails
// some tests in both runs: those are reported, not blamed.
//
//   node --import tsx test/agent/upstream/bottleneck.ts <bottleneck checkout at v2.19.5>
//
// Not part of `npm test` (CI has the npm registry only, not GitHub); the upstream code is copied
// to a temporary folder and never into this repository. mocha is installed there from npm.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
/** Tests left out, and why (also in docs/instrumenting.md). */
const EXCLUDED = "Should not leak memory"; // need `leakage`, a native module (node-gyp build) not installed here
/** Redis-only files (they require ioredis 4 / redis 2 at load); the Redis datastore is tested in bottleneck.test.ts. */
const REDIS_FILES = ["ioredis.js", "node_redis.js"];
/** Helpers of the suite, not tests. */
const HELPERS = ["bottleneck.js", "context.js"];

interface Result {
  passed: string[];
  failed: string[];
  pending: number;
  why: Map<string, string>;
}

const checkout = process.argv[2];
if (checkout === undefined) throw new Error("usage: bottleneck.ts <path to a bottleneck checkout at the pinned tag>");
const pinned = (JSON.parse(readFileSync(join(ROOT, "node_modules/bottleneck/package.json"), "utf8")) as { version: string }).version;
const theirs = (JSON.parse(readFileSync(join(checkout, "package.json"), "utf8")) as { version: string }).version;
if (pinned !== theirs) throw new Error(`the checkout is bottleneck ${theirs}; the pinned version is ${pinned}`);

const dir = mkdtempSync(join(tmpdir(), "semscope-upstream-bottleneck-"));
try {
  for (const part of ["lib", "test", "package.json"]) cpSync(join(checkout, part), join(dir, part), { recursive: true });
  // The suite takes its Bottleneck from test/bottleneck.js: this one instruments every instance.
  writeFileSync(
    join(dir, "test/bottleneck.js"),
    `const Bottleneck = require('../lib/index.js')
if (process.env.SEMSCOPE_INSTRUMENT !== '1') { module.exports = Bottleneck } else {
  const { instrument } = require(${JSON.stringify(join(ROOT, "agent/src/index.ts"))})
  let n = 0
  module.exports = new Proxy(Bottleneck, {
    construct (target, args, newTarget) {
      const limiter = Reflect.construct(target, args, newTarget)
      const capped = limiter._store.storeOptions.maxConcurrent != null
      instrument(limiter, { name: 'upstream-' + (++n), leakThresholdMs: 60000, ...(capped ? {} : { permits: 1000000 }) })
      globalThis.__semscopeInstrumented = n
      return limiter
    }
  })
}
`,
  );
  // Apart from the copied package.json, whose devDependencies include a GitHub URL.
  const tools = join(dir, "tools");
  execFileSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", tools, "mocha@10.8.2"], { stdio: "ignore" });
  const mocha = join(tools, "node_modules/mocha/bin/mocha.js");

  const files = readdirSync(join(dir, "test"))
    .filter((f) => f.endsWith(".js") && !REDIS_FILES.includes(f) && !HELPERS.includes(f))
    .map((f) => `test/${f}`);
  /** One mocha run: the whole suite less EXCLUDED, or only the test whose full title is `only`. */
  const run = (instrumented: boolean, only?: string): Result => {
    const grep = only === undefined ? ["--grep", EXCLUDED, "--invert"] : ["--fgrep", only];
    const r = spawnSync(process.execPath, [mocha, "--reporter", "json", "--timeout", "30000", ...grep, "--exit", ...files], {
      cwd: dir,
      // In NODE_OPTIONS, so the suite's own child processes (test/spawn) can load the agent's
      // TypeScript too; bare runs pay the same start-up.
      env: { ...process.env, NODE_OPTIONS: `--import ${import.meta.resolve("tsx")}`, SEMSCOPE_INSTRUMENT: instrumented ? "1" : "0", DATASTORE: "local" },
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
    const at = r.stdout.indexOf("{\n");
    if (at < 0) throw new Error(`mocha printed no report (exit ${r.status}): ${r.stderr.slice(0, 2000)}`);
    const json = r.stdout.slice(at);
    const out = JSON.parse(json) as { passes: { fullTitle: string }[]; failures: { fullTitle: string; err: { message?: string } }[]; stats: { pending: number } };
    const why = new Map(out.failures.map((t) => [t.fullTitle, (t.err.message ?? "").split("\n")[0]!] as const));
    return { passed: out.passes.map((t) => t.fullTitle), failed: out.failures.map((t) => t.fullTitle), pending: out.stats.pending, why };
  };

  // Timing-based tests flake on a loaded machine: several alternating runs of the suite; a test
  // that failed in every instrumented run and no bare one is then run alone, CONFIRM times each
  // way, alternating, and blamed if it fails instrumented at least 3 times more often than bare.
  const runs = Number(process.env.UPSTREAM_RUNS ?? 3);
  const bare: Result[] = [];
  const inst: Result[] = [];
  for (let i = 0; i < runs; i++) {
    bare.push(run(false));
    inst.push(run(true));
  }
  const failures = (rs: Result[], t: string) => rs.filter((r) => r.failed.includes(t)).length;
  const all = [...new Set([...bare, ...inst].flatMap((r) => r.failed))].sort();
  const suspects = all.filter((t) => failures(inst, t) === runs && failures(bare, t) === 0);
  const CONFIRM = 5;
  const alone = new Map<string, { bare: number; inst: number }>();
  for (const t of suspects) {
    const tally = { bare: 0, inst: 0 };
    for (let i = 0; i < CONFIRM; i++) {
      tally.bare += run(false, t).failed.length;
      tally.inst += run(true, t).failed.length;
    }
    alone.set(t, tally);
  }
  const blamed = suspects.filter((t) => alone.get(t)!.inst - alone.get(t)!.bare >= 3);
  console.log(`bottleneck ${pinned} upstream suite, local datastore, ${runs} runs each: ${files.join(" ")} (excluded: "${EXCLUDED}*", which need the native module leakage; ${REDIS_FILES.join(", ")}, Redis only)`);
  for (const [what, rs] of [["bare        ", bare], ["instrumented", inst]] as const) {
    console.log(`${what}: ${rs.map((r) => `${r.passed.length} passed, ${r.failed.length} failed`).join("; ")}`);
  }
  for (const t of all) {
    const why = inst.find((r) => r.why.has(t))?.why.get(t) ?? bare.find((r) => r.why.has(t))?.why.get(t);
    const a = alone.get(t);
    const confirm = a === undefined ? "" : `; alone: ${a.bare}/${CONFIRM} bare, ${a.inst}/${CONFIRM} instrumented`;
    console.log(`  ${blamed.includes(t) ? "FAILS BECAUSE OF instrument()" : "flaky"}: ${t} (failed ${failures(bare, t)}/${runs} bare, ${failures(inst, t)}/${runs} instrumented${confirm}): ${why}`);
  }
  console.log(blamed.length === 0 ? "no test fails because of instrument()" : `${blamed.length} test(s) fail because of instrument()`);
  process.exitCode = blamed.length > 0 ? 1 : 0;
} finally {
  if (process.env.UPSTREAM_KEEP === "1") console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
