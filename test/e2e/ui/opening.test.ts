// A pool's connections being opened, in a real browser against a real agent: an instrumented tarn
// pool whose connections take until a signal to open, its callers waiting. The hub has the
// sample's `opening`; the dashboard says "4 opening" beside in-use on the semaphore's row, in its
// detail view and on its fleet's row, and says nothing once the connections are open.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HubState } from "../../../shared/protocol/types.js";
import { startDashboard, until, type DashboardRig } from "../browser.js";

const FIXTURE = join(import.meta.dirname, "fixtures/ui-agent.ts");

async function poolState(url: string): Promise<HubState["semaphores"][number] | undefined> {
  const state = (await (await fetch(`${url}/api/state`)).json()) as HubState;
  return state.semaphores.find((s) => s.service === "shop" && s.name === "db-pool");
}

describe("connections a pool is opening (web mode, a real agent)", () => {
  let rig: DashboardRig | undefined;

  beforeAll(async () => {
    rig = await startDashboard(FIXTURE, [["opening", "shop", "api-1"]]);
  }, 60_000);

  afterAll(() => rig?.close());

  it("shows them beside in-use on the row, in the detail view and on the fleet's row, and nothing at 0", async () => {
    const { page, hub, agents, browser } = rig as DashboardRig;
    const sem = await until("4 opening at the hub", () => poolState(hub.url), (s) => s?.last?.opening === 4, 15_000);
    const key = sem!.key;
    const row = page.locator(`.sem-row[data-key="${key}"]`);
    await until("the row's label", () => row.getByTestId("opening").textContent().catch(() => null), (t) => t === "4 opening", 10_000);
    // Beside the in-use bar, in the same cell.
    expect(await row.locator(".c-util").getByTestId("opening").count()).toBe(1);

    await page.getByRole("button", { name: "Fleet" }).click();
    const fleetRow = page.locator('.sem-row[data-key="shop/db-pool"]');
    await until("the fleet row's label", () => fleetRow.getByTestId("opening").textContent().catch(() => null), (t) => t === "4 opening", 10_000);

    await page.evaluate((k) => (location.hash = `#/s/${encodeURIComponent(k)}`), key);
    const stats = page.getByTestId("stats");
    await until("the detail view's label", () => stats.getByTestId("opening").textContent().catch(() => null), (t) => t === "4 opening", 10_000);

    // The connections open: the pool serves its callers and opens nothing more.
    agents[0].proc.kill("SIGUSR1");
    await until("none opening at the hub", () => poolState(hub.url), (s) => s?.last !== null && s?.last?.opening === undefined && (s?.inUse ?? 0) > 0, 15_000);
    await until("no label in the detail view", () => stats.getByTestId("opening").count(), (n) => n === 0, 10_000);
    await page.evaluate(() => (location.hash = "#/"));
    await page.getByTestId("overview").waitFor();
    await until("no label on the row", () => row.getByTestId("opening").count(), (n) => n === 0, 10_000);
    expect(await row.count()).toBe(1);
    expect(browser.errors).toEqual([]);
  }, 60_000);
});
