// A library's own upstream test suite against instrumented instances, as proof that instrument()
// changes nothing the library's users rely on. The upstream source is not in this repository and
// CI cannot fetch it (only the npm registry is reachable), so this runs by hand on a checkout:
//
//   npm run test:upstream -- <tarn|knex|mysql2|undici|piscina> <checkout> [git ref, default HEAD]
//
// <checkout> is a git directory or work tree (read at the ref), or a plain folder holding the
// tests (piscina's npm package ships its own). The chosen test files run twice on the library
// installed here (the supported version, not the checkout's own build): once bare, once with every
// pool the tests make passed through instrument() (leak stacks on); a test that fails only
// instrumented is a transparency failure. Each suite below says which upstream files it runs and
// why. Test runners and helpers are installed from the npm registry into a temporary folder, never
// into this repository; knex's and mysql2's suites get a PostgreSQL or MariaDB started for them.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startMariaDb } from "./support/mariadb.js";
import { startPostgres } from "./support/postgres.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const AGENT = join(ROOT, "agent/src/index.ts");
const TSX = import.meta.resolve("tsx");
const installed = (pkg: string): string => join(ROOT, "node_modules", pkg);

interface Server {
  env: Record<string, string>;
  stop(): Promise<void>;
}

interface Suite {
  /** Which upstream files run, and why those (printed with the result). */
  about: string;
  /** The checkout's files the run copies, chosen from all of them. */
  files: (all: readonly string[]) => string[];
  /** The test runner and helpers upstream's package.json names, pinned. */
  devDependencies: Record<string, string>;
  /** Writes the modules the tests load the library through, bare or instrumented. */
  shim: (dir: string, instrumented: boolean) => void;
  /** mocha (one run, JSON report), node:test (one run, our reporter), or each file its own process (exit code 0 = passed). */
  runner: { kind: "mocha"; args: (files: readonly string[]) => string[] } | { kind: "node-test"; tests: (files: readonly string[]) => string[] } | { kind: "scripts"; tests: (files: readonly string[]) => string[] };
  server?: () => Promise<Server>;
}

/**
 * The shim's common part: `__instrument(target, options)` instruments a pool the tests made
 * (leak watch on) and logs each instance instrumented or refused, so the report can say how many
 * of the tests' pools the run covered.
 */
const instrumentJs = (prefix: string): string => `const __semscope = require(${JSON.stringify(AGENT)});
const __fs = require("node:fs");
let __n = 0;
function __instrument(target, options) {
  try {
    __semscope.instrument(target, { name: ${JSON.stringify(prefix)} + "-" + process.pid + "-" + ++__n, leakThresholdMs: 60000, ...options });
    __fs.appendFileSync(process.env.SEMSCOPE_UPSTREAM_LOG, "instrumented\\n");
  } catch (err) {
    if (err === null || typeof err !== "object" || err.code !== "SEMSCOPE_ADAPTER") throw err;
    __fs.appendFileSync(process.env.SEMSCOPE_UPSTREAM_LOG, "refused: " + err.message.split("\\n")[0] + "\\n");
  }
  return target;
}
/** A class whose every new instance (subclasses' too) goes through __instrument; a static that is the class itself (Piscina.Piscina) answers this. */
function __instrumented(Class, options) {
  const proxy = new Proxy(Class, {
    construct(target, args, newTarget) { return __instrument(Reflect.construct(target, args, newTarget), options(args)); },
    get(target, key, receiver) { const v = Reflect.get(target, key, receiver); return v === target ? proxy : v; },
  });
  return proxy;
}
`;

const write = (path: string, text: string | Buffer): void => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};
const link = (dir: string, name: string, to: string): void => {
  if (!existsSync(join(dir, name))) symlinkSync(to, join(dir, name));
};

/**
 * mysql2's index.js or promise.js as the tests import it: the installed module (re-exported whole,
 * so ESM named imports see every name), its createPool replaced, in the test process only, by one
 * that instruments each pool it makes.
 */
