// The HTTP API on the hub's port: /api/state in exactly docs/protocol.md's shape, alerts newest first,
// Prometheus metrics with the protocol's labels, history and fleet windows, thresholds and acks
// with their validation, and the dashboard's files in web mode.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { get, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { sampleSchema } from "../../../../shared/protocol/index.js";
import { agent, cleanupAll, client, getJson, hello, info, request, sample, startHub, T0, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const alertSchema = z.strictObject({
  id: z.string(),
  rule: z.enum(["leak", "convoy", "starvation", "timeouts", "double_release", "agent_down", "over_budget", "order_inversion"]),
  severity: z.enum(["warning", "critical"]),
  key: z.string(),
  service: z.string(),
  instance: z.string().optional(),
  semaphore: z.string().optional(),
  message: z.string(),
  raisedAt: z.number(),
  resolvedAt: z.number().nullable(),
  acknowledged: z.boolean(),
  evidence: z.record(z.string(), z.unknown()).optional(),
});

/** docs/protocol.md's /api/state, strictly: no field missing, none extra. */
const stateSchema = z.strictObject({
  hub: z.strictObject({
    version: z.string(),
    startedAt: z.number(),
    rejected: z.number().int().min(0),
    admission: z
      .strictObject({
        agents: z.number().int().min(0),
        semaphores: z.number().int().min(0),
        limits: z.strictObject({
          maxAgents: z.number(),
          maxAgentsPerAddress: z.number(),
          maxSemaphores: z.number(),
          maxSemaphoresPerAddress: z.number(),
          maxPendingAgents: z.number(),
          maxPendingAgentsPerAddress: z.number(),
          helloTimeoutMs: z.number(),
        }),
        refused: z.strictObject({ agents: z.number(), semaphores: z.number(), identity: z.number(), dashboards: z.number(), connections: z.number() }),
        refusedScope: z.strictObject({
          agents: z.strictObject({ address: z.number(), total: z.number() }),
          semaphores: z.strictObject({ address: z.number(), total: z.number() }),
          dashboards: z.strictObject({ address: z.number(), total: z.number() }),
          connections: z.strictObject({ address: z.number(), total: z.number() }),
        }),
        evictedAgents: z.number(),
        helloTimeouts: z.number(),
      })
      .optional(),
  }),
  agents: z.array(z.strictObject({ agentId: z.string(), service: z.string(), instance: z.string(), connected: z.boolean(), lastSeen: z.number() })),
  semaphores: z.array(
    z.strictObject({
      key: z.string(),
      agentId: z.string(),
      service: z.string(),
      instance: z.string(),
      id: z.string(),
      name: z.string(),
      kind: z.string(),
      cap: z.number(),
      // Null until the semaphore's first sample (state-before-sample.test.ts).
      inUse: z.number().nullable(),
      available: z.number().nullable(),
      waiters: z.number().nullable(),
      oldestWaitMs: z.number().nullable(),
      status: z.enum(["ok", "saturated", "convoy", "leak"]),
      last: sampleSchema.nullable(),
    }),
  ),
  alerts: z.array(alertSchema),
  // Optional addition (global semaphores only; docs/protocol.md, GlobalView).
  globals: z
    .array(
      z.strictObject({
        key: z.string(), service: z.string(), name: z.string(), cap: z.number(), inUse: z.number().nullable(), readBy: z.string().nullable(),
        agentsInUse: z.number(), replicas: z.number().int(), orphans: z.array(z.strictObject({ id: z.string(), instance: z.string() })), unattributed: z.number(),
      }),
    )
    .optional(),
});

async function seeded() {
  const hub = await startHub({ now: () => T0 + 500 });
  const s = await agent(hub, "a1", [info("db", { name: "postgres", kind: "pg-pool" }), info("idle")]);
  for (let i = 0; i < 3; i++) {
    const ack = await request<AckAnswer>(s, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [sample("db", { inUse: 3 + i, acquired: 10 })] });
    expect(ack.ok).toBe(true);
  }
  // Breaks the leak check: a leak alert, critical, at once.
  await request(s, "samples", { seq: 3, t: T0 + 3000, intervalMs: 1000, items: [sample("db", { inUse: 8, available: 1 })] });
  await request(s, "events", { items: [{ t: T0 + 3500, id: "db", type: "double_release", stack: "at release()" }] });
  return { hub, s };
}

