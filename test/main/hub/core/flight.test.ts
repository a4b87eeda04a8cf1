// The flight recorder end to end: a real hub, a real agent in a child process. An alert on a
// semaphore makes the hub ask that agent for its ring; the ring lands on the alert (/api/alerts,
// dashboards), in the recording, and in its replay; a second alert within the agent's interval
// shares the first ring instead of getting another; an agent without the feature keeps working.
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { replayRecording } from "../../../../main/hub/recording/replay.js";
import type { Alert, FlightRecord } from "../../../../shared/protocol/index.js";
import { agent, cleanupAll, dashboard, getJson, info, onCleanup, request, sample, startHub, T0, waitUntil, type AckAnswer } from "../helpers.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const FIXTURE = fileURLToPath(new URL("../fixtures/flight-service.ts", import.meta.url));
/** A tsx child on a loaded 2-core machine can take seconds to start. */
const START_MS = 30_000;

afterEach(cleanupAll);

interface Service {
  child: ChildProcess;
  agentId: string;
  run(cmd: string): Promise<void>;
}

async function service(url: string): Promise<Service> {
  const child = fork(FIXTURE, [], { cwd: ROOT, execArgv: ["--import", "tsx"], env: { ...process.env, HUB_URL: url }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const messages: { type: string; cmd?: string; agentId?: string }[] = [];
  child.on("message", (m) => messages.push(m as (typeof messages)[number]));
  await waitUntil(() => messages.some((m) => m.type === "ready"), "the service's agent to connect", START_MS);
  const agentId = messages.find((m) => m.type === "ready")?.agentId as string;
  return {
    child,
    agentId,
    async run(cmd) {
      const before = messages.filter((m) => m.type === "done" && m.cmd === cmd).length;
      child.send({ cmd });
      await waitUntil(() => messages.filter((m) => m.type === "done" && m.cmd === cmd).length > before, `${cmd} done`, START_MS);
    },
  };
}

const alertsOf = async (hub: { url: string }): Promise<Alert[]> => (await getJson<{ alerts: Alert[] }>(hub as never, "/api/alerts")).body.alerts;
const flightOf = (a: Alert | undefined) => a?.evidence?.flight as (FlightRecord & { sharedFrom?: string }) | undefined;

describe("flight recorder over a real hub and a real agent", () => {
  it("attaches the agent's ring to the alert: the permit that never came back, with its stack; recorded and replayed alike", async () => {
    const dir = mkdtempSync(join(tmpdir(), "semscope-flight-"));
    onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "rec.ndjson");
    const hub = await startHub({ record: file });
    const ui = await dashboard(hub.url);
    const svc = await service(hub.url);
    await svc.run("work");
    await svc.run("leak");

    await waitUntil(async () => flightOf((await alertsOf(hub)).find((a) => a.rule === "leak")) !== undefined, "the ring on the leak alert", 15_000);
    const leak = (await alertsOf(hub)).find((a) => a.rule === "leak") as Alert;
    const ring = flightOf(leak) as FlightRecord;
    expect(ring.status).toBeUndefined();
    expect(ring.id).toBe("pool");
    expect(ring.alertId).toBe(leak.id);
    expect(ring.capacity).toBe(1024);
    // The ordinary work (20 grants and releases) and then the grant that was never released.
    expect(ring.ops.filter((o) => o.op === "release").length).toBeGreaterThanOrEqual(20);
    const lastGrant = ring.ops.filter((o) => o.op === "grant").at(-1);
    expect(lastGrant?.holder).toBeDefined();
    expect(ring.ops.some((o) => o.op === "release" && o.holder === lastGrant?.holder)).toBe(false);
    expect(ring.holders.map((h) => h.holder)).toEqual([lastGrant?.holder]);
    const stack = ring.stacks[ring.holders[0].stack as number];
    expect(stack).toContain("takePermitAndNeverGiveItBack");
    // Times are the agent's epoch clock, in order.
    for (let i = 1; i < ring.ops.length; i++) expect(ring.ops[i].t).toBeGreaterThanOrEqual(ring.ops[i - 1].t);

    // Dashboards got it as an alert update.
    await waitUntil(() => ui.deltas.some((d) => d.alerts?.some((c) => c.alert.id === leak.id && flightOf(c.alert) !== undefined) === true), "the ring in a delta");

    // A second alert on the same semaphore within the agent's 10 s: no second ring, the first one shared.
    await svc.run("double");
    await waitUntil(async () => flightOf((await alertsOf(hub)).find((a) => a.rule === "double_release")) !== undefined, "the double_release alert's flight", 15_000);
    const dbl = flightOf((await alertsOf(hub)).find((a) => a.rule === "double_release")) as FlightRecord & { sharedFrom?: string };
    expect(dbl.sharedFrom).toBe(leak.id);
    expect(dbl.ops).toEqual(ring.ops);

    const rejected = hub.rejected;
    expect(rejected).toBe(0);
    svc.child.send({ cmd: "exit" });
    await new Promise((r) => svc.child.once("exit", r));
    const live = await alertsOf(hub);
    await hub.close();

    // The recording: one flight line per answer, the second a rate-limited answer without ops.
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { k: string; p?: FlightRecord });
    const flights = lines.filter((l) => l.k === "flight");
    expect(flights.map((l) => l.p?.status ?? "ring")).toEqual(["ring", "rate_limited"]);
    expect(flights[1].p?.ops).toEqual([]);
    // The replay attaches the same rings to the same alerts.
    const replay = await replayRecording(file);
    expect(replay.stoppedAt).toBeUndefined();
    for (const id of [leak.id, (live.find((a) => a.rule === "double_release") as Alert).id]) {
      const a = live.find((x) => x.id === id);
      const b = replay.alerts.find((x) => x.id === id);
      expect(flightOf(b)).toEqual(flightOf(a));
    }
  }, 90_000);

  it("an agent without the feature keeps working; a flight nobody asked for is refused", async () => {
    const hub = await startHub();
    const s = await agent(hub, "old-agent", [info("db", { cap: 2 })]);
    let asked = 0;
    s.on("flight_request", () => asked++);
    // A sample breaking the leak check raises `leak` at once: the hub asks; this agent never answers.
    const bad = await request<AckAnswer>(s, "samples", { seq: 0, t: T0, intervalMs: 1000, items: [sample("db", { cap: 2, inUse: 2, available: 1 })] });
    expect(bad.ok).toBe(true);
    await waitUntil(() => asked === 1, "the hub's flight_request");
    for (let seq = 1; seq <= 3; seq++) {
      const ack = await request<AckAnswer>(s, "samples", { seq, t: T0 + seq * 1000, intervalMs: 1000, items: [sample("db", { cap: 2, inUse: 1 })] });
      expect(ack).toEqual({ ok: true, seq });
    }
    const leak = (await alertsOf(hub)).find((a) => a.rule === "leak");
    expect(leak).toBeDefined();
    expect(flightOf(leak)).toBeUndefined();
    expect(hub.rejected).toBe(0);

    const unsolicited = await request<AckAnswer>(s, "flight", { id: "db", alertId: "leak:checkout/web-1/db:0", t: T0, capacity: 8, total: 0, ops: [], holders: [], stacks: [] });
    expect(unsolicited).toEqual({ ok: false, error: "no flight_request pending for that alert and semaphore" });
    const malformed = await request<AckAnswer>(s, "flight", { id: "db", alertId: leak?.id, t: T0, capacity: 8, total: 0, ops: [{ t: 1, op: "grant", weight: 1, stack: 3 }], holders: [], stacks: [] });
    expect(malformed.ok).toBe(false);
    expect(malformed.error).toBe("ops.0.stack: no such stack");
    // Answering the pending request late still attaches it, once.
    const late = await request<AckAnswer>(s, "flight", { id: "db", alertId: leak?.id, t: T0, capacity: 8, total: 1, ops: [{ t: T0, op: "grant", holder: 1, weight: 1 }], holders: [], stacks: [] });
    expect(late).toEqual({ ok: true });
    const again = await request<AckAnswer>(s, "flight", { id: "db", alertId: leak?.id, t: T0, capacity: 8, total: 1, ops: [], holders: [], stacks: [] });
    expect(again.ok).toBe(false);
    expect(flightOf((await alertsOf(hub)).find((a) => a.rule === "leak"))?.ops).toHaveLength(1);
  });
});
