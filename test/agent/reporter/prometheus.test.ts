// agent.prometheus(): valid text exposition of the numbers the hub gets, with the labels
// service, instance and semaphore, from prom-client's own registry (never the global one).
import { register as globalRegistry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { connect, Semaphore, type Agent } from "../../../agent/src/index.js";
import { DURATION_BUCKETS_SECONDS } from "../../../agent/src/reporter/prometheus.js";
import { deadPort, waitUntil } from "./fake-hub.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

interface Line {
  name: string;
  labels: Record<string, string>;
  value: number;
}

// The text format's grammar (exposition format 0.0.4), strictly: a line is a comment, blank, or
// name{label="value",...} value.
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function parse(text: string): { lines: Line[]; types: Map<string, string>; helps: Set<string> } {
  const lines: Line[] = [];
  const types = new Map<string, string>();
  const helps = new Set<string>();
  expect(text.endsWith("\n")).toBe(true);
  for (const raw of text.split("\n")) {
    if (raw === "") continue;
    if (raw.startsWith("# HELP ")) {
      helps.add(raw.split(" ")[2]);
      continue;
    }
    if (raw.startsWith("# TYPE ")) {
      const [, , name, type] = raw.split(" ");
      expect(["counter", "gauge", "histogram"]).toContain(type);
      types.set(name, type);
      continue;
    }
    const m = SAMPLE.exec(raw);
    expect(m, `not a sample line: ${raw}`).not.toBeNull();
    const labels: Record<string, string> = {};
    const body = m?.[3] ?? "";
    expect(body.replace(LABEL, "").replace(/,/g, "")).toBe("");
    for (const l of body.matchAll(LABEL)) labels[l[1]] = l[2];
    lines.push({ name: m?.[1] as string, labels, value: Number(m?.[4].replace("+Inf", "Infinity")) });
  }
  return { lines, types, helps };
}

async function agentWithWork(): Promise<{ agent: Agent; db: Semaphore }> {
  const db = new Semaphore({ name: "prom-db", permits: 3 });
  cleanup.push(() => db.close());
  // A dead hub: the numbers do not depend on one being there.
  const agent = connect({ url: `http://127.0.0.1:${await deadPort()}`, service: "check\"out", instance: "i-1", intervalMs: 50 });
  cleanup.push(() => agent.close());
  for (let i = 0; i < 7; i++) {
    const p = await db.acquire();
    await new Promise((r) => setTimeout(r, 2));
    p.release();
  }
  const held = await db.acquire();
  cleanup.push(() => held.release());
  return { agent, db };
}

describe("agent.prometheus()", () => {
  it("is well-formed text with the labels service, instance and semaphore", async () => {
    const { agent } = await agentWithWork();
    await waitUntil(() => agent.prometheus().includes("semscope_semaphore_acquired_total{") && agent.seq >= 2, "a sampled interval");
    const { lines, types, helps } = parse(agent.prometheus());

    for (const name of ["semscope_semaphore_in_use", "semscope_semaphore_cap", "semscope_semaphore_available", "semscope_semaphore_waiters", "semscope_semaphore_oldest_wait_seconds"]) {
      expect(types.get(name)).toBe("gauge");
    }
    for (const name of ["semscope_semaphore_acquired_total", "semscope_semaphore_released_total", "semscope_semaphore_timeouts_total", "semscope_semaphore_rejections_total", "semscope_semaphore_aborts_total", "semscope_semaphore_double_releases_total", "semscope_semaphore_lease_expiries_total"]) {
      expect(types.get(name)).toBe("counter");
    }
    expect(types.get("semscope_semaphore_wait_duration_seconds")).toBe("histogram");
    expect(types.get("semscope_semaphore_hold_duration_seconds")).toBe("histogram");
    for (const name of types.keys()) expect(helps.has(name)).toBe(true);

    const ours = lines.filter((l) => l.labels.semaphore === "prom-db");
    expect(ours.length).toBeGreaterThan(0);
    for (const l of ours) {
      // The quote in the service name comes back escaped, as the format requires.
      expect(l.labels.service).toBe('check\\"out');
      expect(l.labels.instance).toBe("i-1");
    }
    const value = (name: string, extra: Record<string, string> = {}) =>
      ours.find((l) => l.name === name && Object.entries(extra).every(([k, v]) => l.labels[k] === v))?.value;
    expect(value("semscope_semaphore_cap")).toBe(3);
    expect(value("semscope_semaphore_in_use")).toBe(1);
    expect(value("semscope_semaphore_available")).toBe(2);
    expect(value("semscope_semaphore_acquired_total")).toBe(8);
    expect(value("semscope_semaphore_released_total")).toBe(7);

    for (const h of ["semscope_semaphore_wait_duration_seconds", "semscope_semaphore_hold_duration_seconds"]) {
      const buckets = ours.filter((l) => l.name === `${h}_bucket`);
      expect(buckets.map((b) => b.labels.le)).toEqual([...DURATION_BUCKETS_SECONDS.map(String), "+Inf"]);
      for (let i = 1; i < buckets.length; i++) expect(buckets[i].value).toBeGreaterThanOrEqual(buckets[i - 1].value);
      expect(buckets.at(-1)?.value).toBe(value(`${h}_count`));
    }
    expect(value("semscope_semaphore_wait_duration_seconds_count")).toBe(8);
    expect(value("semscope_semaphore_hold_duration_seconds_count")).toBe(7);
    // Seven holds of >= 2 ms: none under 1 ms, a sum of at least 14 ms.
    expect(value("semscope_semaphore_hold_duration_seconds_bucket", { le: "0.001" })).toBe(0);
    expect(value("semscope_semaphore_hold_duration_seconds_sum")).toBeGreaterThan(0.012);
  });

  it("renders exactly what its own prom-client registry renders, and stays out of the global one", async () => {
    const { agent } = await agentWithWork();
    await waitUntil(() => agent.prometheus().includes("semscope_semaphore_acquired_total{"), "a sampled interval");
    expect(await agent.registry.metrics()).toBe(agent.prometheus());
    expect(await globalRegistry.metrics()).not.toContain("semscope_");
    expect(agent.registry).not.toBe(globalRegistry);
  });
});