describe("GET /api/state", () => {
  it("has exactly the protocol's shape", async () => {
    const { hub } = await seeded();
    const { status, body, headers } = await getJson(hub, "/api/state");
    expect(status).toBe(200);
    expect(headers.get("content-type")).toMatch(/^application\/json/);
    const state = stateSchema.parse(body);
    expect(state.hub.startedAt).toBe(T0 + 500);
    expect(state.agents).toEqual([{ agentId: "a1", service: "checkout", instance: "web-1", connected: true, lastSeen: T0 + 500 }]);
    const db = state.semaphores.find((x) => x.id === "db")!;
    expect(db).toMatchObject({ key: "checkout/web-1/db", name: "postgres", kind: "pg-pool", inUse: 8, available: 1, status: "leak" });
    expect(db.last?.inUse).toBe(8);
    expect(state.semaphores.find((x) => x.id === "idle")).toMatchObject({ status: "ok", last: null });
    expect(state.alerts.map((a) => a.rule).sort()).toEqual(["double_release", "leak"]);
  });
});

describe("GET /api/alerts and POST /api/alerts/:id/ack", () => {
  it("lists active and resolved alerts newest raisedAt first, and acknowledges one", async () => {
    const { hub } = await seeded();
    const { body } = await getJson<{ alerts: z.infer<typeof alertSchema>[] }>(hub, "/api/alerts");
    const alerts = z.array(alertSchema).parse(body.alerts);
    expect(alerts.map((a) => a.rule)).toEqual(["double_release", "leak"]);
    for (let i = 1; i < alerts.length; i++) expect(alerts[i - 1].raisedAt).toBeGreaterThanOrEqual(alerts[i].raisedAt);
    const id = alerts[1].id;
    const acked = await getJson<{ alert: { acknowledged: boolean } }>(hub, `/api/alerts/${encodeURIComponent(id)}/ack`, { method: "POST" });
    expect(acked.status).toBe(200);
    expect(acked.body.alert.acknowledged).toBe(true);
    expect((await getJson(hub, "/api/alerts/nope/ack", { method: "POST" })).status).toBe(404);
    expect((await getJson(hub, `/api/alerts/${encodeURIComponent(id)}/ack`)).status).toBe(405);
  });
});

describe("GET /api/stats", () => {
  it("counts what the caps refused, per cause, beside what they hold", async () => {
    const hub = await startHub({ admission: { maxAgents: 2, maxSemaphores: 3 } });
    const ask = async (agentId: string, over: Parameters<typeof hello>[1] = {}) => request<AckAnswer>(await client(hub.url, "/agent"), "hello", hello(agentId, over));
    const a1 = await agent(hub, "a1", [info("db"), info("cache")], { instance: "web-1" });
    await agent(hub, "a2", [], { instance: "web-2" });
    // Both agents live: a third is refused, as is a second connection speaking for a1.
    expect((await ask("a3", { instance: "web-3" })).error).toBe("agent limit reached: total cap, this hub holds at most 2 agents");
    expect((await ask("a1", { instance: "web-1" })).error).toMatch(/^agentId already connected/);
    expect((await request<AckAnswer>(a1, "register", { semaphores: [info("db"), info("cache"), info("queue"), info("mail")] })).error).toBe(
      "semaphore limit reached: total cap, this hub holds at most 3 semaphores",
    );
    const { status, body } = await getJson<{ admission: unknown }>(hub, "/api/stats");
    expect(status).toBe(200);
    expect(body.admission).toEqual({
      agents: 2,
      semaphores: 2,
      limits: { maxAgents: 2, maxAgentsPerAddress: 1000, maxSemaphores: 3, maxSemaphoresPerAddress: 10_000, maxPendingAgents: 2000, maxPendingAgentsPerAddress: 1000, helloTimeoutMs: 10_000 },
      refused: { agents: 1, semaphores: 1, identity: 1, dashboards: 0, connections: 0 },
      // Both from the hub's caps in all: this address holds far less than its own.
      refusedScope: { agents: { address: 0, total: 1 }, semaphores: { address: 0, total: 1 }, dashboards: { address: 0, total: 0 }, connections: { address: 0, total: 0 } },
      evictedAgents: 0,
      helloTimeouts: 0,
    });
  });
});

