// The dashboard in a real browser (web mode) against real agents in child processes: a convoy
// shows on the overview, pause freezes the detail charts while samples keep arriving (and resume
// catches up), and the token form refuses a wrong token with a message and connects with the
// right one.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHub } from "../../../main/hub/index.js";
import { sleep, startDashboard, until, type Browser, type DashboardRig } from "../browser.js";

const FIXTURE = join(import.meta.dirname, "fixtures/ui-agent.ts");

/** The sample time the page's store holds for a semaphore (it keeps updating while the charts are paused). */
function storeT(page: Page, key: string): Promise<number | null> {
  return page.evaluate((k) => {
    const app = (window as unknown as { __semscope: { store: { semaphore(k: string): { t: number | null } | undefined } } }).__semscope;
    return app.store.semaphore(k)?.t ?? null;
  }, key);
}

/** What the permits chart shows: its pixels (a digest) and its legend's time readout. */
async function chartState(page: Page): Promise<{ pixels: string; time: string }> {
  const card = page.locator('[data-chart="permits"]');
  const pixels = await card.locator("canvas").first().evaluate((c: HTMLCanvasElement) => {
    const url = c.toDataURL();
    let h = 0;
    for (let i = 0; i < url.length; i++) h = (Math.imul(h, 31) + url.charCodeAt(i)) | 0;
    return `${url.length}:${h}`;
  });
  const time = (await card.locator(".u-series").first().locator(".u-value").textContent()) ?? "";
  return { pixels, time };
}

describe("live views in the browser (web mode, real agents)", () => {
  let rig: DashboardRig | undefined;
  let browser: Browser;
  let page: Page;
  let staticDir = "";

  beforeAll(async () => {
    rig = await startDashboard(FIXTURE, [["convoy", "checkout", "web-1"]]);
    ({ browser, page, staticDir } = rig);
  }, 60_000);

  afterAll(() => rig?.close());

  it("shows a convoy (cap 2, slow downstream, 30 callers) on the overview", async () => {
    const row = page.locator('.sem-row[data-key^="checkout/web-1/payments"]').first();
    await until("the payments row's convoy status", () => row.getAttribute("data-status"), (s) => s === "convoy", 15_000);
    expect(await row.locator(".badge").textContent()).toBe("Convoy");
    // The healthy pool beside it is not dragged in.
    expect(await page.locator('.sem-row[data-key^="checkout/web-1/db"]').first().getAttribute("data-status")).not.toBe("convoy");
  }, 30_000);

  it("freezes the charts on pause while samples keep arriving, and catches up on resume", async () => {
    const key = (await page.locator('.sem-row[data-key^="checkout/web-1/db"]').first().getAttribute("data-key")) ?? "";
    expect(key).not.toBe("");
    await page.locator(`.sem-row[data-key="${key}"]`).click();
    await page.getByTestId("detail").waitFor();
    await until("live", () => page.getByTestId("live-state").textContent(), (t) => (t ?? "").includes("Live"), 10_000);
    // Live: the chart moves.
    await until("the permits chart drawn", () => chartState(page), (s) => s.time !== "" && s.time !== "—", 10_000);
    const live0 = await chartState(page);
    await until("the live chart to move", () => chartState(page), (s) => s.time !== live0.time, 5000);
    await page.mouse.move(0, 0);

    await page.getByTestId("pause").click();
    await until("paused", () => page.getByTestId("live-state").textContent(), (t) => (t ?? "").includes("Paused"), 3000);
    // Let a frame settle whatever was already scheduled, then watch for 2 s.
    await sleep(300);
    const frozen = await chartState(page);
    const t0 = await storeT(page, key);
    await sleep(2000);
    const t1 = await storeT(page, key);
    expect(t0).not.toBeNull();
    expect(t1 ?? 0).toBeGreaterThan(t0 ?? 0); // samples kept arriving
    expect(await chartState(page)).toEqual(frozen); // the chart did not move

    await page.getByTestId("pause").click();
    await until("live again", () => page.getByTestId("live-state").textContent(), (t) => (t ?? "").includes("Live"), 3000);
    // Caught up: the latest point is past where it was paused, within a couple of intervals of the store's.
    const caught = await until("the chart to catch up", () => chartState(page), (s) => s.time !== frozen.time && s.pixels !== frozen.pixels, 5000);
    expect(caught.time).not.toBe(frozen.time);
    expect(browser.errors).toEqual([]);
  }, 40_000);

  it("warms a detail view offscreen after start-up, out of the page's reach, and leaves nothing behind", async () => {
    const tab = await browser.context.newPage();
    const historyAsks: string[] = [];
    tab.on("websocket", (ws) => ws.on("framesent", (f) => typeof f.payload === "string" && f.payload.includes('"history:get"') && historyAsks.push(f.payload)));
    // What the page holds besides the app's #root: the warm-up's host while it runs, nothing after.
    const extraHosts = () => tab.evaluate(() => Array.from(document.body.children).filter((e) => e.tagName === "DIV" && e.id !== "root").length);
    try {
      await tab.goto(rig?.hub.url ?? "");
      await tab.getByTestId("overview").waitFor();
      // Nobody opened a view, yet one view's history is asked for: the warm-up's.
      await until("the warm-up's history request", () => historyAsks.length, (n) => n === 1, 10_000);
      expect(await extraHosts()).toBe(1);
      // Inside a closed shadow root: no query, test id or focus reaches its controls.
      expect(await tab.getByTestId("detail").count()).toBe(0);
      expect(await tab.evaluate(() => document.querySelectorAll("[data-chart], .detail").length)).toBe(0);
      await until("the warm-up gone", extraHosts, (n) => n === 0, 5000);
      expect(historyAsks).toHaveLength(1);
      expect(tab.url()).not.toContain("#/s/");
      // The first real view after it draws its charts (the ones the warm-up kept).
      await tab.locator(".sem-row").first().click();
      await tab.getByTestId("detail").waitFor();
      await until("the permits chart drawn", () => tab.locator('[data-chart="permits"] canvas').count(), (n) => n > 0, 10_000);
    } finally {
      await tab.close();
    }
  }, 30_000);

  it("token form: a wrong token gets a clear error message, the right one connects", async () => {
    const guarded = await createHub({ port: 0, staticDir, token: "s3cret-token", log: () => undefined });
    const tab = await browser.context.newPage();
    try {
      await tab.goto(guarded.url);
      const form = tab.getByTestId("token-form");
      await form.waitFor({ timeout: 10_000 });
      expect(await tab.getByTestId("connection-state").textContent()).toBe("Token needed");

      await form.locator('input[type="password"]').fill("not-the-token");
      await form.getByRole("button", { name: "Connect" }).click();
      // Refused: the form stays, and now says the token it presented was refused, and by which hub.
      await until("the refusal message", () => form.textContent(), (t) => (t ?? "").includes("was refused by"), 10_000);
      expect(await form.textContent()).toContain(guarded.url);
      expect(await tab.getByTestId("connection-state").textContent()).toBe("Token needed");

      await form.locator('input[type="password"]').fill("s3cret-token");
      await form.getByRole("button", { name: "Connect" }).click();
      await until("live with the right token", () => tab.getByTestId("connection-state").textContent(), (t) => t === "Live", 10_000);
      expect(await tab.getByTestId("token-form").count()).toBe(0);
      // Nothing reports to this hub yet: the page shows how to embed the agent, at this hub's address.
      await tab.getByTestId("empty-state").waitFor({ timeout: 5000 });
    } finally {
      await tab.close();
      await guarded.close();
    }
  }, 30_000);
});
