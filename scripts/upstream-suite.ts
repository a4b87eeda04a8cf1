// A library's own upstream test suite against instrumented instances, as proof that instrument()
// changes nothing the library's users rely on. The upstream source is not in this repository and
// CI cannot fetch it (only the npm registry is reachable), so this runs by hand on a checkout:
//
//   npm run test:upstream -- tarn <path to a tarn.js git directory or work tree> [git ref, default HEAD]
//
// The suite runs twice on the tarn installed here (the supported version, not the checkout's own
// build): once on the bare library, once with every Pool it makes instrumented (leak stacks on);
// a test that fails only instrumented is a transparency failure. Upstream's test runner and
// helpers are installed from the npm registry into a temporary folder, never into this repository.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

interface Suite {
  /** Files of the checkout the run needs. */
  files: readonly string[];
  /** The test runner and helpers upstream's package.json names, pinned to what it names. */
  devDependencies: Record<string, string>;
  /** The module upstream's tests require for the library ("./" for tarn), written as a shim. */
  shim: { path: string; source: (instrumented: boolean) => string };
  mochaArgs: readonly string[];
}

const SUITES: Record<string, Suite> = {
  tarn: {
    files: ["tests.js"],
    devDependencies: { mocha: "7.2.0", "expect.js": "0.3.1", bluebird: "3.7.2" },
    // tests.js does require('./'): an index.js with tarn's exports, Pool instrumented or not.
    shim: {
      path: "index.js",
      source: (instrumented) => `"use strict";
const tarn = require(${JSON.stringify(join(ROOT, "node_modules/tarn"))});
${
  instrumented
    ? `const { instrument } = require(${JSON.stringify(join(ROOT, "agent/src/index.ts"))});
let n = 0;
class Pool extends tarn.Pool {
  constructor(opt) {
    super(opt);
    instrument(this, { name: "upstream-tarn-" + ++n, leakThresholdMs: 60000 });
  }
}
module.exports = { Pool, TimeoutError: tarn.TimeoutError };`
    : `module.exports = { Pool: tarn.Pool, TimeoutError: tarn.TimeoutError };`
}
`,
    },
    mochaArgs: ["--timeout", "5000", "--reporter", "json", "tests.js"],
  },
};

interface Outcome {
  passed: string[];
  /** Skipped by upstream itself (it.skip / xit). */
  pending: number;
  failed: { title: string; message: string }[];
}

function checkout(source: string, ref: string, into: string, files: readonly string[]): void {
  const gitDir = existsSync(join(source, ".git")) ? join(source, ".git") : source;
  for (const f of files) writeFileSync(join(into, f), execFileSync("git", ["--git-dir", gitDir, "show", `${ref}:${f}`], { maxBuffer: 64 << 20 }));
}

function run(dir: string, suite: Suite, instrumented: boolean): Outcome {
  writeFileSync(join(dir, suite.shim.path), suite.shim.source(instrumented));
  const out = spawnSync(process.execPath, ["--import", import.meta.resolve("tsx"), join(dir, "node_modules/mocha/bin/_mocha"), ...suite.mochaArgs], {
    cwd: dir,
    encoding: "utf8",
    maxBuffer: 64 << 20,
    env: { ...process.env, NODE_PATH: join(ROOT, "node_modules") },
  });
  const start = out.stdout.indexOf("{\n");
  if (start < 0) throw new Error(`no mocha report (exit ${out.status}): ${out.stderr.slice(-2000)}`);
  const report = JSON.parse(out.stdout.slice(start)) as { passes: { fullTitle: string }[]; pending: unknown[]; failures: { fullTitle: string; err: { message?: string } }[] };
  return { passed: report.passes.map((t) => t.fullTitle), pending: report.pending.length, failed: report.failures.map((t) => ({ title: t.fullTitle, message: t.err.message ?? "" })) };
}

function main(): void {
  const [lib, source, ref = "HEAD"] = process.argv.slice(2);
  const suite = lib === undefined ? undefined : SUITES[lib];
  if (suite === undefined || source === undefined) {
    console.error(`usage: npm run test:upstream -- <${Object.keys(SUITES).join("|")}> <checkout (git directory or work tree)> [ref]`);
    process.exit(2);
  }
  const version = (JSON.parse(readFileSync(join(ROOT, "node_modules", lib, "package.json"), "utf8")) as { version: string }).version;
  const dir = mkdtempSync(join(tmpdir(), `semscope-upstream-${lib}-`));
  try {
    checkout(resolve(source), ref, dir, suite.files);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, devDependencies: suite.devDependencies }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", "--silent"], { cwd: dir, stdio: "inherit" });
    const bare = run(dir, suite, false);
    const inst = run(dir, suite, true);
    const bareFailed = new Set(bare.failed.map((f) => f.title));
    const onlyInstrumented = inst.failed.filter((f) => !bareFailed.has(f.title));
    console.log(`${lib} ${version}, upstream tests at ${ref}:`);
    console.log(`  bare:         ${bare.passed.length} passed, ${bare.failed.length} failed, ${bare.pending} skipped upstream`);
    console.log(`  instrumented: ${inst.passed.length} passed, ${inst.failed.length} failed, ${inst.pending} skipped upstream`);
    for (const f of bare.failed) console.log(`  fails bare too (not the adapter): ${f.title}: ${f.message.split("\n")[0]}`);
    for (const f of onlyInstrumented) console.log(`  FAILS ONLY INSTRUMENTED: ${f.title}: ${f.message.split("\n")[0]}`);
    console.log(`tests: ${inst.passed.length} passed, ${onlyInstrumented.length} failed`);
    process.exitCode = onlyInstrumented.length > 0 ? 1 : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
