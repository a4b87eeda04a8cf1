// Dashboards refused at the /ui caps are counted by the cap's scope, as agents and semaphores are:
// in hub.admission (/api/stats, /api/state, deltas) and in /metrics, beside the old total of
// refused handshakes. Connections come from several loopback addresses, so the hub sees several hosts.
import { afterEach, describe, expect, it } from "vitest";
import type { HubAdmission } from "../../../../shared/protocol/index.js";
import { UI_LIMITS, type UiDelta, type UiSnapshot } from "../../../../shared/ui-protocol/index.js";
import { cleanupAll, client, getJson, startHub, waitUntil } from "../helpers.js";

afterEach(cleanupAll);

/** The connect_error message of a refused /ui handshake from `from`. */
async function refusal(url: string, from: string, auth?: Record<string, unknown>): Promise<string> {
  try {
    await client(url, "/ui", { from, ...(auth !== undefined ? { auth } : {}) });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`a dashboard from ${from} was admitted`);
}

describe("/ui refusals at the dashboard caps", () => {
  it("are counted by scope in hub.admission, /api/stats, deltas and /metrics, and still in handshakesRefused", async () => {
    const hub = await startHub({ token: "t0ken" });
    const auth = { protocol: 1, token: "t0ken" };
    const first = await client(hub.url, "/ui", { from: "127.0.0.1", auth });
    let admission: HubAdmission | undefined;
    first.on("snapshot", (s: UiSnapshot) => void (admission = s.state.hub.admission));
    first.on("delta", (d: UiDelta) => void (admission = d.admission ?? admission));
    await waitUntil(() => admission !== undefined, "the first dashboard's snapshot");
    expect(admission?.refused.dashboards).toBe(0);

    // 127.0.0.1 fills its own cap; three more addresses fill the hub; a fifth finds it full.
    const { maxClientsPerAddress: perAddress, maxClients } = UI_LIMITS;
    for (let i = 1; i < perAddress; i++) await client(hub.url, "/ui", { from: "127.0.0.1", auth });
    expect(await refusal(hub.url, "127.0.0.1", auth)).toBe(`too many dashboards from this address (at most ${perAddress})`);
    for (let i = perAddress; i < maxClients; i++) await client(hub.url, "/ui", { from: `127.0.0.${2 + Math.floor(i / perAddress) - 1}`, auth });
    expect(await refusal(hub.url, "127.0.1.1", auth)).toBe(`too many dashboards connected to this hub (at most ${maxClients})`);
    expect(await refusal(hub.url, "127.0.1.1", auth)).toBe(`too many dashboards connected to this hub (at most ${maxClients})`);
    // A wrong token is no cap: counted in handshakesRefused only.
    expect(await refusal(hub.url, "127.0.0.4", { protocol: 1, token: "nope" })).toBe("unauthorized");

    const scoped = { address: 1, total: 2 };
    const headers = { authorization: "Bearer t0ken" };
    const stats = await getJson<{ handshakesRefused: number; admission: HubAdmission }>(hub, "/api/stats", { headers });
    expect(stats.body.handshakesRefused).toBe(4);
    expect(stats.body.admission.refused).toEqual({ agents: 0, semaphores: 0, identity: 0, dashboards: 3, connections: 0 });
    expect(stats.body.admission.refusedScope?.dashboards).toEqual(scoped);
    const state = await getJson<{ hub: { admission: HubAdmission } }>(hub, "/api/state", { headers });
    expect(state.body.hub.admission.refusedScope?.dashboards).toEqual(scoped);
    await waitUntil(() => JSON.stringify(admission?.refusedScope?.dashboards) === JSON.stringify(scoped), "a delta with the dashboards refused by scope");
    expect(admission?.refused.dashboards).toBe(3);

    const metrics = await (await fetch(`${hub.url}/metrics`, { headers })).text();
    expect(metrics).toMatch(/^semscope_hub_admission_refused_total\{what="dashboards",scope="address"\} 1$/m);
    expect(metrics).toMatch(/^semscope_hub_admission_refused_total\{what="dashboards",scope="total"\} 2$/m);
    expect(metrics).toMatch(/^semscope_hub_handshakes_refused_total 4$/m);
  });
});
