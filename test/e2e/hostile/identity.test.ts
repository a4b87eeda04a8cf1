// Impersonation (issue 28, item 5), against a hub in a child process: an agent holding the
// shared token must not take over another live agent's agentId or its service/instance, nor
// inject a leak on its semaphores; names holding `/` must not collide in keys; and an agent's
// own token must open /agent only. The victim is the real agent in its own process.
import { io } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import type { Alert, ApiHubState } from "../../../shared/protocol/index.js";
import { cleanupAll, forkFixture, onCleanup, startHubChild, startService, until, type Child } from "../stream/harness.js";
import { expectAckedInOrder, rawAgent } from "./harness.js";

afterEach(cleanupAll);

async function get<T>(url: string, path: string, token?: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}${path}`, token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json().catch(() => null)) as T };
}
const state = async (url: string, token?: string) => (await get<ApiHubState>(url, "/api/state", token)).body;

/** The victim: the real agent, service "pay" instance "p-1", streaming every 250 ms. */
async function victim(url: string): Promise<Child & { agentId: string }> {
  return startService({ url, service: "pay", instance: "p-1", intervalMs: 250, scenarios: ["steady:3"], notifyAcks: true });
}

/** Waits until the victim has sent `more` sample acks beyond those it has now. */
async function moreAcks(c: Child, more: number): Promise<void> {
  const count = () => c.messages.filter((m) => m.type === "ack").length;
  const target = count() + more;
  await until(() => count() >= target || undefined, `${more} more acks`, 20_000);
}

describe("a live agent's identity", () => {
  it("refuses a hello with a live agent's agentId; the live agent keeps its semaphores and stays connected when the impostor leaves", async () => {
    const hub = await startHubChild();
    const a = await victim(hub.url);
    await until(async () => (await state(hub.url)).semaphores.filter((s) => s.agentId === a.agentId).length === 3 || undefined, "the victim's semaphores", 20_000);

    const b = await rawAgent(hub.url);
    const hello = await b.hello(a.agentId, { service: "pay", instance: "p-1" });
    expect(hello).toEqual({ ok: false, error: "agentId already connected: another connection speaks for this agent" });
    // Refused at hello, so nothing it sends after replaces the victim's list.
    expect((await b.register(["evil"])).ok).toBe(false);
    b.close();
    await moreAcks(a, 4);

    const s = await state(hub.url);
    expect(s.agents.find((x) => x.agentId === a.agentId)?.connected).toBe(true);
    expect(s.semaphores.filter((x) => x.agentId === a.agentId).map((x) => x.id).sort()).toHaveLength(3);
    expect(s.alerts.filter((x) => x.rule === "agent_down")).toEqual([]);
    expect(s.hub.admission?.refused.identity).toBe(1);
    await expectAckedInOrder(a);
  }, 60_000);

  it("lets the same agent back at once after its socket closed (its reconnect), before the hub has finished with the old connection", async () => {
    const hub = await startHubChild();
    const first = await rawAgent(hub.url);
    expect((await first.hello("back-1", { service: "svc", instance: "i-1" })).ok).toBe(true);
    expect((await first.register(["db"])).ok).toBe(true);
    first.close();
    const again = await rawAgent(hub.url);
    expect(await again.hello("back-1", { service: "svc", instance: "i-1" })).toMatchObject({ ok: true });
    expect(await again.samples(0, ["db"])).toEqual({ ok: true, seq: 0 });
    await until(async () => (await state(hub.url)).agents.find((x) => x.agentId === "back-1")?.connected === true || undefined, "back-1 connected", 10_000);
  }, 60_000);

  it("refuses a second live agent claiming the same service/instance, so it cannot raise a leak on the other's semaphores", async () => {
    const hub = await startHubChild();
    const a = await victim(hub.url);
    await until(async () => (await state(hub.url)).semaphores.filter((s) => s.agentId === a.agentId).length === 3 || undefined, "the victim's semaphores", 20_000);
    const target = (await state(hub.url)).semaphores.find((s) => s.agentId === a.agentId)!;

    const b = await rawAgent(hub.url);
    const hello = await b.hello("impostor", { service: "pay", instance: "p-1" });
    expect(hello).toEqual({ ok: false, error: "service and instance already connected as another agent" });
    const leak = await b.emit("events", { items: [{ t: Date.now(), id: target.id, type: "leak_suspected", holderId: "x", heldMs: 99_999, stack: "at made.up (evil.js:1:1)" }] });
    expect(leak.ok).toBe(false);
    await moreAcks(a, 4);

    const alerts = (await get<{ alerts: Alert[] }>(hub.url, "/api/alerts")).body.alerts;
    expect(alerts.filter((x) => x.rule === "leak")).toEqual([]);
    expect((await state(hub.url)).agents.map((x) => x.agentId)).toEqual([a.agentId]);
    await expectAckedInOrder(a);
  }, 60_000);
});

describe("keys", () => {
  it("keeps apart semaphores whose service, instance and id join to the same text with `/`", async () => {
    const hub = await startHubChild();
    const one = await rawAgent(hub.url);
    const two = await rawAgent(hub.url);
    expect((await one.hello("one", { service: "a/b", instance: "c" })).ok).toBe(true);
    expect((await two.hello("two", { service: "a", instance: "b/c" })).ok).toBe(true);
    expect((await one.register(["d"])).ok).toBe(true);
    expect((await two.register(["d"])).ok).toBe(true);
    expect((await one.samples(0, ["d"], { inUse: 1 })).ok).toBe(true);
    expect((await two.samples(0, ["d"], { inUse: 7 })).ok).toBe(true);

    const s = await state(hub.url);
    const keys = s.semaphores.map((x) => x.key);
    expect(new Set(keys).size).toBe(2);
    expect(s.semaphores.find((x) => x.agentId === "one")?.inUse).toBe(1);
    expect(s.semaphores.find((x) => x.agentId === "two")?.inUse).toBe(7);
    for (const key of keys) expect((await get(hub.url, `/api/history?key=${encodeURIComponent(key)}&tier=1s`)).status).toBe(200);
  }, 60_000);
});

describe("separate agent and dashboard tokens", () => {
  it("an agent's token opens /agent only; the hub's token opens everything, as the shared token did", async () => {
    const hub = await startHubChild({ token: "admin-secret", agentToken: "agent-secret" });
    // The real agent with the agent token streams.
    const c = forkFixture("service.ts", { HUB_URL: hub.url, SERVICE: "tok", INSTANCE: "t-1", INTERVAL_MS: "250", SCENARIOS: "steady:1", SEMSCOPE_TOKEN: "agent-secret", NOTIFY_ACKS: "1" });
    await c.next("connected");
    await until(async () => (await state(hub.url, "admin-secret")).agents.length === 1 || undefined, "the agent", 20_000);

    // The agent token opens neither the API nor a dashboard.
    expect((await get(hub.url, "/api/state", "agent-secret")).status).toBe(401);
    expect((await get(hub.url, "/metrics", "agent-secret")).status).toBe(401);
    const ui = io(`${hub.url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1, token: "agent-secret" } });
    onCleanup(() => ui.disconnect());
    const refused = await new Promise<string>((resolve) => {
      ui.once("connect", () => resolve("connected"));
      ui.once("connect_error", (err) => resolve(err.message));
    });
    expect(refused).toBe("unauthorized");

    // The hub's token still opens everything, agents included.
    expect((await get(hub.url, "/api/state", "admin-secret")).status).toBe(200);
    const shared = await rawAgent(hub.url, { token: "admin-secret" });
    expect((await shared.hello("shared", { service: "tok", instance: "t-2" })).ok).toBe(true);
    await expect(rawAgent(hub.url, { token: "wrong" })).rejects.toThrow("unauthorized");
    await moreAcks(c, 2);
    await expectAckedInOrder(c);
  }, 60_000);
});