const mysql2Shim = (module: string, instrumented: boolean): string => `"use strict";
module.exports = require(${JSON.stringify(join(installed("mysql2"), module))});
${instrumented ? `${instrumentJs(`upstream-mysql2-${module}`)}const own = module.exports.createPool;
module.exports.createPool = function createPool(...args) { return __instrument(own.apply(this, args), {}); };` : ""}
`;

/** knex's lib/ with every module the installed knex's own, and index.js (what `require('knex')` gives) instrumenting each knex made with a pool. */
function knexShim(dir: string, instrumented: boolean): void {
  const own = join(installed("knex"), "lib");
  mkdirSync(join(dir, "lib"), { recursive: true });
  for (const e of readdirSync(own)) if (e !== "index.js") link(join(dir, "lib"), e, join(own, e));
  write(join(dir, "knex.js"), `module.exports = require("./lib/index.js");\n`);
  write(
    join(dir, "lib/index.js"),
    `"use strict";
const Knex = require(${JSON.stringify(join(own, "index.js"))});
${
  instrumented
    ? `${instrumentJs("upstream-knex")}const proxy = new Proxy(Knex, {
  apply(target, self, args) { const db = Reflect.apply(target, self, args); if (db && db.client && db.client.pool) __instrument(db, {}); return db; },
  get(target, key, receiver) { const v = Reflect.get(target, key, receiver); return v === target ? proxy : v; },
});
module.exports = proxy;`
    : `module.exports = Knex;`
}
`,
  );
}

