// What the hub refused, in the browser: the "refused" pill next to the connection appears and its
// tooltip says how many dashboards, agents, semaphore messages and identity claims were refused,
// and at which cap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UI_LIMITS } from "../../../shared/ui-protocol/index.js";
import { client, hello, info, request, type AckAnswer } from "../../main/hub/helpers.js";
import { until } from "../browser.js";
import { openHubDashboard, type HubDashboard } from "./hub-dashboard.js";

describe("dashboards refused at the caps, in the dashboard", () => {
  let dashboard: HubDashboard | undefined;

  beforeAll(async () => {
    dashboard = await openHubDashboard();
  }, 90_000);

  afterAll(() => dashboard?.close());

  it("shows them in the refused pill's tooltip, by cap", async () => {
    const { hub, browser } = dashboard as HubDashboard;
    const page = browser.page;
    await page.getByTestId("connection-state").waitFor({ timeout: 15_000 });
    await until("the page's dashboard connected", () => page.getByTestId("connection-state").textContent(), (t) => t === "Live", 15_000);
    expect(await page.getByTestId("admission-refused").count()).toBe(0);
    // The page is one dashboard from 127.0.0.1: fill that address's cap, then one more is refused.
    for (let i = 1; i < UI_LIMITS.maxClientsPerAddress; i++) await client(hub.url, "/ui", { from: "127.0.0.1" });
    await expect(client(hub.url, "/ui", { from: "127.0.0.1" })).rejects.toThrow(/^too many dashboards from this address/);
    const pill = page.getByTestId("admission-refused");
    await until("the refused pill", () => pill.count(), (n) => n === 1, 15_000);
    expect(await pill.textContent()).toBe("1 refused");
    expect(await pill.getAttribute("title")).toContain("1 dashboard connection(s) over its dashboard caps (1 at an address's cap, 0 at the hub's)");
  }, 60_000);
});

describe("agents, semaphores and identities refused, in the dashboard", () => {
  let dashboard: HubDashboard | undefined;

  beforeAll(async () => {
    // Caps small enough for a few raw agents to reach: one agent and two semaphores per address.
    dashboard = await openHubDashboard(undefined, { admission: { maxAgentsPerAddress: 1, maxSemaphoresPerAddress: 2 } });
  }, 90_000);

  afterAll(() => dashboard?.close());

  it("counts each in the refused pill, its tooltip naming the cap that refused", async () => {
    const { hub, browser } = dashboard as HubDashboard;
    const page = browser.page;
    await until("the page's dashboard connected", () => page.getByTestId("connection-state").textContent(), (t) => t === "Live", 15_000);
    expect(await page.getByTestId("admission-refused").count()).toBe(0);
    // From 127.0.0.2: one agent, whose register of three semaphores passes its address's two.
    const first = await client(hub.url, "/agent", { from: "127.0.0.2" });
    expect((await request<AckAnswer>(first, "hello", hello("first", { service: "svc", instance: "i-1" }))).ok).toBe(true);
    const register = await request<AckAnswer>(first, "register", { semaphores: ["a", "b", "c"].map((id) => info(id)) });
    expect(register.error).toBe("semaphore limit reached: address cap, at most 2 semaphores from one address (127.0.0.2)");
    // A second agent from there, the first still live: over the address's one agent.
    const second = await client(hub.url, "/agent", { from: "127.0.0.2" });
    expect((await request<AckAnswer>(second, "hello", hello("second", { service: "svc", instance: "i-2" }))).error).toBe("agent limit reached: address cap, at most 1 agents from one address (127.0.0.2)");
    // From elsewhere, a hello claiming the live agent's id.
    const impostor = await client(hub.url, "/agent", { from: "127.0.0.3" });
    expect((await request<AckAnswer>(impostor, "hello", hello("first", { service: "svc", instance: "i-1" }))).error).toBe("agentId already connected: another connection speaks for this agent");

    const pill = page.getByTestId("admission-refused");
    await until("the refused pill", () => pill.count(), (n) => n === 1, 15_000);
    await until("the pill counting all three", () => pill.textContent(), (t) => t === "3 refused", 15_000);
    const title = await pill.getAttribute("title");
    expect(title).toContain("1 agent(s) over its agent caps (1 at an address's cap, 0 at the hub's)");
    expect(title).toContain("1 message(s) over its semaphore caps (1 at an address's cap, 0 at the hub's)");
    expect(title).toContain("1 hello(s) claiming an identity another live agent holds");
    expect(title).toContain("1 per address) and 0 semaphores");
  }, 60_000);
});