describe("GET /metrics", () => {
  it("exports per-semaphore gauges and counters with service, instance and semaphore labels, and hub metrics", async () => {
    const { hub } = await seeded();
    const res = await fetch(`${hub.url}/metrics`);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    const series = text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    expect(series.every((l) => l.startsWith("semscope_"))).toBe(true);
    const labels = 'service="checkout",instance="web-1",semaphore="db"';
    expect(text).toContain(`semscope_semaphore_in_use{${labels}} 8`);
    expect(text).toContain(`semscope_semaphore_cap{${labels}} 10`);
    expect(text).toContain(`semscope_semaphore_available{${labels}} 1`);
    expect(text).toContain(`semscope_semaphore_acquired_total{${labels}} 35`);
    expect(text).toContain(`semscope_semaphore_status{${labels},status="leak"} 1`);
    expect(text).toMatch(new RegExp(`semscope_semaphore_wait_seconds\\{${labels},quantile="0.99"\\} [0-9.e-]+`));
    expect(text).toContain('semscope_semaphore_cap{service="checkout",instance="web-1",semaphore="idle"} 10');
    expect(text).toContain("semscope_hub_rejected_total 0");
    expect(text).toContain("semscope_hub_agents_connected 1");
    expect(text).toContain('semscope_hub_alerts_active{rule="leak",severity="critical"} 1');
    // The fleet as the over_budget rule sums it, and whether each agent still streams.
    const fleet = 'service="checkout",semaphore="postgres",scope="process"';
    expect(text).toContain(`semscope_fleet_cap{${fleet}} 10`);
    expect(text).toContain(`semscope_fleet_in_use{${fleet}} 8`);
    expect(text).toContain(`semscope_fleet_instances{${fleet}} 1`);
    expect(text).not.toContain("semscope_fleet_budget{");
    expect(text).toContain('semscope_hub_agent_up{service="checkout",instance="web-1"} 1');
    for (const l of series.filter((x) => x.startsWith("semscope_semaphore_"))) {
      expect(l).toMatch(/\{service="[^"]*",instance="[^"]*",semaphore="[^"]*"/);
    }
  });
});

/** GET `path` with `accept-encoding` (none when undefined), as the bytes on the wire, not decompressed. */
function rawGet(url: string, acceptEncoding: string | undefined): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers = acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding };
    get(url, { headers }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (b: Buffer) => parts.push(b));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(parts) }));
      res.on("error", reject);
    }).on("error", reject);
  });
}

describe("GET /metrics gzip'd", () => {
  it("gzips for a scraper that takes gzip, and the body decompresses to exactly the plain one; plain text for any other", async () => {
    const { hub } = await seeded();
    const url = `${hub.url}/metrics`;
    // Together, so that both read one render (scrapes within a second of a render share it).
    const [plain, gzipped] = await Promise.all([rawGet(url, undefined), rawGet(url, "gzip")]);
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(gzipped.headers.vary).toBe("Accept-Encoding");
    expect(gzipped.headers["content-type"]).toMatch(/^text\/plain/);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.headers.vary).toBe("Accept-Encoding");
    expect(plain.body.toString("utf8")).toContain('semscope_semaphore_in_use{service="checkout",instance="web-1",semaphore="db"} 8');
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
    expect(gzipped.body.length).toBeLessThan(plain.body.length / 2);
    // What browsers, curl --compressed and Prometheus send take gzip; a refusal or another coding does not.
    for (const accepts of ["gzip, deflate, br", "deflate, gzip;q=0.5", "*", "br;q=1, *;q=0.1", "x-gzip"]) {
      const { headers, body } = await rawGet(url, accepts);
      expect(headers["content-encoding"], accepts).toBe("gzip");
      expect(gunzipSync(body).toString("utf8"), accepts).toContain("# TYPE semscope_semaphore_cap gauge");
    }
    for (const accepts of ["identity", "br, deflate", "gzip;q=0", "*;q=0", "gzip;q=0, *", "", "gzipx"]) {
      const { headers, body } = await rawGet(url, accepts);
      expect(headers["content-encoding"], accepts).toBeUndefined();
      expect(body.toString("utf8"), accepts).toContain("# TYPE semscope_semaphore_cap gauge");
    }
  });
});

