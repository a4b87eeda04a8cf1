// A semaphore registered but not sampled yet, in the browser: the overview row and the detail
// strip say "waiting for first sample" instead of showing 0 in use, then show the first sample.
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent, info, request, sample, type AckAnswer } from "../../main/hub/helpers.js";
import { until } from "../browser.js";
import { openHubDashboard, type HubDashboard } from "./hub-dashboard.js";

describe("a semaphore before its first sample, in the dashboard", () => {
  let dashboard: HubDashboard | undefined;
  let socket: Socket;

  beforeAll(async () => {
    dashboard = await openHubDashboard(async (hub) => {
      socket = await agent(hub, "quiet-agent", [info("db", { cap: 10 })], { service: "quiet", instance: "q-1" });
    });
  }, 90_000);

  afterAll(() => dashboard?.close());

  it("says it is waiting for the first sample, then shows the sample's numbers", async () => {
    const page = (dashboard as HubDashboard).browser.page;
    const row = page.locator('.sem-row[data-key="quiet/q-1/db"]');
    await row.waitFor({ timeout: 15_000 });
    expect(await row.locator(".c-util").textContent()).toBe("waiting for first sample");
    expect(await row.locator(".c-num").first().textContent()).toBe("— / 10");

    await row.click();
    await page.getByTestId("stats").waitFor();
    expect(await page.getByTestId("stats").textContent()).toContain("waiting for first sample");

    expect(await request<AckAnswer>(socket, "samples", { seq: 0, t: Date.now(), intervalMs: 1000, items: [sample("db", { cap: 10, inUse: 4 })] })).toMatchObject({ ok: true });
    await until("the first sample in the detail strip", () => page.getByTestId("stats").textContent(), (t) => (t ?? "").includes("4 / 10") && !(t ?? "").includes("waiting"), 15_000);
  }, 60_000);
});