const SUITES: Record<string, Suite> = {
  tarn: {
    about: "tests.js, tarn's whole suite (all of it is the pool)",
    files: () => ["tests.js"],
    devDependencies: { mocha: "7.2.0", "expect.js": "0.3.1", bluebird: "3.7.2" },
    // tests.js does require('./'): an index.js with tarn's exports, Pool instrumented or not.
    shim: (dir, instrumented) =>
      write(
        join(dir, "index.js"),
        `"use strict";
const tarn = require(${JSON.stringify(installed("tarn"))});
${instrumented ? `${instrumentJs("upstream-tarn")}module.exports = { Pool: __instrumented(tarn.Pool, () => ({})), TimeoutError: tarn.TimeoutError };` : `module.exports = { Pool: tarn.Pool, TimeoutError: tarn.TimeoutError };`}
`,
      ),
    runner: { kind: "mocha", args: () => ["--timeout", "5000", "tests.js"] },
  },

  piscina: {
    about: "test/*.test.ts, the whole node:test suite of the npm package (every test makes a pool; the jest copy of ready-message is left out)",
    files: (all) => all.filter((f) => f.startsWith("test/") && !f.startsWith("test/jest/")).concat(["package.json", ...all.filter((f) => f.startsWith("dist/"))]),
    devDependencies: { "concat-stream": "2.0.0" },
    // The tests import '..' (dist/main.js) and '../dist' (dist/index.js): both take index.js's exports.
    shim: (dir, instrumented) => {
      const index = join(dir, "dist/index.js");
      const bare = join(dir, "dist/index.bare.js");
      if (!existsSync(bare)) cpSync(index, bare);
      const text = readFileSync(bare, "utf8");
      write(
        index,
        instrumented
          ? `${text}\n${instrumentJs("upstream-piscina")}exports.default = exports.Piscina = __instrumented(exports.Piscina, () => ({}));\n`
          : text,
      );
    },
    runner: { kind: "node-test", tests: (files) => files.filter((f) => /^test\/[^/]+\.test\.ts$/.test(f)) },
  },

  undici: {
    about:
      "test/pool.js (Pool) and test/node-test/agent.js (Agent, fetch and request through it): the tests of the two dispatchers the adapter wraps, against local servers they start",
    files: (all) => all.filter((f) => f === "test/pool.js" || f === "test/node-test/agent.js" || f.startsWith("test/utils/")),
    devDependencies: { "@matteo.collina/tspl": "0.2.0" },
    // The tests require '..' for undici and '../lib/...' for its symbols: index.js re-exports the
    // installed undici, lib/ is the installed one (one module instance, so the symbols match).
    shim: (dir, instrumented) => {
      link(dir, "lib", join(installed("undici"), "lib"));
      write(
        join(dir, "index.js"),
        `"use strict";
const undici = require(${JSON.stringify(installed("undici"))});
${
  instrumented
    ? `${instrumentJs("upstream-undici")}// Without a connection limit (undici's default) there is no cap: report one that is never reached.
const cap = (opts) => (opts && opts.connections ? {} : { permits: 1000000 });
module.exports = { ...undici, Pool: __instrumented(undici.Pool, (a) => cap(a[1])), Agent: __instrumented(undici.Agent, (a) => cap(a[0])) };`
    : `module.exports = undici;`
}
`,
      );
    },
    runner: { kind: "node-test", tests: () => ["test/pool.js", "test/node-test/agent.js"] },
  },
  knex: {
    about:
      "test/integration2/pool/, transaction/ and query/ (every query and transaction takes its connection from the pool), with their helpers and the suite's prep-db root hook, on a PostgreSQL started for the run (DB=postgres)",
    files: (all) =>
      all.filter((f) => /^test\/(integration2\/(pool|transaction|query|util)\/.*\.js|util\/[^/]+\.js|integration\/logger\.js|prep-db(-mocha)?\.js)$/.test(f)),
    devDependencies: { mocha: "10.8.2", chai: "4.5.0", "chai-as-promised": "7.1.2", sinon: "15.2.0", "sinon-chai": "3.7.0", lodash: "4.18.1", "pg-query-stream": "4.17.0" },
    shim: knexShim,
    runner: { kind: "mocha", args: (files) => ["--exit", "--timeout", "10000", "test/prep-db-mocha.js", ...files.filter((f) => f.endsWith(".spec.js"))] },
    server: async () => {
      const db = await startPostgres();
      const pg = (await import("pg")).default;
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      await c.query("CREATE DATABASE knex_test");
      await c.end();
      const config = join(mkdtempSync(join(tmpdir(), "semscope-upstream-knex-config-")), "knex-test.json");
      writeFileSync(config, JSON.stringify({ postgres: { host: "127.0.0.1", port: db.port, user: "postgres", database: "knex_test" } }));
      return {
        env: { DB: "postgres", KNEX_TEST: config },
        stop: async () => {
          rmSync(dirname(config), { recursive: true, force: true });
          await db.stop();
        },
      };
    },
  },

  mysql2: {
    about:
      "the pool tests: test/integration/test-pool*.test.mts, pool/, graceful-end/, dispose/*/pool.test.mts and test/unit/pool/ (pool clusters are left out: a cluster makes its pools itself, which the adapter does not take), on a MariaDB started for the run",
    files: (all) => all.filter((f) => f === "test/common.test.mts" || /^test\/(integration\/(test-pool[^/]*|pool\/[^/]*|dispose\/(a)?sync\/pool|graceful-end\/[^/]*)|unit\/pool\/[^/]*)\.test\.mts$/.test(f)),
    devDependencies: { poku: "4.5.0", "sql-escaper": "1.9.1" },
    // The tests import '../index.js', '../promise.js' and '../lib/...' from the package's root.
    shim: (dir, instrumented) => {
      link(dir, "lib", join(installed("mysql2"), "lib"));
      write(join(dir, "index.js"), mysql2Shim("index.js", instrumented));
      write(join(dir, "promise.js"), mysql2Shim("promise.js", instrumented));
    },
    runner: { kind: "scripts", tests: (files) => files.filter((f) => f.endsWith(".test.mts")) },
    server: async () => {
      const db = await startMariaDb();
      const mysql = (await import("mysql2/promise")).default;
      const c = await mysql.createConnection({ host: db.host, port: db.port, user: "root" });
      await c.query("CREATE DATABASE test");
      await c.end();
      return { env: { MYSQL_HOST: db.host, MYSQL_PORT: String(db.port), MYSQL_USER: "root", MYSQL_DATABASE: "test" }, stop: () => db.stop() };
    },
  },
};

