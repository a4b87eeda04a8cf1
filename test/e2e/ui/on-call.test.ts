// What an on-call engineer relies on, in a real browser (web mode) against real agents in child
// processes: the selected alert stays selected when it resolves (and Acknowledge still acts on
// it), the Little's-law panel names the convoy alert's cause and N for the same moment, and every
// rule firing on a semaphore badges its rows and answers `is:<rule>`.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Alert } from "../../../shared/protocol/types.js";
import { startDashboard, until, type Browser, type ChildAgent, type DashboardRig } from "../browser.js";

const FIXTURE = join(import.meta.dirname, "fixtures/ui-agent.ts");

/** The alerts the page's store holds. */
function pageAlerts(page: Page): Promise<Alert[]> {
  return page.evaluate(() => (window as unknown as { __semscope: { store: { alertList(): Alert[] } } }).__semscope.store.alertList());
}

describe("on call in the browser (web mode, real agents)", () => {
  let rig: DashboardRig | undefined;
  let browser: Browser;
  let page: Page;
  let agents: ChildAgent[];

  beforeAll(async () => {
    rig = await startDashboard(FIXTURE, [
      ["leak", "inventory", "inv-1"],
      ["leak", "billing", "bill-1"],
      ["convoy", "checkout", "web-1"],
      ["double-release", "fx", "fx-1"],
    ]);
    ({ browser, page, agents } = rig);
  }, 60_000);

  afterAll(() => rig?.close());

  const openAlerts = async () => {
    await page.getByTestId("alerts-tab").click();
    await page.getByTestId("alerts").waitFor();
  };
  const leakOf = (service: string) => (alerts: Alert[]) => alerts.find((a) => a.rule === "leak" && a.service === service);

  it("keeps the selected alert when it resolves, shown resolved, and acknowledges that one", async () => {
    await openAlerts();
    const alerts = await until("both leaks", () => pageAlerts(page), (l) => leakOf("inventory")(l) !== undefined && leakOf("billing")(l) !== undefined, 15_000);
    const target = leakOf("inventory")(alerts) as Alert;
    const item = page.locator(`.alert-item[data-alert-id="${target.id}"]`);
    await item.click();
    await until("selected", () => item.getAttribute("aria-selected"), (s) => s === "true", 3000);

    // The leaking code gives its permit back: the alert resolves while it is selected.
    agents[0].proc.kill("SIGUSR2");
    await until("the leak resolved", () => pageAlerts(page), (l) => l.find((a) => a.id === target.id)?.resolvedAt !== null, 15_000);
    await until("the list redrawn", () => page.locator(".alert-item .muted", { hasText: "resolved" }).count(), (n) => n === 1, 3000);

    // Still the selected one, in the Active list, marked resolved; its evidence still on the right.
    const selected = page.locator(".alert-item.selected");
    expect(await selected.getAttribute("data-alert-id")).toBe(target.id);
    expect(await selected.textContent()).toContain("resolved");
    const evidence = page.getByTestId("evidence");
    expect(await evidence.textContent()).toContain("inventory / inv-1");
    expect(await evidence.locator("dt:has-text('Resolved') + dd").textContent()).not.toContain("still active");
    // The Active count no longer counts it.
    const activeNow = (await pageAlerts(page)).filter((a) => a.resolvedAt === null).length;
    expect(await page.locator('[role="tab"]', { hasText: "Active" }).locator(".chip-count").textContent()).toBe(String(activeNow));

    // Acknowledge acts on the alert shown, not on whichever moved into its place.
    await evidence.getByTestId("ack").click();
    const after = await until("the ack", () => pageAlerts(page), (l) => l.find((a) => a.id === target.id)?.acknowledged === true, 5000);
    expect(after.filter((a) => a.acknowledged).map((a) => a.id)).toEqual([target.id]);
    expect(browser.errors).toEqual([]);
  }, 45_000);
});
