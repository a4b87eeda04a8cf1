// Agent connections that never say hello (issue 28, item 4): raw WebSockets that join /agent and
// sit idle, from one address and then another. What the protocol promises: connections not yet
// past hello are bounded per address and in all (the rest refused at the handshake, with a reason,
// counted in /api/state and /metrics), each is closed once its hello deadline passes, and meanwhile
// an honest agent's batches are all acknowledged, in order, and /healthz answers. An honest agent
// refused at such a cap comes back by itself once there is room.
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { ApiHubState } from "../../../shared/protocol/index.js";
import { cleanupAll, onCleanup, startHubChild, startService } from "../stream/harness.js";
import { expectAckedInOrder, probeHealth } from "./harness.js";

afterEach(cleanupAll);

interface Idle {
  /** "accepted" (the /agent handshake answered CONNECT) or the CONNECT_ERROR's message. */
  readonly joined: Promise<string>;
  readonly closed: Promise<void>;
  isOpen(): boolean;
}

/** A raw engine.io WebSocket from `from` that joins /agent with a valid handshake (or, `join` false, no namespace) and then says nothing. */
function idleAgent(url: string, from: string, join = true): Idle {
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/socket.io/?EIO=4&transport=websocket`, { localAddress: from });
  onCleanup(() => ws.terminate());
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  const joined = new Promise<string>((resolve) => {
    ws.on("error", (err) => resolve(`error: ${err.message}`));
    ws.once("close", () => resolve("closed"));
    ws.on("message", (data: WebSocket.RawData) => {
      const text = String(data);
      if (text.startsWith("0") && join) ws.send(`40/agent,${JSON.stringify({ protocol: 1 })}`);
      else if (text.startsWith("0")) resolve("open");
      else if (text.startsWith("40/agent,")) resolve("accepted");
      else if (text.startsWith("44/agent,")) resolve((JSON.parse(text.slice("44/agent,".length)) as { message: string }).message);
      else if (text === "2") ws.send("3");
    });
  });
  return { joined, closed, isOpen: () => ws.readyState === WebSocket.OPEN };
}

async function state(url: string): Promise<ApiHubState> {
  const res = await fetch(`${url}/api/state`);
  expect(res.status).toBe(200);
  return (await res.json()) as ApiHubState;
}

describe("agent connections that never say hello", () => {
  it("are held at most maxPendingAgentsPerAddress per address and maxPendingAgents in all, and closed at the hello deadline", async () => {
    const hub = await startHubChild({ admission: { maxPendingAgents: 60, maxPendingAgentsPerAddress: 40, helloTimeoutMs: 3000 } });
    const honest = await startService({ url: hub.url, service: "honest", instance: "h-1", intervalMs: 250, scenarios: ["steady:5"], notifyAcks: true });
    const health = probeHealth(hub.url);

    const first = Array.from({ length: 150 }, () => idleAgent(hub.url, "127.0.0.2"));
    const firstJoined = await Promise.all(first.map((c) => c.joined));
    const second = Array.from({ length: 60 }, () => idleAgent(hub.url, "127.0.0.3"));
    const secondJoined = await Promise.all(second.map((c) => c.joined));

    // The honest agent took its one pending place for a round trip: the others fill what is left.
    expect(firstJoined.filter((j) => j === "accepted").length).toBeLessThanOrEqual(40);
    expect(firstJoined.filter((j) => j !== "accepted").every((j) => /too many agent connections waiting for hello from this address \(at most 40\)/.test(j))).toBe(true);
    expect(secondJoined.filter((j) => j === "accepted").length).toBeLessThanOrEqual(60 - firstJoined.filter((j) => j === "accepted").length);
    expect(secondJoined.filter((j) => j !== "accepted").every((j) => /too many agent connections waiting for hello on this hub \(at most 60\)/.test(j))).toBe(true);

    // The hello deadline closes every idle connection the hub let in.
    const all = [...first, ...second];
    await Promise.all(all.map((c) => c.closed));
    expect(all.filter((c) => c.isOpen())).toEqual([]);

    const a = (await state(hub.url)).hub.admission!;
    const refused = firstJoined.filter((j) => j !== "accepted").length + secondJoined.filter((j) => j !== "accepted").length;
    expect(a.refused.connections).toBe(refused);
    expect(a.refusedScope?.connections?.address).toBeGreaterThan(0);
    expect(a.refusedScope?.connections?.total).toBeGreaterThan(0);
    expect(a.helloTimeouts).toBe(all.length - refused);
    const metrics = await (await fetch(`${hub.url}/metrics`)).text();
    expect(metrics).toContain(`semscope_hub_admission_refused_total{what="connections",scope="address"} ${a.refusedScope?.connections?.address}`);

    await expectAckedInOrder(honest);
    expect(honest.messages.filter((m) => m.type === "connected").length).toBe(1);
    const { asked, late } = await health.stop();
    expect(asked).toBeGreaterThan(0);
    expect(late).toEqual([]);
  });

  it("lets an honest agent refused at the pending cap in by itself once the idle connections are closed", async () => {
    const hub = await startHubChild({ admission: { maxPendingAgentsPerAddress: 20, helloTimeoutMs: 6000 } });
    const idle = Array.from({ length: 20 }, () => idleAgent(hub.url, "127.0.0.1"));
    expect(await Promise.all(idle.map((c) => c.joined))).toEqual(idle.map(() => "accepted"));
    // Its first attempts are refused at the handshake; its retries (backoff) get in after the deadline.
    const honest = await startService({ url: hub.url, service: "honest", instance: "h-1", intervalMs: 250, scenarios: ["steady:5"], notifyAcks: true });
    await expectAckedInOrder(honest);
    const s = await state(hub.url);
    expect(s.agents.filter((x) => x.service === "honest" && x.connected).length).toBe(1);
    expect(s.hub.admission!.refused.connections).toBeGreaterThan(0);
  });

  it("that join no namespace are held at most as many per address as its agents, pending agents and dashboards may use", async () => {
    // Per address: 5 agents + 5 pending + 8 dashboards (UI_LIMITS) = 18 connections.
    const hub = await startHubChild({ admission: { maxAgentsPerAddress: 5, maxPendingAgentsPerAddress: 5, helloTimeoutMs: 3000 } });
    const health = probeHealth(hub.url);
    const idle = Array.from({ length: 100 }, () => idleAgent(hub.url, "127.0.0.2", false));
    const opened = await Promise.all(idle.map((c) => c.joined));
    expect(opened.filter((j) => j === "open").length).toBeLessThanOrEqual(18);
    expect(opened.filter((j) => j !== "open").every((j) => /Unexpected server response: 4\d\d/.test(j))).toBe(true);
    // Another address is not refused for them, and they close at the deadline.
    const honest = await startService({ url: hub.url, service: "honest", instance: "h-1", intervalMs: 250, scenarios: ["steady:5"], notifyAcks: true });
    await Promise.all(idle.map((c) => c.closed));
    await expectAckedInOrder(honest);
    expect((await health.stop()).late).toEqual([]);
  });
});
