// /metrics written a slice of rows at a time (main/hub/dashboard/metrics.ts): with more semaphores,
// fleet entries and agents than a slice holds, the text is still one well-formed exposition (each
// family once, its series together, every semaphore's series there once; Prometheus' own promtool
// parses it), and scrapes within the share window get one render while later ones see new values.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { HubMetrics } from "../../../../main/hub/dashboard/metrics.js";
import { makeHello, makeInfo, makeSample, makeSummary, T0 } from "../../../fixtures/protocol.js";

const AGENTS = 3;
const PER_AGENT = 130;

function loadedCore(): { core: HubCore; sample(inUse: number): void } {
  const core = new HubCore({ now: () => T0, version: "t", thresholds: {}, maxHistories: 1000, forgetAfterMs: 0, recorder: undefined, deferStores: () => undefined });
  const recs = Array.from({ length: AGENTS }, (_, a) => {
    // A quote, a backslash and a newline in a label value: escaped by prom-client in every slice.
    const rec = core.hello(a + 1, makeHello(`agent-${a}`, { service: a === 2 ? 'odd "svc"\\\n' : "checkout", instance: `web-${a}` }));
    expect(core.register(rec, { semaphores: Array.from({ length: PER_AGENT }, (_, i) => makeInfo(`s${i}`)) })).toEqual({ ok: true });
    return rec;
  });
  let seq = 0;
  const sample = (inUse: number) => {
    for (const rec of recs) {
      const items = Array.from({ length: PER_AGENT }, (_, i) => makeSample({ id: `s${i}`, inUse, acquired: 2, released: 2, waitMs: makeSummary(1, 2), holdMs: makeSummary(5, 9) }));
      expect(core.samples(rec, { seq, t: T0 + seq * 1000, intervalMs: 1000, items }).ok).toBe(true);
    }
    seq++;
  };
  sample(3);
  return { core, sample };
}

/** Series lines by metric name, in the order met; throws if a family's lines are not together. */
function families(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current = "";
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const name = line.startsWith("#") ? line.split(" ")[2] : /^[a-z_:]+/.exec(line)?.[0] ?? "";
    if (name !== current) {
      if (out.has(name)) throw new Error(`${name} appears in two places`);
      out.set(name, []);
      current = name;
    }
    if (!line.startsWith("#")) out.get(name)?.push(line);
  }
  return out;
}

describe("/metrics in slices", () => {
  it("writes each family once, its series together, every semaphore once, in text Prometheus parses", async () => {
    const { core } = loadedCore();
    const text = await new HubMetrics(core, () => 0).render();
    const fams = families(text);
    const semaphores = AGENTS * PER_AGENT;
    expect(fams.get("semscope_semaphore_cap")).toHaveLength(semaphores);
    expect(new Set(fams.get("semscope_semaphore_cap")).size).toBe(semaphores);
    expect(fams.get("semscope_semaphore_status")).toHaveLength(4 * semaphores);
    expect(fams.get("semscope_semaphore_wait_seconds")).toHaveLength(4 * semaphores);
    expect(fams.get("semscope_semaphore_acquired_total")).toHaveLength(semaphores);
    expect(fams.get("semscope_fleet_cap")).toHaveLength(PER_AGENT * 2);
    expect(fams.get("semscope_hub_agent_up")).toHaveLength(AGENTS);
    expect(text.match(/^# HELP /gm)).toHaveLength(fams.size);
    expect(text).toContain('semscope_semaphore_in_use{service="odd \\"svc\\"\\\\\\n",instance="web-2",semaphore="s129"} 3');
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    // Its lint notes (a quantile label on a gauge) are the format's design; a parse error is not.
    expect(check.error).toBeUndefined();
    expect(check.stderr).not.toMatch(/error while linting/);
  });

  it("shares a render among scrapes within the share window, and renders afresh after it", async () => {
    const { core, sample } = loadedCore();
    const line = 'semscope_semaphore_in_use{service="checkout",instance="web-0",semaphore="s0"}';
    const shared = new HubMetrics(core, () => 0, undefined, { shareMs: 60_000 });
    const [a, b] = await Promise.all([shared.render(), shared.render()]);
    expect(b).toBe(a);
    sample(7);
    expect(await shared.render()).toContain(`${line} 3`);
    const fresh = new HubMetrics(core, () => 0, undefined, { shareMs: 0 });
    await fresh.render();
    sample(8);
    expect(await fresh.render()).toContain(`${line} 8`);
  });
});
