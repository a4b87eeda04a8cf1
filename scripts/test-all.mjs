// `npm test`: type checks, lint, then every test; ends with the plain line CI reads.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let passed = 0;
let failed = 0;

function step(name, cmd, args) {
  console.log(`\n== ${name}: ${cmd} ${args.join(" ")}`);
  const r = spawnSync(cmd, args, { stdio: "inherit", shell: false });
  if (r.status === 0) passed += 1;
  else {
    failed += 1;
    console.log(`== ${name} FAILED (exit ${r.status ?? r.signal})`);
  }
}

step("typecheck", "npm", ["run", "-s", "typecheck"]);
step("lint", "npm", ["run", "-s", "lint"]);

const out = join(mkdtempSync(join(tmpdir(), "semscope-test-")), "vitest.json");
console.log("\n== vitest");
const v = spawnSync("npx", ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${out}`], { stdio: "inherit" });
if (existsSync(out)) {
  const report = JSON.parse(readFileSync(out, "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  // A suite that fails to load has no tests to count: count it, so it cannot pass silently.
  for (const f of report.testResults ?? []) {
    if (f.status === "failed" && (f.assertionResults ?? []).length === 0) failed += 1;
  }
  if (report.numTotalTests === 0) failed += 1;
} else {
  console.log(`== vitest wrote no report (exit ${v.status})`);
  failed += 1;
}
if (v.status !== 0 && failed === 0) failed += 1;

console.log(`\ntests: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
