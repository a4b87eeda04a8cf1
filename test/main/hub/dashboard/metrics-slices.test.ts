// /metrics written a slice of rows at a time (main/hub/dashboard/metrics.ts): with more semaphores,
// fleet entries and agents than a slice holds, the text is still one well-formed exposition (each
// family once, its series together, every semaphore's series there once; Prometheus' own promtool
// parses it), and scrapes within the share window get one render while later ones see new values.
// A render's memory is reused by later ones only once every scrape reading it (plain or gzip'd) is done.
import { spawnSync } from "node:child_process";
import { get, createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { SlicedFamily } from "../../../../main/hub/dashboard/metrics-families.js";
import { HubMetrics } from "../../../../main/hub/dashboard/metrics.js";
import type { Rows } from "../../../../main/hub/dashboard/metrics-rows.js";
import { makeHello, makeInfo, makeSample, makeSummary, T0 } from "../../../fixtures/protocol.js";

const AGENTS = 3;
const PER_AGENT = 130;

function loadedCore(perAgent = PER_AGENT): { core: HubCore; sample(inUse: number): void; disconnect(agent: number): void } {
  const core = new HubCore({ now: () => T0, version: "t", thresholds: {}, maxHistories: AGENTS * perAgent, forgetAfterMs: 0, recorder: undefined, deferStores: () => undefined });
  const recs = Array.from({ length: AGENTS }, (_, a) => {
    // A quote, a backslash and a newline in a label value: escaped by prom-client in every slice.
    const rec = core.hello(a + 1, makeHello(`agent-${a}`, { service: a === 2 ? 'odd "svc"\\\n' : "checkout", instance: `web-${a}` }));
    // Some budgets and a global scope, so the fleet's sums are not all alike.
    const infos = Array.from({ length: perAgent }, (_, i) => makeInfo(`s${i}`, { budget: i % 3 === 0 ? 2 * i + 1 : undefined, scope: i % 7 === 0 ? "global" : "process" }));
    expect(core.register(rec, { semaphores: infos })).toEqual({ ok: true });
    return rec;
  });
  let seq = 0;
  const sample = (inUse: number) => {
    for (const rec of recs) {
      const items = Array.from({ length: perAgent }, (_, i) => makeSample({ id: `s${i}`, inUse, acquired: 2, released: 2, waitMs: makeSummary(1, 2), holdMs: makeSummary(5, 9) }));
      expect(core.samples(rec, { seq, t: T0 + seq * 1000, intervalMs: 1000, items }).ok).toBe(true);
    }
    seq++;
  };
  sample(3);
  return { core, sample, disconnect: (a) => core.disconnect(a + 1, recs[a]) };
}

/** Serves `metrics` on a free port; the server is closed after the test. */
async function serving(metrics: HubMetrics): Promise<string> {
  const server = createServer((req, res) => void metrics.serve(res, req.headers["accept-encoding"]));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
}
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

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

describe("what /metrics relies on in prom-client (pinned: package.json)", () => {
  it("formats a value's sharedLabels after its own labels, escaped, and once per labels object however many lines and renders carry it", async () => {
    let reads = 0;
    // A semaphore's labels as metrics-families.ts passes them: one frozen object, read here through a counting getter.
    const shared = Object.freeze(Object.defineProperty({}, "semaphore", { enumerable: true, get: () => (reads++, 'a "b"\\\n') }) as Record<string, string>);
    const fam = new SlicedFamily(
      { name: "t_seconds", help: "h", labelNames: ["semaphore", "quantile"], fill: (_rows, from, to, push) => void [0.5, 1].slice(from, to).forEach((q) => push(q, { quantile: String(q) }, shared)) },
      "gauge",
      () => 2,
    );
    Object.assign(fam, { rows: {} as Rows, from: 0, to: 2 });
    const line = (q: number) => `t_seconds{quantile="${q}",semaphore="a \\"b\\"\\\\\\n"} ${q}`;
    for (let i = 0; i < 3; i++) expect(await fam.registry.metrics()).toBe(`# HELP t_seconds h\n# TYPE t_seconds gauge\n${line(0.5)}\n${line(1)}\n`);
    expect(reads).toBe(1);
  });
});

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

  it("gives the fleet's sums as fleet() does, over more groups and semaphores than are read at once, a replica gone", async () => {
    const { core, disconnect } = loadedCore(700);
    disconnect(1);
    const fams = families(await new HubMetrics(core, () => 0).render());
    const fleet = core.engine.fleet().filter((f) => f.service === "checkout");
    expect(fleet).toHaveLength(700);
    expect(fleet.every((f) => f.instances === 1)).toBe(true);
    const series = (name: string, value: (f: (typeof fleet)[number]) => number | null) =>
      fleet.flatMap((f) => {
        const v = value(f);
        return v === null ? [] : [`semscope_fleet_${name}{service="checkout",semaphore="${f.name}",scope="${f.scope}"} ${v}`];
      });
    const checkout = (name: string) => fams.get(`semscope_fleet_${name}`)?.filter((l) => l.includes('service="checkout"'));
    expect(checkout("cap")).toEqual(series("cap", (f) => f.cap));
    expect(checkout("in_use")).toEqual(series("in_use", (f) => f.inUse));
    expect(checkout("instances")).toEqual(series("instances", (f) => f.instances));
    expect(checkout("budget")).toEqual(series("budget", (f) => f.budget));
    expect(fams.get("semscope_fleet_cap")).toHaveLength(1400);
    expect(fams.get("semscope_semaphore_cap")).toHaveLength(AGENTS * 700);
  });

  it("keeps a render whole for a scraper still reading it while later renders reuse the memory of finished ones", async () => {
    const { core, sample } = loadedCore(1000);
    const url = await serving(new HubMetrics(core, () => 0, undefined, { shareMs: 0 }));
    const whole = async () => (await fetch(url)).text();
    const first = await whole();
    expect(first.length).toBeGreaterThan(5_000_000);
    // Scrapers that read their first bytes and then stop, one plain and one gzip'd: the rest of
    // their render waits for them.
    const stalled = async (acceptEncoding: string) => {
      const res = await new Promise<IncomingMessage>((resolve, reject) => get(url, { headers: { "accept-encoding": acceptEncoding } }, resolve).on("error", reject));
      const head: Buffer[] = [];
      await new Promise<void>((resolve) => res.once("data", (b: Buffer) => (head.push(b), res.pause(), resolve())));
      return async () => {
        res.on("data", (b: Buffer) => head.push(b));
        res.resume();
        await new Promise((r) => res.once("end", r));
        return Buffer.concat(head);
      };
    };
    const slow = await stalled("identity");
    const slowGzip = await stalled("gzip");
    // Its render done (a scrape joins one in progress), values change and other scrapes render
    // afresh, several times over.
    expect((await whole()) === first).toBe(true);
    sample(8);
    for (let i = 0; i < 3; i++) expect((await whole()).includes('semscope_semaphore_in_use{service="checkout",instance="web-0",semaphore="s999"} 8')).toBe(true);
    // What they read is the render they started: byte for byte the first one (in_use 3 throughout).
    const read = (await slow()).toString("utf8");
    expect(read.length).toBe(first.length);
    expect(read === first).toBe(true);
    expect(gunzipSync(await slowGzip()).toString("utf8") === first).toBe(true);
  });
});
