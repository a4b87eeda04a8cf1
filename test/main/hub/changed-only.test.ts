// Changed entries only (feature "changed_only"), end to end: a real hub, a real agent in a child
// process with one semaphore per tenant. The agent leaves idle semaphores out of its batches and
// the hub reads their absence as "unchanged": every semaphore keeps its state, every count
// arrives (a semaphore that turns busy is reported from its first busy interval), a leak on one
// tenant among many is raised and shown with its ring, a restarted hub and a new dashboard get
// every semaphore's state, and agents and hubs without the feature keep working as before.
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { Hub } from "../../../main/hub/index.js";
import type { Alert, FlightRecord, SamplesBatch } from "../../../shared/protocol/index.js";
import { agent, cleanupAll, client, dashboard, hello, info, onCleanup, request, sample, startHub, T0, waitUntil, type AckAnswer } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const FIXTURE = fileURLToPath(new URL("./fixtures/tenants-service.ts", import.meta.url));
/** A tsx child on a loaded 2-core machine can take seconds to start. */
const START_MS = 30_000;
const TENANTS = 300;
const INTERVAL_MS = 100;
/** Short rule windows, so the hub's quiet samples after activity stop within a test: 500 + 2 × 100 ms. */
const THRESHOLDS = { timeouts: { windowMs: 500 }, convoy: { windowMs: 300, clearMs: 300 }, starvation: { clearMs: 300 } };
const SETTLE_MS = 700;

afterEach(cleanupAll);

interface Service {
  child: ChildProcess;
  run(cmd: string, i?: number): Promise<void>;
}

