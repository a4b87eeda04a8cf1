// The dashboard in a real browser (web mode) against real agents in child processes: a leak
// becomes an alert within seconds with its acquisition stack one click away, an agent killed
// with SIGKILL shows as down, and an acknowledgement survives a page reload.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboard, until, type Browser, type ChildAgent, type DashboardRig } from "../browser.js";

const FIXTURE = join(import.meta.dirname, "fixtures/ui-agent.ts");

describe("alerts in the browser (web mode, real agents)", () => {
  let rig: DashboardRig | undefined;
  let browser: Browser;
  let page: Page;
  let agents: ChildAgent[];
  /** Responses with an error status the page got. */
  const failed: string[] = [];
  /** When the leaking agent said it was connected (it takes the leaked permit at start). */
  let leakReadyAt = 0;

  beforeAll(async () => {
    const leakAndVictim = [["leak", "inventory", "inv-1"], ["steady", "billing", "bill-1"]];
    // A console "Failed to load resource" does not say which: keep the URLs for the final check.
    rig = await startDashboard(FIXTURE, leakAndVictim, (p) =>
      p.on("response", (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${r.url()}`);
      }),
    );
    ({ browser, page, agents } = rig);
    leakReadyAt = rig.readyAt[0];
  }, 60_000);

  afterAll(() => rig?.close());

  const openAlerts = async () => {
    await page.getByTestId("alerts-tab").click();
    await page.getByTestId("alerts").waitFor();
  };
  const leakItem = () => page.locator(".alert-item", { hasText: "inventory / inv-1" }).filter({ hasText: "Leak" });

  it("shows a leak as an alert within seconds, its acquisition stack one click away", async () => {
    await openAlerts();
    await until("the leak alert in the list", () => leakItem().count(), (n) => n === 1, 10_000);
    // leakThresholdMs is 1 s and the agent reports every 250 ms: the hub raised it within seconds
    // of the agent connecting (the page's copy of the alert says when).
    const raisedAt = await page.evaluate(() => {
      const app = (window as unknown as { __semscope: { store: { alertList(): { rule: string; service?: string; raisedAt: number }[] } } }).__semscope;
      return app.store.alertList().find((a) => a.rule === "leak" && a.service === "inventory")?.raisedAt ?? null;
    });
    expect(raisedAt).not.toBeNull();
    expect((raisedAt ?? 0) - leakReadyAt).toBeLessThan(5000);
    // One click on the alert: its evidence, with the acquisition stack naming the code that took the permit.
    await leakItem().click();
    const stack = page.getByTestId("evidence").locator("pre.stack").first();
    await stack.waitFor({ timeout: 5000 });
    const text = (await stack.textContent()) ?? "";
    expect(text).toContain("ui-agent.ts");
    expect(text).toContain("leakyCheckoutHandler");
  }, 30_000);

  it("keeps an acknowledgement across a page reload", async () => {
    await openAlerts();
    await leakItem().click();
    await page.getByTestId("ack").click();
    await until("the ack tag", () => leakItem().locator(".tag", { hasText: "ack" }).count(), (n) => n === 1, 5000);
    await page.reload();
    await page.getByTestId("connection-state").waitFor();
    await until("live after reload", () => page.getByTestId("connection-state").textContent(), (t) => t === "Live", 10_000);
    await openAlerts();
    await until("the leak alert after reload", () => leakItem().count(), (n) => n === 1, 10_000);
    expect(await leakItem().locator(".tag", { hasText: "ack" }).count()).toBe(1);
    await leakItem().click();
    const evidence = page.getByTestId("evidence");
    expect(await evidence.locator("dt:has-text('Acknowledged') + dd").textContent()).toBe("yes");
    expect(await evidence.getByTestId("ack").count()).toBe(0);
  }, 30_000);

  it("shows an agent killed with SIGKILL as down", async () => {
    await page.getByRole("button", { name: "Semaphores" }).click();
    await page.getByTestId("overview").waitFor();
    const row = page.locator('.sem-row[data-key^="billing/bill-1/"]').first();
    await until("the victim's row", () => row.getAttribute("data-status"), (s) => s === "ok" || s === "saturated", 10_000);
    await agents[1].kill("SIGKILL");
    // The overview marks it: its rows go stale and its instance says the agent is disconnected.
    await until("the victim's row stale", () => row.getAttribute("data-status"), (s) => s === "stale", 10_000);
    expect(await page.locator(".instance-row", { hasText: "bill-1" }).locator(".tag", { hasText: "agent disconnected" }).count()).toBe(1);
    // And an agent_down alert is raised.
    await openAlerts();
    const down = page.locator(".alert-item", { hasText: "Agent down" }).filter({ hasText: "billing" });
    await until("the agent_down alert", () => down.count(), (n) => n === 1, 10_000);
    expect({ errors: browser.errors, failed }).toEqual({ errors: [], failed: [] });
  }, 30_000);
});
