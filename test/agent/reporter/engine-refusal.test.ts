// A hub that refuses a connection before any namespace (its cap on open connections,
// main/hub/socket/connection-cap.ts) says why in its answer; the agent shows that reason in
// status().lastError, never throws into its host, and gets in once there is room.
import { Manager } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../../agent/src/index.js";
import { refusalReason } from "../../../agent/src/reporter/refusal-websocket.js";
import { createHub } from "../../../main/hub/index.js";
import { waitUntil } from "./fake-hub.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

/** An engine.io connection that joins no namespace: it holds one of the hub's open connections. */
function holdConnection(url: string): Promise<Manager> {
  const m = new Manager(url, { transports: ["websocket"], reconnection: false, autoConnect: false });
  cleanup.push(() => m.engine?.close());
  return new Promise((resolve, reject) => m.open((err) => (err === undefined ? resolve(m) : reject(err))));
}

describe("a connection the hub refuses before any namespace", () => {
  it("leaves the hub's reason in the agent's lastError, and the agent gets in once there is room", async () => {
    // One agent, one pending and one dashboard per address: 3 open connections from one address.
    const hub = await createHub({
      port: 0,
      log: () => undefined,
      admission: { maxAgentsPerAddress: 1, maxPendingAgentsPerAddress: 1, maxDashboardsPerAddress: 1, helloTimeoutMs: 60_000 },
    });
    cleanup.push(() => hub.close());
    const held = await Promise.all([0, 1, 2].map(() => holdConnection(hub.url)));
    // What any client's first request gets then: engine.io's refusal, the hub's reason in its body.
    const polling = await fetch(`${hub.url}/socket.io/?EIO=4&transport=polling`);
    expect(polling.status).toBe(403);
    expect(await polling.json()).toEqual({ code: 4, message: "too many connections from this address (at most 3)" });
    const rejected = hub.rejected;

    const agent = connect({ url: hub.url, service: "checkout", instance: "refused-1", intervalMs: 50 });
    cleanup.push(() => agent.close());
    await waitUntil(() => hub.rejected > rejected, "the hub refusing the agent's connection", 10_000);
    await waitUntil(() => agent.status().lastError !== null, "the agent's connect error", 10_000);
    expect(agent.connected).toBe(false);
    expect(agent.status().lastError).toBe("hub refused the connection (HTTP 400): too many connections from this address (at most 3)");

    for (const m of held) m.engine.close();
    await waitUntil(() => agent.connected, "the agent connected once there is room", 30_000);
  });

  it("reads the reason from a text or engine.io JSON body, bounded and on one line", () => {
    expect(refusalReason(400, "too many connections to this hub (at most 9)")).toBe("hub refused the connection (HTTP 400): too many connections to this hub (at most 9)");
    expect(refusalReason(403, '{"code":4,"message":"origin not allowed"}')).toBe("hub refused the connection (HTTP 403): origin not allowed");
    expect(refusalReason(502, "")).toBe("hub refused the connection (HTTP 502)");
    expect(refusalReason(400, "two\r\nlines\u0000")).toBe("hub refused the connection (HTTP 400): two lines");
    expect(refusalReason(400, "x".repeat(5000))).toHaveLength("hub refused the connection (HTTP 400): ".length + 200);
  });
});