interface Outcome {
  passed: string[];
  /** Skipped by upstream itself (it.skip / xit / { skip }). */
  pending: number;
  failed: { title: string; message: string }[];
}

/** The checkout's files at `ref` (a git directory or work tree), or a plain folder's. */
function listFiles(source: string, ref: string): { all: string[]; read: (f: string) => Buffer; at: string } {
  const gitDir = existsSync(join(source, ".git")) ? join(source, ".git") : existsSync(join(source, "HEAD")) ? source : undefined;
  if (gitDir !== undefined) {
    const all = execFileSync("git", ["--git-dir", gitDir, "ls-tree", "-r", "--name-only", ref], { encoding: "utf8", maxBuffer: 64 << 20 }).split("\n").filter(Boolean);
    return { all, read: (f) => execFileSync("git", ["--git-dir", gitDir, "show", `${ref}:${f}`], { maxBuffer: 64 << 20 }), at: `at ${ref}` };
  }
  const all: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (e === "node_modules") continue;
      if (statSync(p).isDirectory()) walk(p);
      else all.push(relative(source, p));
    }
  };
  walk(source);
  return { all, read: (f) => readFileSync(join(source, f)), at: `from ${source}` };
}

/** node:test's events as one JSON line per finished test (suites left out). */
const NODE_TEST_REPORTER = `export default async function* (source) {
  for await (const e of source) {
    if (e.type !== "test:pass" && e.type !== "test:fail") continue;
    const d = e.data;
    if (d.details && d.details.type === "suite") continue;
    const err = d.details && d.details.error;
    const message = err ? String((err.cause && err.cause.message) || err.message).split("\\n")[0] : "";
    yield JSON.stringify({ ok: e.type === "test:pass", skip: d.skip !== undefined || d.todo !== undefined, title: (d.file || "").replace(process.cwd() + "/", "") + ": " + d.name, message }) + "\\n";
  }
}
`;

function run(dir: string, suite: Suite, files: readonly string[], instrumented: boolean, env: Record<string, string>): Outcome {
  suite.shim(dir, instrumented);
  const opts = {
    cwd: dir,
    encoding: "utf8" as const,
    maxBuffer: 64 << 20,
    // In NODE_OPTIONS so the runners' child processes and worker threads load the agent's TypeScript too; bare runs pay the same start-up.
    env: { ...process.env, ...env, NODE_OPTIONS: `--import ${TSX}`, NODE_PATH: [join(dir, "node_modules"), join(ROOT, "node_modules")].join(":"), SEMSCOPE_UPSTREAM_LOG: join(dir, "instrumented.log") },
  };
  const r = suite.runner;
  if (r.kind === "mocha") {
    const out = spawnSync(process.execPath, [join(dir, "node_modules/mocha/bin/_mocha"), "--reporter", "json", ...r.args(files)], opts);
    // The report follows whatever the tests printed.
    const start = out.stdout.indexOf('{\n  "stats"');
    if (start < 0) throw new Error(`no mocha report (exit ${out.status}): ${out.stderr.slice(-2000)}`);
    const report = JSON.parse(out.stdout.slice(start)) as { passes: { fullTitle: string }[]; pending: unknown[]; failures: { fullTitle: string; err: { message?: string } }[] };
    return { passed: report.passes.map((t) => t.fullTitle), pending: report.pending.length, failed: report.failures.map((t) => ({ title: t.fullTitle, message: t.err.message ?? "" })) };
  }
  if (r.kind === "node-test") {
    writeFileSync(join(dir, "semscope-reporter.mjs"), NODE_TEST_REPORTER);
    const out = spawnSync(process.execPath, ["--test", "--test-reporter=./semscope-reporter.mjs", "--test-concurrency=1", ...r.tests(files)], opts);
    const lines = out.stdout.split("\n").filter((l) => l.startsWith("{"));
    if (lines.length === 0) throw new Error(`no node:test report (exit ${out.status}): ${out.stderr.slice(-2000)}`);
    const tests = lines.map((l) => JSON.parse(l) as { ok: boolean; skip: boolean; title: string; message: string });
    return {
      passed: tests.filter((t) => t.ok && !t.skip).map((t) => t.title),
      pending: tests.filter((t) => t.skip).length,
      failed: tests.filter((t) => !t.ok).map((t) => ({ title: t.title, message: t.message })),
    };
  }
  const outcome: Outcome = { passed: [], pending: 0, failed: [] };
  for (const f of r.tests(files)) {
    const out = spawnSync(process.execPath, [f], { ...opts, timeout: 120_000 });
    if (out.status === 0) outcome.passed.push(f);
    else {
      const lines = `${out.stdout}\n${out.stderr}`.split("\n").map((l) => l.trim());
      const why = lines.filter((l) => /✘|Error|fail|assert/i.test(l)).slice(0, 4).join(" | ");
      outcome.failed.push({ title: f, message: `exit ${out.status ?? out.signal}: ${why.slice(0, 600)}` });
    }
  }
  return outcome;
}

