// The dashboard's Fleet tab (real Chromium, web mode) for replicas splitting a budget on a real
// Redis: the Replicas cell shows each live replica's share, and follows the split when one dies.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Hub } from "../../../main/hub/index.js";
import { until, type Browser } from "../browser.js";
import { cleanupAll } from "../stream/harness.js";
import type { Replica } from "./harness.js";
import { startShareDashboard } from "./dashboard-rig.js";

const LEASE_MS = 1500;

let hub: Hub;
let browser: Browser;
let replicas: Replica[];

beforeAll(async () => {
  ({ hub, browser, replicas } = await startShareDashboard({ service: "share-ui", budget: 20, leaseMs: LEASE_MS, heartbeatMs: 300, intervalMs: 250 }, ["a", "b", "c"]));
}, 120_000);
afterAll(cleanupAll);

/** The shares in the cell, as a sorted list ("7·6·7" → [6, 7, 7]). */
const sharesIn = (text: string | null) =>
  (text ?? "").replace(/\s/g, "").split("·").filter((x) => x !== "").map(Number).sort((a, b) => a - b);

describe("the Fleet tab for a budget split across replicas", () => {
  it("shows each live replica's share of the budget, and the new split after one is killed", async () => {
    const page = browser.page;
    await page.goto(`${hub.url}/#/fleet`);
    const shares = page.locator('.sem-row[data-key="share-ui/db"]').getByTestId("shares");
    await until("7·7·6 among three", async () => ((await shares.count()) > 0 ? shares.textContent() : null), (t) => sharesIn(t).join() === "6,7,7", 30_000);
    const title = (await shares.getAttribute("title")) ?? "";
    expect(title).toContain("The budget of 20 split across 3 live replicas");
    for (const r of replicas) expect(title).toMatch(new RegExp(`^${r.instance}: [67]$`, "m"));

    await replicas[0].kill("SIGKILL");
    await until("10·10 among two", () => shares.textContent(), (t) => sharesIn(t).join() === "10,10", 2 * LEASE_MS + 10_000);
    expect(await shares.getAttribute("title")).toContain("split across 2 live replicas");
    expect(browser.errors).toEqual([]);
  }, 60_000);
});
