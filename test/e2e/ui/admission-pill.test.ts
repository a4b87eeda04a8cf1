// Dashboards refused at the hub's /ui caps, in the browser: the "refused" pill next to the
// connection appears and its tooltip says how many dashboards were refused, and at which cap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UI_LIMITS } from "../../../shared/ui-protocol/index.js";
import { client } from "../../main/hub/helpers.js";
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