describe("history, fleet, thresholds", () => {
  it("returns a history window as plain arrays, and validates the query", async () => {
    const { hub } = await seeded();
    const key = encodeURIComponent("checkout/web-1/db");
    const { status, body } = await getJson<{ key: string; window: Record<string, unknown> }>(hub, `/api/history?key=${key}&columns=inUse,waiters`);
    expect(status).toBe(200);
    expect(body.window).toEqual({ tier: "1s", length: 4, partialLast: false, t: [T0, T0 + 1000, T0 + 2000, T0 + 3000], inUse: [3, 4, 5, 8], waiters: [0, 0, 0, 0] });
    const ranged = await getJson<{ window: { t: number[] } }>(hub, `/api/history?key=${key}&from=${T0 + 1000}&to=${T0 + 2000}`);
    expect(ranged.body.window.t).toEqual([T0 + 1000, T0 + 2000]);
    expect((await getJson(hub, `/api/history?key=${key}&tier=1m`)).status).toBe(200);
    expect((await getJson(hub, `/api/history?key=${key}&tier=5m`)).status).toBe(400);
    expect((await getJson(hub, `/api/history?key=${key}&from=abc`)).status).toBe(400);
    expect((await getJson(hub, `/api/history?key=${key}&columns=nope`)).status).toBe(400);
    expect((await getJson(hub, `/api/history?key=${key}&from=5&to=1`)).status).toBe(400);
    expect((await getJson(hub, `/api/history`)).status).toBe(400);
    expect((await getJson(hub, `/api/history?key=none`)).status).toBe(404);
  });

  it("serves the fleet and a fleet window", async () => {
    const { hub } = await seeded();
    const fleet = await getJson<{ fleet: { key: string; cap: number }[] }>(hub, "/api/fleet");
    expect(fleet.body.fleet.map((f) => f.key)).toEqual(["checkout/idle", "checkout/postgres"]);
    const win = await getJson<{ window: { replicas: number[]; inUse: number[] } }>(hub, "/api/fleet/history?service=checkout&name=postgres");
    expect(win.status).toBe(200);
    expect(win.body.window.replicas).toEqual([1, 1, 1, 1]);
  });

  it("changes thresholds with PUT, refusing bad input with a clear 400", async () => {
    const { hub } = await seeded();
    const put = (body: string) => getJson<{ error?: string; thresholds?: { convoy: { windowMs: number } } }>(hub, "/api/thresholds", { method: "PUT", body, headers: { "Content-Type": "application/json" } });
    const ok = await put(JSON.stringify({ convoy: { windowMs: 8000 } }));
    expect(ok.status).toBe(200);
    expect(ok.body.thresholds?.convoy.windowMs).toBe(8000);
    expect(hub.engine.thresholds.convoy.windowMs).toBe(8000);
    const bad = await put(JSON.stringify({ convoy: { windowMs: -5 } }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/convoy\.windowMs/);
    expect((await put(JSON.stringify({ nope: { x: 1 } }))).body.error).toMatch(/unknown rule group/);
    expect((await put(JSON.stringify({ convoy: { windowMs: "8" } }))).status).toBe(400);
    expect((await put("{not json")).body).toEqual({ error: "body is not valid JSON" });
    expect((await put(JSON.stringify({ pad: "x".repeat(70_000) }))).status).toBe(413);
    expect(hub.engine.thresholds.convoy.windowMs).toBe(8000);
  });

  it("answers 404 and 405 in JSON", async () => {
    const { hub } = await seeded();
    expect(await getJson(hub, "/nope")).toMatchObject({ status: 404, body: { error: "not found" } });
    expect((await getJson(hub, "/api/state", { method: "POST" })).status).toBe(405);
  });
});

describe("web mode", () => {
  it("serves the dashboard with MIME types, falls back to index.html for routes, and never leaves its folder", async () => {
    const root = mkdtempSync(join(tmpdir(), "semscope-static-"));
    const site = join(root, "site");
    mkdirSync(join(site, "assets"), { recursive: true });
    writeFileSync(join(site, "index.html"), "<!doctype html><title>semscope</title>");
    writeFileSync(join(site, "assets", "app-123.js"), "console.log(1)");
    writeFileSync(join(site, "assets", "app.css"), "body{}");
    writeFileSync(join(root, "secret.txt"), "secret");
    symlinkSync(join(root, "secret.txt"), join(site, "link.txt"));
    const hub = await startHub({ staticDir: site, token: "tok" });

    const get = async (path: string) => {
      const res = await fetch(`${hub.url}${path}`);
      return { status: res.status, type: res.headers.get("content-type"), text: await res.text(), cache: res.headers.get("cache-control") };
    };
    expect(await get("/")).toMatchObject({ status: 200, type: "text/html; charset=utf-8", text: expect.stringContaining("semscope"), cache: "no-cache" });
    expect(await get("/assets/app-123.js")).toMatchObject({ status: 200, type: "text/javascript; charset=utf-8", cache: expect.stringContaining("immutable") });
    expect((await get("/assets/app.css")).type).toBe("text/css; charset=utf-8");
    expect(await get("/semaphores/checkout")).toMatchObject({ status: 200, type: "text/html; charset=utf-8" });
    expect((await get("/assets/missing.js")).status).toBe(404);
    for (const evil of ["/../secret.txt", "/%2e%2e/secret.txt", "/assets/..%2f..%2fsecret.txt", "/link.txt", "/..%5csecret.txt"]) {
      const r = await get(evil);
      expect(r.text, evil).not.toContain("secret");
    }
    expect((await get("/%E0%A4%A")).status).toBe(400);
    // Never framed by another page (a click-jacked Acknowledge), for the page and its files alike.
    for (const path of ["/", "/assets/app-123.js", "/semaphores/checkout"]) {
      const res = await fetch(`${hub.url}${path}`);
      expect(res.headers.get("content-security-policy"), path).toBe("frame-ancestors 'none'");
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
    }
    // The API still needs the token; the static files carry no data and do not.
    expect((await get("/api/state")).status).toBe(401);
    expect((await get("/healthz")).status).toBe(200);
  });
});
