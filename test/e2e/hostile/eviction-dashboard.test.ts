// An agent evicted to make room while a dashboard is open (issue 28, item 4): the hub forgets it a
// slice per turn, and the dashboard's deltas read the hub throughout. What a user relies on: the
// honest agent's batches all acknowledged, in order; /healthz answering; and the dashboard never
// showing the evicted agent, its semaphores or its fleet groups once the eviction is counted, its
// alerts resolved soon after, ending where a fresh snapshot is.
import { io, type Socket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import type { Alert, ApiHubState } from "../../../shared/protocol/index.js";
import type { UiDelta, UiSnapshot } from "../../../shared/ui-protocol/types.js";
import { cleanupAll, onCleanup, startHubChild, startService, until } from "../stream/harness.js";
import { expectAckedInOrder, ids, probeHealth, rawAgent, type Ack } from "./harness.js";

afterEach(cleanupAll);

/** The flood's address: the hub sees another remote host. */
const FLOOD = "127.0.0.2";
/** The evicted agent's semaphores, each with an active alert: its forget takes many slices. */
const GONE = 5000;
/** Per message: a register part or a batch stays well under the hub's packet limit. */
const PART = 1000;

/** A dashboard as the renderer keeps one: its snapshot with every delta applied (a gap asks for a new snapshot). */
class Board {
  keys = new Set<string>();
  agents = new Set<string>();
  alerts = new Map<string, Alert>();
  fleet = new Set<string>();
  evicted = 0;
  /** What it showed of the evicted agent after the eviction was counted (must stay empty). */
  readonly shown: string[] = [];
  private seq = -1;

  constructor(
    readonly socket: Socket,
    private readonly gone: { agentId: string; instance: string },
  ) {
    socket.on("snapshot", (s: UiSnapshot) => this.snapshot(s));
    socket.on("delta", (d: UiDelta) => this.delta(d));
  }

  get synced(): boolean {
    return this.seq >= 0;
  }

  activeOf(instance: string): string[] {
    return [...this.alerts.values()].filter((a) => a.instance === instance && a.resolvedAt === null).map((a) => a.id);
  }

  private snapshot(s: UiSnapshot): void {
    this.seq = s.deltaSeq;
    this.keys = new Set(s.state.semaphores.map((x) => x.key));
    this.agents = new Set(s.state.agents.map((a) => a.agentId));
    this.alerts = new Map(s.alertLog.map((a) => [a.id, a]));
    this.fleet = new Set(s.fleet.map((f) => f.key));
    this.evicted = Math.max(this.evicted, s.state.hub.admission?.evictedAgents ?? 0);
    this.check("snapshot");
  }

  private delta(d: UiDelta): void {
    if (this.seq < 0 || d.seq <= this.seq) return;
    if (d.seq !== this.seq + 1) {
      this.seq = -1;
      this.socket.emit("snapshot:get");
      return;
    }
    this.seq = d.seq;
    for (const p of d.semaphores ?? []) this.keys.add(p.key);
    for (const k of d.removed ?? []) this.keys.delete(k);
    for (const a of d.agents ?? []) this.agents.add(a.agentId);
    for (const id of d.removedAgents ?? []) this.agents.delete(id);
    for (const c of d.alerts ?? []) this.alerts.set(c.alert.id, c.alert);
    for (const f of d.fleet ?? []) this.fleet.add(f.key);
    for (const k of d.removedFleet ?? []) this.fleet.delete(k);
    this.evicted = Math.max(this.evicted, d.admission?.evictedAgents ?? 0);
    this.check(`delta ${d.seq}`);
  }

  private check(what: string): void {
    if (this.evicted === 0) return;
    const prefix = `flood/${this.gone.instance}/`;
    const keys = [...this.keys].filter((k) => k.startsWith(prefix));
    if (keys.length > 0) this.shown.push(`${what}: ${keys.length} of its semaphores`);
    if (this.agents.has(this.gone.agentId)) this.shown.push(`${what}: the agent`);
    const groups = [...this.fleet].filter((k) => k.startsWith(prefix));
    if (groups.length > 0) this.shown.push(`${what}: ${groups.length} fleet groups`);
  }
}

function ok(ack: Ack, what: string): void {
  if (!ack.ok) throw new Error(`${what} refused: ${ack.error}`);
}

/** A fresh dashboard's first snapshot. */
async function freshSnapshot(url: string): Promise<UiSnapshot> {
  const socket = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
  onCleanup(() => socket.disconnect());
  const s = await new Promise<UiSnapshot>((resolve) => socket.once("snapshot", resolve));
  socket.disconnect();
  return s;
}

async function state(url: string): Promise<ApiHubState> {
  return (await (await fetch(`${url}/api/state`)).json()) as ApiHubState;
}

describe("an agent evicted to make room while a dashboard is open", () => {
  it("keeps the honest agent acked in order and /healthz answering, and the dashboard never shows the evicted agent's semaphores", async () => {
    // One agent per flood address: the next one's hello evicts the one gone.
    const hub = await startHubChild({ admission: { maxAgentsPerAddress: 1 }, agentAddressBudget: { itemsPerSecond: 1_000_000, burst: 1_000_000 } });
    const honest = await startService({ url: hub.url, service: "honest", instance: "h-1", intervalMs: 200, scenarios: ["steady:5"], notifyAcks: true });
    const ui = io(`${hub.url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
    onCleanup(() => ui.disconnect());
    const board = new Board(ui, { agentId: "gone", instance: "gone" });
    await until(() => board.synced || undefined, "the dashboard's snapshot", 10_000);

    // The agent to evict: 5,000 semaphores, each with a double_release alert, then gone.
    const gone = await rawAgent(hub.url, { from: FLOOD });
    ok(await gone.hello("gone", { service: "flood", instance: "gone", features: ["many_semaphores"] }), "hello");
    const list = ids("g", GONE);
    for (let i = 0; i < GONE; i += PART) ok(await gone.emit("register", { semaphores: list.slice(i, i + PART).map((id) => ({ id, name: id, kind: "semaphore", cap: 10, queue: "fifo", maxWaiters: null, acquireTimeoutMs: null, leaseTimeoutMs: null, leakThresholdMs: null, scope: "process" })), partial: i + PART < GONE ? "more" : "end" }), "register");
    for (let i = 0; i < GONE; i += PART) ok(await gone.samples(i / PART, list.slice(i, i + PART), { doubleReleases: 1 }), "samples");
    await until(() => board.keys.size >= GONE + 5 && board.activeOf("gone").length >= GONE || undefined, "the dashboard showing its semaphores and alerts", 30_000);
    gone.close();
    await until(async () => (await state(hub.url)).agents.find((a) => a.agentId === "gone")?.connected === false || undefined, "its close", 10_000);

    const health = probeHealth(hub.url);
    const next = await rawAgent(hub.url, { from: FLOOD });
    ok(await next.hello("next", { service: "flood", instance: "next" }), "the next agent's hello");
    // Counted at once: no read from here on finds it, whatever its slices have left to do.
    const now = await state(hub.url);
    expect(now.hub.admission?.evictedAgents).toBe(1);
    expect(now.agents.map((a) => a.agentId)).not.toContain("gone");
    expect(now.semaphores.filter((s) => s.instance === "gone")).toEqual([]);
    expect(now.alerts.filter((a) => a.instance === "gone")).toEqual([]);
    const fresh = await freshSnapshot(hub.url);
    expect(fresh.state.semaphores.filter((s) => s.instance === "gone")).toEqual([]);
    expect(fresh.alertLog.filter((a) => a.instance === "gone" && a.resolvedAt === null)).toEqual([]);

    await until(() => board.evicted === 1 || undefined, "a delta counting the eviction", 10_000);
    await until(() => board.activeOf("gone").length === 0 || undefined, "its alerts resolved on the dashboard", 30_000);
    ok(await next.samples(0, ["n-0"]), "the next agent's samples");
    await until(() => board.keys.has("flood/next/n-0") || undefined, "the next agent's semaphore on the dashboard", 10_000);
    const { late, asked } = await health.stop();
    expect(late, `/healthz late or failing (${late.length} of ${asked})`).toEqual([]);
    expect(board.shown).toEqual([]);
    // It ends where a fresh dashboard starts.
    const end = await freshSnapshot(hub.url);
    expect([...board.keys].sort()).toEqual(end.state.semaphores.map((s) => s.key).sort());
    expect([...board.agents].sort()).toEqual(end.state.agents.map((a) => a.agentId).sort());
    expect(board.activeOf("gone")).toEqual([]);
    await expectAckedInOrder(honest);
  }, 120_000);
});
