// The shipped Prometheus rules pass promtool's checks and their unit tests
// (semscope.rules.test.yml), and every alert in them is tested both firing and staying quiet.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const path = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const RULES = path("../../docs/prometheus/semscope.rules.yml");
const CONFIG = path("../../docs/prometheus/prometheus.yml");
const TESTS = path("./semscope.rules.test.yml");

function promtool(...args: string[]): { status: number | null; out: string } {
  const r = spawnSync("promtool", args, { encoding: "utf8" });
  if (r.error !== undefined) throw new Error(`promtool not found (apt-get install prometheus; .ci/run does this): ${r.error.message}`);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("docs/prometheus", () => {
  it("the rules and the scrape config pass promtool check (lint included)", () => {
    const rules = promtool("check", "rules", RULES);
    expect(rules.out).toMatch(/SUCCESS: \d+ rules found/);
    expect(rules.status).toBe(0);
    const config = promtool("check", "config", CONFIG);
    expect(config.out).toContain("is valid prometheus config file syntax");
    expect(config.status).toBe(0);
  });

  it("every rule's unit tests pass under promtool test rules", () => {
    const r = promtool("test", "rules", TESTS);
    expect(r.out, r.out).toContain("SUCCESS");
    expect(r.status).toBe(0);
  });

  it("every alert has a test case where it fires", () => {
    // promtool compares a case's expected alerts exactly, so the semaphores a firing case leaves
    // out of its expectation (and the empty expectations) are the cases where it must not fire.
    const alerts = new Set([...readFileSync(RULES, "utf8").matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]));
    expect(alerts).toEqual(new Set(["leak", "convoy", "saturated", "timeouts", "double_release", "over_budget", "agent_down"]));
    const tests = readFileSync(TESTS, "utf8");
    for (const alert of alerts) {
      const firing = new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels:`);
      expect(firing.test(tests), `${alert} has a firing case`).toBe(true);
    }
  });
});
