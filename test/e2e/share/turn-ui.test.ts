// The dashboard (real Chromium, web mode) for more replicas than their shared budget, on a real
// Redis: 3 replicas on a budget of 2 take turns, and the one out of its turn (cap and share 0) is
// labelled "waiting for its turn" wherever it shows (its row, its detail view, the fleet's row and
// the fleet detail's replicas), so its 0 does not read as a leak or a dead replica.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Hub } from "../../../main/hub/index.js";
import type { HubState } from "../../../shared/protocol/types.js";
import { until, type Browser } from "../browser.js";
import { cleanupAll } from "../stream/harness.js";
import { startShareDashboard } from "./dashboard-rig.js";

const SERVICE = "share-turn-ui";
// One turn outlasts the test: the replica out of turn stays the same throughout.
const TURN_MS = 3_600_000;

let hub: Hub;
let browser: Browser;

beforeAll(async () => {
  ({ hub, browser } = await startShareDashboard({ service: SERVICE, budget: 2, leaseMs: 1000, heartbeatMs: 200, intervalMs: 250, turnMs: TURN_MS }, ["t1", "t2", "t3"]));
}, 120_000);
afterAll(cleanupAll);

/** The replicas' semaphores at the hub, once all three have a share. */
async function members(): Promise<HubState["semaphores"]> {
  const state = (await (await fetch(`${hub.url}/api/state`)).json()) as HubState;
  return state.semaphores.filter((s) => s.service === SERVICE && s.last?.share !== undefined);
}

describe("replicas taking turns with a budget", () => {
  it("labels the replica out of its turn on its row, its detail view, the fleet row and the fleet's replicas", async () => {
    const page = browser.page;
    const settled = await until("one replica at 0 of 3", members, (l) => l.length === 3 && l.filter((s) => s.last?.share?.target === 0 && s.cap === 0).length === 1, 30_000);
    const off = settled.find((s) => s.last?.share?.target === 0)!;
    const on = settled.filter((s) => s !== off);

    await page.goto(`${hub.url}/#/fleet`);
    const fleetRow = page.locator(`.sem-row[data-key="${SERVICE}/db"]`);
    const label = fleetRow.getByTestId("turn-wait");
    await until("the fleet row's label", () => label.textContent().catch(() => null), (t) => t === "1 waiting for its turn", 15_000);
    expect(await label.getAttribute("title")).toMatch(new RegExp(`^${off.instance}: 0 — waiting for its turn \\(the permits rotate\\)$`, "m"));

    // Its own row says it instead of an empty bar; the replicas holding the permits have bars.
    await page.getByRole("button", { name: "Semaphores" }).click();
    const offRow = page.locator(`.sem-row[data-key="${off.key}"]`);
    await until("the row's label", () => offRow.getByTestId("turn-wait").count(), (n) => n === 1, 10_000);
    expect(await offRow.getByTestId("turn-wait").getAttribute("title")).toContain("3 live replicas share a budget of 2");
    for (const s of on) {
      const row = page.locator(`.sem-row[data-key="${s.key}"]`);
      expect(await row.getByTestId("turn-wait").count()).toBe(0);
      expect(await row.locator(".util").count()).toBe(1);
    }

    await page.evaluate((k) => (location.hash = `#/s/${encodeURIComponent(k)}`), off.key);
    const stats = page.getByTestId("stats");
    await until("the detail view's label", () => stats.getByTestId("turn-wait").count(), (n) => n === 1, 10_000);
    expect(await stats.textContent()).toContain("3 replicas take turns with a budget of 2");

    await page.evaluate((s) => (location.hash = `#/f/${encodeURIComponent(s)}/db`), SERVICE);
    const panel = page.getByTestId("replicas");
    await until("the replicas panel", () => panel.locator("tr", { hasText: off.instance }).getByTestId("turn-wait").count(), (n) => n === 1, 10_000);
    expect(await panel.getByTestId("turn-wait").count()).toBe(1);
    expect(browser.errors).toEqual([]);
  }, 60_000);
});
