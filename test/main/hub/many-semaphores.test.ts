// Feature "many_semaphores" (docs/protocol.md): an agent that offers it may report up to 10,000
// semaphores (one per tenant), and sends its `register` in parts the hub applies whole at "end".
// An agent without it keeps the 1,000 of the contract. The last test runs 10,000 per-tenant
// semaphores in a real agent in a child process against a real hub, and leaks one of them.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { Hub } from "../../../main/hub/index.js";
import { MANY_SEMAPHORES_PER_AGENT, type Alert, type SemaphoreInfo } from "../../../shared/protocol/index.js";
import { agent, cleanupAll, dashboard, info, onCleanup, request, sample, startHub, T0, waitUntil, type AckAnswer } from "./helpers.js";

afterEach(cleanupAll);

const MANY = { features: ["changed_only", "many_semaphores"] };
const infos = (n: number, from = 0): SemaphoreInfo[] => Array.from({ length: n }, (_, i) => info(`t${from + i}`));
const ids = (hub: Hub) => hub.state().semaphores.map((s) => s.id);

describe("many semaphores in one agent", () => {
  it("is accepted in hello's ack and applies a register sent in parts whole, at its end", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", [], MANY);
    expect(await request<AckAnswer>(s, "register", { semaphores: infos(1000), partial: "more" })).toEqual({ ok: true });
    expect(await request<AckAnswer>(s, "register", { semaphores: infos(1000, 1000), partial: "more" })).toEqual({ ok: true });
    // Nothing of a list is applied before it is whole.
    expect(ids(hub)).toEqual([]);
    expect(await request<AckAnswer>(s, "register", { semaphores: infos(500, 2000), partial: "end" })).toEqual({ ok: true });
    expect(hub.state().semaphores).toHaveLength(2500);
    // A later whole list replaces it, as a register always does.
    expect(await request<AckAnswer>(s, "register", { semaphores: infos(3) })).toEqual({ ok: true });
    expect(ids(hub)).toEqual(["t0", "t1", "t2"]);
  });

  it("refuses a list past 10,000, an id twice across parts, and more than 1,000 from an agent without the feature", async () => {
    // Both agents connect from this one address: above the default 10,000 semaphores per address.
    const hub = await startHub({ admission: { maxSemaphoresPerAddress: 20_000 } });
    const s = await agent(hub, "a1", [], MANY);
    for (let i = 0; i < 10; i++) await request(s, "register", { semaphores: infos(1000, i * 1000), partial: "more" });
    const over = await request<AckAnswer>(s, "register", { semaphores: infos(1, 10_000), partial: "end" });
    expect(over).toEqual({ ok: false, error: `too many semaphores: an agent may report at most ${MANY_SEMAPHORES_PER_AGENT}` });
    expect(ids(hub)).toEqual([]);

    await request(s, "register", { semaphores: infos(2), partial: "more" });
    const twice = await request<AckAnswer>(s, "register", { semaphores: infos(2, 1), partial: "end" });
    expect(twice).toEqual({ ok: false, error: "duplicate id across register parts: t1" });
    expect(ids(hub)).toEqual([]);

    const old = await agent(hub, "a2", [], { instance: "web-2" });
    const big = await request<AckAnswer>(old, "register", { semaphores: infos(1001) });
    expect(big.error).toMatch(/^too many semaphores: an agent may report at most 1000 /);
    // Its samples are held to 1,000 too, while the other agent's reach 10,000.
    expect(await request<AckAnswer>(old, "samples", { seq: 0, t: T0, intervalMs: 1000, items: infos(1000).map((x) => sample(x.id)) })).toMatchObject({ ok: true });
    expect((await request<AckAnswer>(old, "samples", { seq: 1, t: T0 + 1000, intervalMs: 1000, items: [sample("one-more")] })).ok).toBe(false);
    for (let i = 0; i < 10; i++) {
      const items = infos(1000, i * 1000).map((x) => sample(x.id));
      expect((await request<AckAnswer>(s, "samples", { seq: i, t: T0, intervalMs: 1000, items })).ok).toBe(true);
    }
    expect(hub.state().semaphores.filter((x) => x.instance === "web-1")).toHaveLength(10_000);
  });

  it("drops the parts of a list left unfinished by a reconnect", async () => {
    const hub = await startHub();
    const s = await agent(hub, "a1", [], MANY);
    await request(s, "register", { semaphores: infos(1000), partial: "more" });
    s.disconnect();
    const again = await agent(hub, "a1", [], MANY);
    expect(await request<AckAnswer>(again, "register", { semaphores: infos(2, 5000), partial: "end" })).toEqual({ ok: true });
    expect(ids(hub)).toEqual(["t5000", "t5001"]);
  });

  it("raises a leak on one tenant among 10,000 in a real agent, and shows it to a dashboard", async () => {
    const hub = await startHub({ thresholds: { timeouts: { windowMs: 1000 }, convoy: { windowMs: 1000, clearMs: 1000 }, starvation: { clearMs: 1000 } } });
    const tenants = 10_000;
    const child = fork(fileURLToPath(new URL("./fixtures/tenants-service.ts", import.meta.url)), [], {
      cwd: fileURLToPath(new URL("../../../", import.meta.url)),
      execArgv: ["--import", "tsx"],
      env: { ...process.env, HUB_URL: hub.url, TENANTS: String(tenants), INTERVAL_MS: "500", LEAK_MS: "1000" },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    onCleanup(() => child.kill("SIGKILL"));
    const done: string[] = [];
    child.on("message", (m: { type: string; cmd?: string }) => done.push(m.type === "done" ? `done ${m.cmd}` : m.type));
    const tenantsOf = () => hub.state().semaphores.filter((x) => x.service === "tenants");
    // A register of 10,000 and a first whole interval are 20,000 items against the connection's
    // budget of 2,000 a second: about ten seconds, more on a loaded machine.
    await waitUntil(() => tenantsOf().length === tenants && tenantsOf().every((x) => x.last !== null), "every tenant registered and sampled", 60_000);
    const ui = await dashboard(hub.url);
    expect(ui.snapshot.state.semaphores.filter((x) => x.service === "tenants")).toHaveLength(tenants);

    child.send({ cmd: "leak", i: 9_876 });
    await waitUntil(() => done.includes("done leak"), "the leak taken", 30_000);
    const leakOf = () => hub.engine.activeAlerts().find((a) => a.rule === "leak");
    await waitUntil(() => leakOf() !== undefined, "the leak alert", 30_000);
    const leak = leakOf() as Alert;
    expect(leak.semaphore).toBe("tenant-9876");
    expect(hub.engine.activeAlerts().filter((a) => a.rule !== "agent_down")).toEqual([leak]);
    await waitUntil(() => ui.deltas.some((d) => d.alerts?.some((c) => c.alert.id === leak.id) === true), "the leak in a delta", 10_000);
    expect(tenantsOf().filter((x) => x.status !== "ok").map((x) => [x.id, x.status, x.inUse])).toEqual([["tenant-9876", "leak", 1]]);
  }, 120_000);
});