async function service(url: string): Promise<Service> {
  const child = fork(FIXTURE, [], {
    cwd: ROOT,
    execArgv: ["--import", "tsx"],
    env: { ...process.env, HUB_URL: url, TENANTS: String(TENANTS), INTERVAL_MS: String(INTERVAL_MS) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const messages: { type: string; cmd?: string }[] = [];
  child.on("message", (m) => messages.push(m as (typeof messages)[number]));
  await waitUntil(() => messages.some((m) => m.type === "ready"), "the service's agent to connect", START_MS);
  return {
    child,
    async run(cmd, i) {
      const before = messages.filter((m) => m.type === "done" && m.cmd === cmd).length;
      child.send({ cmd, i });
      await waitUntil(() => messages.filter((m) => m.type === "done" && m.cmd === cmd).length > before, `${cmd} done`, START_MS);
    },
  };
}

const tenantsOf = (hub: Hub) => hub.state().semaphores.filter((s) => s.service === "tenants");
const everyTenantSampled = (hub: Hub) => {
  const all = tenantsOf(hub);
  return all.length === TENANTS && all.every((s) => s.last !== null);
};
function batches(file: string): SamplesBatch[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.includes('"k":"samples"'))
    .map((l) => (JSON.parse(l) as { p: SamplesBatch }).p);
}
async function acquiredTotal(hub: Hub, id: string): Promise<number> {
  const text = await (await fetch(`${hub.url}/metrics`)).text();
  const m = new RegExp(`semscope_semaphore_acquired_total\\{[^}]*semaphore="${id}"[^}]*\\} (\\d+)`).exec(text);
  return m === null ? -1 : Number(m[1]);
}

describe("changed entries only, over a real hub and a real agent", () => {
  it("sends the full state once, then only what changed; every count arrives, from a semaphore's first busy interval", async () => {
    const dir = mkdtempSync(join(tmpdir(), "semscope-changed-"));
    onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "rec.ndjson");
    const hub = await startHub({ record: file, thresholds: THRESHOLDS });
    const svc = await service(hub.url);
    await waitUntil(() => everyTenantSampled(hub), "every tenant's first sample", 15_000);
    await waitUntil(() => batches(file).filter((b) => b.partial !== undefined).length >= 3, "three changed-only intervals", 10_000);

    // The first intervals are whole (those built before the hub's ack said it takes the feature:
    // one, or more on a loaded machine); later ones carry only what changed: nothing, here.
    const early = batches(file);
    const whole = early.findIndex((b) => b.partial !== undefined);
    expect(whole).toBeGreaterThanOrEqual(1);
    for (const b of early.slice(0, whole)) expect(b.items).toHaveLength(TENANTS);
    const later = early.slice(whole);
    expect(later.length).toBeGreaterThanOrEqual(3);
    for (const b of later) {
      expect(b.partial).toBe("end");
      expect(b.items).toHaveLength(0);
    }

    // A tenant turns busy three times, each in an interval of its own (the next touch once the
    // last reached the hub): each time its count reaches the hub.
    const touchedAt = Date.now();
    for (let k = 1; k <= 3; k++) {
      await svc.run("touch", 7);
      await waitUntil(async () => (await acquiredTotal(hub, "tenant-7")) === k, `acquire ${k} of tenant-7 at the hub`, 10_000);
    }
    const busy = () => batches(file).filter((b) => b.items.some((s) => s.id === "tenant-7" && s.acquired > 0));
    await waitUntil(() => busy().length === 3, "three busy intervals of tenant-7 recorded", 10_000);
    const after = batches(file).filter((b) => b.t >= touchedAt);
    const firstSeen = after.find((b) => b.items.some((s) => s.id === "tenant-7"));
    expect(firstSeen?.items.find((s) => s.id === "tenant-7")).toMatchObject({ acquired: 1, released: 1 });
    // The hub fills in its quiet intervals while a rule may still count them, then stops: read
    // once intervals well past that (in sample time) are recorded.
    const lastBusy = busy().at(-1) as SamplesBatch;
    await waitUntil(() => batches(file).filter((b) => b.t > lastBusy.t + SETTLE_MS + 2 * INTERVAL_MS).length > 0, "intervals past the settling", 10_000);
    const all = batches(file);
    const quietAfter = all.filter((b) => b.t > lastBusy.t && b.items.some((s) => s.id === "tenant-7"));
    expect(quietAfter.length).toBeGreaterThan(0);
    for (const b of quietAfter) {
      expect(b.t - lastBusy.t).toBeLessThanOrEqual(SETTLE_MS);
      expect(b.items.find((s) => s.id === "tenant-7")).toMatchObject({ acquired: 0, released: 0, waiters: 0, cap: 4, inUse: 0 });
    }
    // Every other tenant is still there with its state, never marked gone.
    expect(tenantsOf(hub)).toHaveLength(TENANTS);
    expect(tenantsOf(hub).every((s) => s.status === "ok" && s.cap === 4 && s.inUse === 0)).toBe(true);
  });

  it("raises a leak on one tenant among many and shows it to a dashboard, with the operations before it", async () => {
    const hub = await startHub({ thresholds: THRESHOLDS });
    const svc = await service(hub.url);
    await waitUntil(() => everyTenantSampled(hub), "every tenant's first sample", 15_000);
    const ui = await dashboard(hub.url);
    for (let k = 0; k < 5; k++) await svc.run("touch", 42);
    await svc.run("leak", 42);

    const leakOf = () => hub.engine.activeAlerts().find((a) => a.rule === "leak");
    await waitUntil(() => (leakOf()?.evidence?.flight as FlightRecord | undefined) !== undefined, "the leak alert with its ring", 15_000);
    const leak = leakOf() as Alert;
    expect(leak.semaphore).toBe("tenant-42");
    expect(hub.engine.activeAlerts().filter((a) => a.rule === "leak")).toHaveLength(1);
    const ring = leak.evidence?.flight as FlightRecord;
    expect(ring.ops.map((o) => o.op)).toEqual([...Array.from({ length: 5 }, () => ["grant", "release"]).flat(), "grant"]);
    expect(ring.holders).toHaveLength(1);
    expect(ring.stacks[ring.holders[0].stack as number]).toContain("takeATenantsPermitAndKeepIt");
    // The dashboard got it (raised, or raised and updated with its ring in one delta), and sees the held permit.
    await waitUntil(() => ui.deltas.some((d) => d.alerts?.some((c) => c.alert.id === leak.id && c.alert.resolvedAt === null) === true), "the leak in a delta", 10_000);
    const state = () => tenantsOf(hub).find((s) => s.id === "tenant-42");
    expect(state()?.inUse).toBe(1);
    expect(state()?.status).toBe("leak");
    // The agent sends nothing for it while nothing changes; the hub ages the holder all the same.
    const held = state()?.last?.longestHoldMs as number;
    await waitUntil(() => (state()?.last?.longestHoldMs as number) > held + 2 * INTERVAL_MS, "the holder aged at the hub", 10_000);
  });

  it("a restarted hub and a new dashboard get every semaphore's state: the reconnecting agent sends it whole once", async () => {
    const first = await startHub();
    const port = first.port;
    const svc = await service(first.url);
    await svc.run("touch", 3);
    await waitUntil(() => everyTenantSampled(first), "every tenant's first sample", 15_000);
    await first.close();

    const dir = mkdtempSync(join(tmpdir(), "semscope-changed-"));
    onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "rec.ndjson");
    const second = await startHub({ port, record: file });
    await waitUntil(() => everyTenantSampled(second), "every tenant's state at the restarted hub", 30_000);
    const whole = batches(file).filter((b) => b.partial === undefined);
    expect(whole.length).toBeGreaterThanOrEqual(1);
    expect(whole.at(-1)?.items).toHaveLength(TENANTS);
    const ui = await dashboard(second.url);
    const shown = ui.snapshot.state.semaphores.filter((s) => s.service === "tenants");
    expect(shown).toHaveLength(TENANTS);
    expect(shown.every((s) => s.last !== null && s.cap === 4)).toBe(true);
    // And after that, changed entries only again (read once three intervals follow the last whole one).
    const lastWholeOf = (r: SamplesBatch[]) => r.map((b) => b.partial === undefined).lastIndexOf(true);
    await waitUntil(() => batches(file).length > lastWholeOf(batches(file)) + 3, "three intervals after the whole ones", 10_000);
    const recorded = batches(file);
    const lastWhole = lastWholeOf(recorded);
    expect(recorded.slice(lastWhole + 1).every((b) => b.partial === "end" && b.items.length < TENANTS)).toBe(true);
  });

  it("is negotiated: a hello without the feature gets no feature back, and one with it (among unknown ones) gets it", async () => {
    const hub = await startHub();
    const plain = await client(hub.url, "/agent");
    const a1 = await request<AckAnswer>(plain, "hello", hello("old-agent"));
    expect(a1.ok).toBe(true);
    expect(a1.features).toBeUndefined();
    const newer = await client(hub.url, "/agent");
    const a2 = await request<AckAnswer>(newer, "hello", hello("new-agent", { instance: "web-2", features: ["from_the_future", "changed_only"] }));
    expect(a2.features).toEqual(["changed_only"]);
    // An older agent's batches are whole: one it leaves a semaphore out of is not read as "unchanged".
    const old = await agent(hub, "old-agent-2", [info("a"), info("b")], { instance: "web-3" });
    for (let seq = 0; seq < 4; seq++) {
      const items = seq === 0 ? [sample("a"), sample("b")] : [sample("b", { acquired: 0, released: 0 })];
      expect((await request<AckAnswer>(old, "samples", { seq, t: T0 + seq * 1000, intervalMs: 1000, items })).ok).toBe(true);
    }
    const a = hub.state().semaphores.find((x) => x.instance === "web-3" && x.id === "a");
    expect(a?.last).toMatchObject({ acquired: 5 });
  });
});