async function main(): Promise<void> {
  const [lib, source, ref = "HEAD"] = process.argv.slice(2);
  const suite = lib === undefined ? undefined : SUITES[lib];
  if (suite === undefined || source === undefined) {
    console.error(`usage: npm run test:upstream -- <${Object.keys(SUITES).join("|")}> <checkout (git directory or work tree, or a folder)> [ref]`);
    process.exit(2);
  }
  const version = (JSON.parse(readFileSync(join(installed(lib), "package.json"), "utf8")) as { version: string }).version;
  const dir = mkdtempSync(join(tmpdir(), `semscope-upstream-${lib}-`));
  const server = await suite.server?.();
  try {
    const { all, read, at } = listFiles(resolve(source), ref);
    const files = suite.files(all);
    for (const f of files) write(join(dir, f), read(f));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ ...(existsSync(join(dir, "package.json")) ? (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as object) : {}), private: true, devDependencies: suite.devDependencies, dependencies: {}, optionalDependencies: {}, scripts: {} }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", "--silent"], { cwd: dir, stdio: "inherit" });
    const env = server?.env ?? {};
    const bare = run(dir, suite, files, false, env);
    rmSync(join(dir, "instrumented.log"), { force: true });
    const inst = run(dir, suite, files, true, env);
    const log = existsSync(join(dir, "instrumented.log")) ? readFileSync(join(dir, "instrumented.log"), "utf8").split("\n").filter(Boolean) : [];
    const refused = [...new Set(log.filter((l) => l.startsWith("refused")))];
    const bareFailed = new Set(bare.failed.map((f) => f.title));
    const onlyInstrumented = inst.failed.filter((f) => !bareFailed.has(f.title));
    console.log(`${lib} ${version}, upstream tests ${at}: ${suite.about}`);
    console.log(`  bare:         ${bare.passed.length} passed, ${bare.failed.length} failed, ${bare.pending} skipped upstream`);
    console.log(`  instrumented: ${inst.passed.length} passed, ${inst.failed.length} failed, ${inst.pending} skipped upstream`);
    console.log(`  instances instrumented: ${log.filter((l) => l === "instrumented").length}, refused by the adapter: ${log.length - log.filter((l) => l === "instrumented").length}`);
    for (const r of refused) console.log(`    ${r}`);
    for (const f of bare.failed) console.log(`  fails bare too (not the adapter): ${f.title}: ${f.message.split("\n")[0]}`);
    for (const f of onlyInstrumented) console.log(`  FAILS ONLY INSTRUMENTED: ${f.title}: ${f.message.split("\n")[0]}`);
    console.log(`tests: ${inst.passed.length} passed, ${onlyInstrumented.length} failed`);
    process.exitCode = onlyInstrumented.length > 0 ? 1 : 0;
  } finally {
    await server?.stop();
    if (process.env.UPSTREAM_KEEP === "1") console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
