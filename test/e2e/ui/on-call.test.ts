// What an on-call engineer relies on, in a real browser (web mode) against real agents in child
// processes: the selected alert stays selected when it resolves (and Acknowledge still acts on
// it), the Little's-law panel names the convoy alert's cause and N for the same moment, and every
// rule firing on a semaphore badges its rows and answers `is:<rule>`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHub } from "../../../main/hub/index.js";
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

  it("lists every mute in force on the Muted tab, firing or not, with its end and an Unmute", async () => {
    await openAlerts();
    const alerts = await pageAlerts(page);
    const resolved = alerts.find((a) => a.rule === "leak" && a.service === "inventory" && a.resolvedAt !== null) as Alert;
    const firing = leakOf("billing")(alerts) as Alert;
    // The resolved leak, from History; the firing one, from Active.
    await page.getByRole("tab", { name: /History/ }).click();
    await page.locator(`.alert-item[data-alert-id="${resolved.id}"]`).click();
    await page.getByTestId("evidence").locator('select[aria-label="Mute for"]').selectOption(String(60 * 60_000));
    await page.getByRole("tab", { name: /Active/ }).click();
    await page.locator(`.alert-item[data-alert-id="${firing.id}"]`).click();
    await page.getByTestId("evidence").locator('select[aria-label="Mute for"]').selectOption(String(15 * 60_000));

    await page.getByRole("tab", { name: /Muted/ }).click();
    const items = page.getByTestId("muted-list").locator(".alert-item");
    await until("both mutes listed", () => items.count(), (n) => n === 2, 5000);
    expect(await page.getByRole("tab", { name: /Muted/ }).locator(".chip-count").textContent()).toBe("2");
    const text = (match: string) => page.locator(`[data-mute="${match}"]`).textContent();
    // Its end as a clock time today; on another day (a mute set in the evening's last hour), its date and minute.
    const endOf = (match: string) =>
      page.evaluate((m) => {
        const mutes = JSON.parse(localStorage.getItem("semscope.mutes") ?? "[]") as { match: string; until: number }[];
        const end = new Date(mutes.find((x) => x.match === m)?.until ?? NaN);
        const p = (n: number) => String(n).padStart(2, "0");
        const hm = `${p(end.getHours())}:${p(end.getMinutes())}`;
        return end.toDateString() === new Date().toDateString() ? `${hm}:${p(end.getSeconds())}` : `${end.toLocaleString("en-US", { month: "short" })} ${end.getDate()} ${hm}`;
      }, match);
    expect(await text(`leak|${resolved.key}`)).toContain(`resolved · muted until ${await endOf(`leak|${resolved.key}`)}`);
    expect(await text(`leak|${firing.key}`)).toContain(`firing · muted until ${await endOf(`leak|${firing.key}`)}`);
    await page.locator(`[data-mute="leak|${firing.key}"]`).getByTestId("unmute").click();
    await until("one mute left", () => items.count(), (n) => n === 1, 3000);
    await page.locator(`[data-mute="leak|${resolved.key}"]`).getByTestId("unmute").click();
    await until("none left", () => page.getByTestId("muted-list").count(), (n) => n === 0, 3000);
    await page.getByRole("tab", { name: /Active/ }).click();
  }, 30_000);

  it("filters the alert history by rule, state and target", async () => {
    await openAlerts();
    await page.getByRole("tab", { name: /History/ }).click();
    const filters = page.getByTestId("history-filters");
    const rows = () => page.locator(".alert-item").evaluateAll((items) => items.map((i) => i.textContent ?? ""));
    const all = (await rows()).length;
    expect(all).toBeGreaterThan(2);
    await filters.getByLabel("Rule").selectOption("leak");
    const leaks = await rows();
    expect(leaks.length).toBeGreaterThan(0);
    expect(leaks.every((t) => t.startsWith("Leak"))).toBe(true);
    await filters.getByLabel("State").selectOption("resolved");
    const resolved = await rows();
    expect(resolved.length).toBeGreaterThan(0);
    expect(resolved.every((t) => t.includes("inventory") && t.includes("resolved"))).toBe(true);
    await filters.getByLabel("State").selectOption("all");
    await filters.getByLabel("Semaphore or service").fill("billing");
    const billing = await rows();
    expect(billing.length).toBeGreaterThan(0);
    expect(billing.every((t) => t.includes("billing"))).toBe(true);
    // Shown of all the page holds (an alert may be raised meanwhile: the count says so too).
    const count = async () => [await filters.getByTestId("history-count").textContent(), `${(await rows()).length} of ${(await pageAlerts(page)).length}`];
    await until("the count of shown and all", count, ([said, held]) => said === held, 5000);
    await filters.getByLabel("Semaphore or service").fill("");
    await filters.getByLabel("Rule").selectOption("all");
    await page.getByRole("tab", { name: /Active/ }).click();
  }, 30_000);

  it("says every rule's thresholds in words, order inversion included", async () => {
    await openAlerts();
    await page.getByRole("tab", { name: /Rules/ }).click();
    const labels = await page.locator(".rule-field label").evaluateAll((ls) => ls.map((l) => l.textContent ?? ""));
    expect(labels.length).toBeGreaterThan(5);
    for (const l of labels) expect(l).not.toMatch(/^[a-z]+[A-Z][A-Za-z]*$/);
    expect(labels).toContain("Wait p99 at least this many times hold p50");
    const headings = await page.locator(".rules h3").evaluateAll((hs) => hs.map((h) => h.textContent));
    for (const rule of ["Leak", "Convoy", "Starvation", "Timeouts", "Double release", "Agent down", "Over budget", "Order inversion"]) expect(headings).toContain(rule);
    await page.getByRole("tab", { name: /Active/ }).click();
  }, 30_000);

  it("names the convoy alert's cause and N in the Little's-law panel at the alert's moment", async () => {
    const withDiagnosis = (l: Alert[]) => l.find((a) => a.rule === "convoy" && a.key.startsWith("checkout/web-1/payments") && a.evidence?.diagnosis !== undefined);
    const convoy = withDiagnosis(await until("the convoy's diagnosis", () => pageAlerts(page), (l) => withDiagnosis(l) !== undefined, 20_000)) as Alert;
    const key = convoy.key;
    const diagnosis = convoy.evidence?.diagnosis as { cause: string; headline: string; numbers: { neededN: number | null }; incident: { to: number } };

    // The detail view at the moment the diagnosis read up to.
    await page.evaluate(([k, at]) => (location.hash = `#/s/${encodeURIComponent(k)}?at=${at}`), [key, String(diagnosis.incident.to)] as const);
    await page.getByTestId("detail").waitFor();
    const verdict = page.getByTestId("littles-verdict");
    await until("the panel's verdict", () => verdict.getAttribute("data-cause"), (c) => c !== null, 10_000);
    expect(await verdict.getAttribute("data-cause")).toBe(diagnosis.cause);
    expect(await page.getByTestId("littles-needed-n").textContent()).toBe(diagnosis.numbers.neededN === null ? "—" : String(diagnosis.numbers.neededN));
    // Its headline is the alert diagnosis's, word for word (the fix and its N with it).
    expect(await verdict.locator("strong").textContent()).toContain(diagnosis.headline);
  }, 45_000);

  it("badges every active rule on its semaphore and fleet rows, and filters on it with is:<rule>", async () => {
    await page.getByRole("button", { name: "Semaphores" }).click();
    await page.getByTestId("overview").waitFor();
    await until("the double release", () => pageAlerts(page), (l) => l.some((a) => a.rule === "double_release" && a.resolvedAt === null), 15_000);
    const row = page.locator('.sem-row[data-key^="fx/fx-1/fx-rates"]').first();
    await until("the fx row's alerts", () => row.locator(".row-status").getAttribute("data-alerts"), (a) => (a ?? "").includes("double_release"), 10_000);
    // Not a green OK: the badge names the rule, coloured by its severity.
    expect(await row.locator(".badge").first().textContent()).toBe("Double release");
    expect(await row.locator(".row-status").getAttribute("data-severity")).toBe("warning");
    // The convoy row carries its convoy, and the leak still badges billing's pool.
    expect(await page.locator('.sem-row[data-key^="checkout/web-1/payments"] .row-status').first().getAttribute("data-alerts")).toContain("convoy");

    await page.getByTestId("filter").fill("is:double-release");
    await until("only the fx row", () => page.locator(".sem-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key"))), (keys) => keys.length === 1 && (keys[0] ?? "").startsWith("fx/fx-1/"), 5000);
    await page.getByTestId("filter").fill("");

    // The fleet row of fx-rates carries its replica's alert too.
    await page.getByRole("button", { name: "Fleet" }).click();
    const fleetRow = page.locator('.sem-row[data-key="fx/fx-rates"]');
    await until("the fleet row's alerts", () => fleetRow.locator(".row-status").getAttribute("data-alerts"), (a) => (a ?? "").includes("double_release"), 10_000);
    await page.getByTestId("filter").fill("is:double_release");
    await until("only the fx fleet row", () => page.locator(".sem-row").count(), (n) => n === 1, 5000);
    await page.getByTestId("filter").fill("");
    expect(browser.errors).toEqual([]);
  }, 45_000);

  it("counts a row whose only problem is a rule's badge in its service's 'need attention' and under Problems", async () => {
    await page.getByRole("button", { name: "Semaphores" }).click();
    await page.getByTestId("overview").waitFor();
    await page.getByRole("radio", { name: "By service" }).click();
    const fxRates = page.locator('.sem-row[data-key^="fx/fx-1/fx-rates"]');
    await until("the fx-rates badge", () => fxRates.locator(".row-status").getAttribute("data-alerts"), (a) => (a ?? "").includes("double_release"), 10_000);
    // Its status is OK: only the double release's badge says something is wrong.
    expect(await page.evaluate(() => (window as unknown as { __semscope: { store: { itemList(): { key: string; status: string }[] } } }).__semscope.store.itemList().find((i) => i.key.startsWith("fx/fx-1/fx-rates"))?.status)).toBe("ok");
    // Every fx row with a badge or a status other than OK, counted on the service's row.
    const flagged = await page.locator('.sem-row[data-key^="fx/"]').evaluateAll((rows) => rows.filter((r) => r.querySelector(".row-status") !== null || !(r.querySelector(".badge")?.className ?? "").includes("status-ok")).length);
    expect(flagged).toBeGreaterThanOrEqual(1);
    const service = page.locator(".service-row", { hasText: "fx" });
    await until("the count", () => service.locator(".c-status").textContent(), (t) => t === `${flagged} ${flagged === 1 ? "needs" : "need"} attention`, 5000);
    // The Problems chip counts it too, and shows it.
    const problems = page.getByRole("radio", { name: /^Problems/ });
    const flaggedRows = () => page.locator(".sem-row").evaluateAll((rows) => rows.filter((r) => r.querySelector(".row-status") !== null || !(r.querySelector(".badge")?.className ?? "").includes("status-ok")).length);
    await until("the Problems count", async () => [await problems.locator(".chip-count").textContent(), String(await flaggedRows())], ([a, b]) => a === b, 5000);
    await problems.click();
    await until("fx-rates among the problems", () => fxRates.count(), (n) => n === 1, 5000);
    await page.getByRole("radio", { name: /^All/ }).click();
  }, 30_000);

  it("draws chart legends with markers of distinct colours that toggle their series, units on the axes, and a tooltip at the cursor naming alerts", async () => {
    const isConvoy = (a: Alert) => a.rule === "convoy" && a.key.startsWith("checkout/web-1/payments");
    const convoy = (await until("the convoy", () => pageAlerts(page), (l) => l.some(isConvoy), 20_000)).find(isConvoy) as Alert;
    await page.evaluate((k) => (location.hash = `#/s/${encodeURIComponent(k)}`), convoy.key);
    await page.getByTestId("detail").waitFor();
    const card = (id: string) => page.locator(`[data-chart="${id}"]`);
    await until("the charts drawn", () => card("throughput").locator(".u-legend .u-series").count(), (n) => n === 5, 10_000);
    const markerColours = (id: string) =>
      card(id)
        .locator(".u-legend .u-series")
        .evaluateAll((rows) => rows.slice(1).map((r) => getComputedStyle(r.querySelector(".u-marker") as Element).backgroundColor));
    for (const id of ["permits", "queue", "latency", "throughput"]) {
      const colours = await markerColours(id);
      // Every entry has a visible marker, and no two in a chart share a colour.
      expect(colours.every((c) => c !== "" && c !== "transparent" && c !== "rgba(0, 0, 0, 0)"), `${id}: ${colours.join(", ")}`).toBe(true);
      expect(new Set(colours).size, `${id}: ${colours.join(", ")}`).toBe(colours.length);
    }
    // The axes say what they count.
    expect(await card("latency").getByTestId("axis-unit-y").textContent()).toContain("ms");
    expect(await card("throughput").getByTestId("axis-unit-y").textContent()).toBe("per second");
    expect(await card("permits").getByTestId("axis-unit-y").textContent()).toBe("permits");
    expect(await card("queue").getByTestId("axis-unit-y2").textContent()).toContain("oldest wait");

    // A click on a legend entry hides its series, a second shows it again.
    const p50 = card("latency").locator(".u-legend .u-series", { hasText: "wait p50" });
    await p50.click();
    await until("wait p50 hidden", () => p50.getAttribute("class"), (c) => (c ?? "").includes("u-off"), 3000);
    await p50.click();
    await until("wait p50 shown", () => p50.getAttribute("class"), (c) => !(c ?? "").includes("u-off"), 3000);

    // The tooltip follows the cursor, on the chart under it.
    const over = card("permits").locator(".u-over");
    const box = (await over.boundingBox()) as { x: number; y: number; width: number; height: number };
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const tip = card("permits").locator(".chart-tip");
    await until("the tooltip", () => tip.isVisible(), (v) => v, 3000);
    expect(await tip.textContent()).toContain("in use");
    const tipBox = (await tip.boundingBox()) as { x: number; y: number };
    expect(Math.abs(tipBox.x - (box.x + box.width / 2))).toBeLessThan(box.width / 2);
    expect(await card("latency").locator(".chart-tip").isVisible()).toBe(false);
    // Across the chart, the convoy's marker is named where the cursor crosses it.
    let named = "";
    for (let x = 1; x < box.width && named === ""; x += 3) {
      await page.mouse.move(box.x + x, box.y + box.height / 2);
      if ((await tip.locator(".tip-marker").count()) > 0) named = (await tip.locator(".tip-marker").first().textContent()) ?? "";
    }
    expect(named).toContain("Convoy raised");
    await page.mouse.move(0, 0);
    expect(browser.errors).toEqual([]);
  }, 60_000);

  it("gives side-by-side charts the same time ticks, permit axes whole ticks, and labels merged alert markers on every chart", async () => {
    const isConvoy = (a: Alert) => a.rule === "convoy" && a.key.startsWith("checkout/web-1/payments");
    const convoy = (await until("the convoy", () => pageAlerts(page), (l) => l.some(isConvoy), 20_000)).find(isConvoy) as Alert;
    const charts = ["permits", "queue", "latency", "throughput"];
    const plotData = (attr: string) => Promise.all(charts.map((id) => page.locator(`[data-chart="${id}"] .uplot`).getAttribute(attr)));
    // Pinned 20 s after the convoy: two markers (the convoy's and the pin's), 20 s apart.
    const open = async (w: string) => {
      await page.evaluate(([k, win, at]) => (location.hash = `#/s/${encodeURIComponent(k)}?w=${win}&at=${at}`), [convoy.key, w, String(convoy.raisedAt + 20_000)] as const);
      await page.getByTestId("detail").waitFor();
      await until(`the ${w} charts' markers`, () => plotData("data-markers"), (m) => m.every((x) => (x ?? "") !== ""), 10_000);
    };
    await open("24h");
    // The permits chart has one y axis, the queue chart two: their plots differ in width, not in their times.
    const widths = await Promise.all(charts.map((id) => page.locator(`[data-chart="${id}"] .u-over`).evaluate((e) => e.clientWidth)));
    expect(new Set(widths).size).toBeGreaterThan(1);
    const ticks = await plotData("data-ticks-x");
    expect(ticks[0]?.split(" ").length ?? 0).toBeGreaterThan(2);
    expect(new Set(ticks).size, ticks.join(" / ")).toBe(1);
    // At 24 h the two markers are a pixel apart: one line, labelled with the count, on every chart.
    for (const m of await plotData("data-markers")) {
      const groups = (m ?? "").split(" | ");
      expect(groups.length, m ?? "").toBe(1);
      expect(groups[0]).toMatch(/^\d+:\d+:\d+ alerts$/);
      expect(Number(groups[0].split(":")[1])).toBeGreaterThanOrEqual(2);
    }
    // Permits are whole: no tick at 0.5 or 1.5.
    const permitTicks = (await page.locator('[data-chart="permits"] .uplot').getAttribute("data-ticks-y")) ?? "";
    expect(permitTicks.split(" ").every((v) => Number.isInteger(Number(v))), permitTicks).toBe(true);

    // At 1 m the same two markers are a third of the chart apart: two lines, each labelled.
    await open("1m");
    for (const m of await plotData("data-markers")) {
      const groups = (m ?? "").split(" | ");
      expect(groups.length, m ?? "").toBe(2);
      expect(groups.every((g) => !g.endsWith(":")), m ?? "").toBe(true);
    }
    expect(new Set(await plotData("data-ticks-x")).size).toBe(1);
    expect(browser.errors).toEqual([]);
  }, 45_000);

  it("exports a chart's PNG at twice the screen's resolution, with its title and legend above the plot", async () => {
    const card = page.locator('[data-chart="permits"]');
    await card.locator("canvas").first().waitFor();
    const plotWidth = await card.locator(".chart-plot").evaluate((e) => e.clientWidth);
    expect(await page.evaluate(() => devicePixelRatio)).toBe(1);
    await card.hover();
    const [download] = await Promise.all([page.waitForEvent("download"), card.getByTestId("png-permits").click()]);
    const png = readFileSync((await download.path()) as string);
    // PNG header: width and height at bytes 16 and 20.
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    expect(width).toBeGreaterThanOrEqual(2 * plotWidth);
    // The plot (190 px) and a header for the title and legend, all at 2x.
    expect(height).toBeGreaterThanOrEqual(2 * (190 + 40));

    // The header as drawn: the title's line (above the legend's) read column by column.
    const header = await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext("2d") as CanvasRenderingContext2D;
      const rgb = (css: string): number[] => {
        ctx.fillStyle = css;
        const hex = ctx.fillStyle.slice(1);
        return [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
      };
      const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
      const text = rgb(css("--text"));
      const inUse = rgb(css("--c-inuse"));
      ctx.drawImage(img, 0, 0);
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      const at = (x: number, y: number) => [px[(y * c.width + x) * 4], px[(y * c.width + x) * 4 + 1], px[(y * c.width + x) * 4 + 2]];
      const dist = (a: number[], b: number[]) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]);
      const panel = at(1, 1);
      const dpr = 2;
      // Title and subtitle are drawn from 8 px down; the legend from 26 px.
      const ink: boolean[] = [];
      let titleEnd = -1;
      for (let x = 0; x < c.width; x++) {
        let any = false;
        for (let y = 4 * dpr; y < 25 * dpr; y++) {
          const p = at(x, y);
          if (dist(p, panel) > 60) any = true;
          // The title's colour at the glyphs' cores (the subtitle's grey never gets that dark).
          if (dist(p, text) < 40) titleEnd = x;
        }
        ink.push(any);
      }
      let legendInUse = false;
      for (let y = 26 * dpr; y < 40 * dpr && !legendInUse; y++) for (let x = 0; x < c.width; x++) if (dist(at(x, y), inUse) < 40) legendInUse = true;
      return { ink, titleEnd, legendInUse };
    }, png.toString("base64"));
    // After the title's last pixel: a clear gap, then the subtitle; nothing of it under the title.
    const { ink, titleEnd, legendInUse } = header;
    expect(titleEnd).toBeGreaterThan(0);
    const gapStart = ink.findIndex((on, x) => !on && x > titleEnd);
    const subtitleStart = ink.findIndex((on, x) => on && x > gapStart);
    expect(subtitleStart, "no subtitle after the title").toBeGreaterThan(0);
    expect(subtitleStart - gapStart, `the gap after the title starts at ${gapStart}, the subtitle at ${subtitleStart}`).toBeGreaterThanOrEqual(8 * 2);
    // The legend has its series' colours.
    expect(legendInUse).toBe(true);
    expect(browser.errors).toEqual([]);
  }, 30_000);

  it("freezes the stat strip and the status badge with the charts on pause", async () => {
    const isDb = (k: string) => k.startsWith("checkout/web-1/db");
    const key = await page.evaluate(() => (window as unknown as { __semscope: { store: { itemList(): { key: string }[] } } }).__semscope.store.itemList().map((i) => i.key));
    const dbKey = key.find(isDb) as string;
    await page.evaluate((k) => (location.hash = `#/s/${encodeURIComponent(k)}`), dbKey);
    await page.getByTestId("detail").waitFor();
    await until("live", () => page.getByTestId("live-state").textContent(), (t) => (t ?? "").includes("Live"), 10_000);
    const strip = page.getByTestId("stats");
    // Live, the strip moves (the pool's use changes every interval).
    const first = await strip.textContent();
    await until("the strip to move", () => strip.textContent(), (t) => t !== first, 5000);

    await page.getByTestId("pause").click();
    await until("paused", () => page.getByTestId("live-state").textContent(), (t) => (t ?? "").includes("Paused"), 3000);
    const frozen = { strip: await strip.textContent(), badge: await page.locator(".detail-title h1 .badge").textContent() };
    const t0 = await page.evaluate((k) => (window as unknown as { __semscope: { store: { semaphore(k: string): { t: number | null } | undefined } } }).__semscope.store.semaphore(k)?.t ?? 0, dbKey);
    await new Promise((r) => setTimeout(r, 2500));
    const t1 = await page.evaluate((k) => (window as unknown as { __semscope: { store: { semaphore(k: string): { t: number | null } | undefined } } }).__semscope.store.semaphore(k)?.t ?? 0, dbKey);
    expect(t1).toBeGreaterThan(t0); // samples kept arriving
    expect({ strip: await strip.textContent(), badge: await page.locator(".detail-title h1 .badge").textContent() }).toEqual(frozen);
    expect(await strip.getAttribute("data-frozen")).toBe("true");

    await page.getByTestId("pause").click();
    await until("the strip live again", () => strip.textContent(), (t) => t !== frozen.strip, 5000);
  }, 30_000);

  it("gives Enter to the selected row, not to the toggle clicked a moment ago", async () => {
    await page.getByRole("button", { name: "Semaphores" }).click();
    await page.getByTestId("overview").waitFor();
    const flat = page.getByRole("radio", { name: "Flat" });
    await flat.click();
    await page.keyboard.press("ArrowDown");
    const selected = page.locator(".sem-row.selected");
    await until("a selected row", () => selected.count(), (n) => n === 1, 3000);
    const key = (await selected.getAttribute("data-key")) as string;
    // A mouse click leaves the toggle focused: Enter must still open the row.
    await page.getByRole("radio", { name: "By service" }).click();
    await until("still selected", () => page.locator(`.sem-row.selected[data-key="${key}"]`).count(), (n) => n === 1, 3000);
    await page.keyboard.press("Enter");
    await page.getByTestId("detail").waitFor({ timeout: 5000 });
    expect(decodeURIComponent(await page.evaluate(() => location.hash))).toContain(key);
  }, 30_000);

  /**
   * Points at the second of `rowSel`'s rows for 6 s and says every order seen (and, each time,
   * `read`), then that the hold was shown and that the order catches up once the pointer leaves.
   */
  async function pointHoldAndLeave(rowSel: string, read: () => Promise<string | null> = async () => null): Promise<{ orders: string[]; reads: Set<string | null> }> {
    const order = () => page.locator(rowSel).evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key")).join(","));
    const box = (await page.locator(rowSel).nth(1).boundingBox()) as { x: number; y: number; width: number; height: number };
    await page.mouse.move(box.x + box.width - 40, box.y + box.height / 2);
    await new Promise((r) => setTimeout(r, 300));
    const held = await order();
    const seen = new Set<string>([held]);
    const reads = new Set<string | null>();
    for (let i = 0; i < 24; i++) {
      seen.add(await order());
      reads.add(await read());
      await new Promise((r) => setTimeout(r, 250));
    }
    // The order shown is not the data's any more: held, and saying so.
    await until("the hold shown", () => page.getByTestId("order-held").count(), (n) => n === 1, 10_000);
    // Away from the table, the order catches up with the numbers again.
    await page.mouse.move(0, 0);
    await until("a resort", order, (o) => o !== held, 20_000);
    expect(await page.getByTestId("order-held").count()).toBe(0);
    return { orders: [...seen], reads };
  }

  it("holds the row order while the pointer is over the table, and resorts once it leaves", async () => {
    await page.getByRole("button", { name: "Semaphores" }).click();
    await page.getByTestId("overview").waitFor();
    await page.getByRole("radio", { name: "Flat" }).click();
    // Sorted by utilization, a live number: without a hold the order follows every delta.
    const utilHeader = page.locator(".grid-head button", { hasText: "Utilization" });
    await utilHeader.click();
    const { orders } = await pointHoldAndLeave(".sem-row");
    expect(orders).toHaveLength(1);
    await utilHeader.click();
    await page.getByRole("radio", { name: "By service" }).click();
  }, 45_000);

  it("holds the fleet list's order while the pointer is over it, and resorts once it leaves", async () => {
    await page.getByRole("button", { name: "Fleet" }).click();
    await page.getByTestId("fleet").waitFor();
    const utilHeader = page.locator(".fleet-table .grid-head button", { hasText: "In use vs N" });
    await utilHeader.click();
    const dbInUse = () => page.locator('.fleet-table .sem-row[data-key="checkout/db"] .c-num').first().textContent();
    const { orders, reads } = await pointHoldAndLeave(".fleet-table .sem-row", dbInUse);
    expect(orders).toHaveLength(1);
    // The held rows' numbers go on updating.
    expect(reads.size).toBeGreaterThan(1);
    await utilHeader.click();
  }, 45_000);

  it("shows evidence for people: times as clock times, named fields, an order inversion's frame in full", async () => {
    await openAlerts();
    const byRule = (rule: string) => (l: Alert[]) => l.find((a) => a.rule === rule && a.service === "fx" && a.resolvedAt === null);
    const alerts = await until("the double release and the order inversion", () => pageAlerts(page), (l) => byRule("double_release")(l) !== undefined && byRule("order_inversion")(l) !== undefined, 15_000);
    await page.locator(`.alert-item[data-alert-id="${(byRule("double_release")(alerts) as Alert).id}"]`).click();
    const evidence = page.getByTestId("evidence");
    await until("its evidence", () => evidence.textContent(), (t) => (t ?? "").includes("Double release"), 3000);
    const pairs = await evidence.locator(".kv-evidence .kv-pair").evaluateAll((ps) => ps.map((p) => [p.querySelector("dt")?.textContent ?? "", p.querySelector("dd")?.textContent ?? ""]));
    const lastAt = pairs.find(([dt]) => dt === "Last seen at");
    expect(lastAt?.[1], JSON.stringify(pairs)).toMatch(/^\d\d:\d\d:\d\d$/);
    // No epoch read as a count ("1796267.9M"), no raw JSON paths or camelCase keys.
    for (const [dt, dd] of pairs) {
      expect(dd).not.toMatch(/^\d+(\.\d+)?[MG]$/);
      expect(dt).not.toMatch(/[[\]]|[a-z][A-Z]|\.[a-z]/);
    }

    const inversion = byRule("order_inversion")(alerts) as Alert;
    // Its summary names the frame that took the locks, not the header of the stack text.
    expect(inversion.message).toMatch(/; at .*ui-agent\.ts:\d+/);
    expect(inversion.message).not.toMatch(/at:$/);
    await page.locator(`.alert-item[data-alert-id="${inversion.id}"]`).click();
    await until("its evidence", () => evidence.locator(".evidence-message").textContent(), (t) => (t ?? "").includes("ui-agent.ts"), 3000);
  }, 30_000);

  it("calls an over-budget fleet over budget, not saturated at 0 in use, and an idle fleet's wait p99 0", async () => {
    await page.getByRole("button", { name: "Fleet" }).click();
    const row = page.locator('.sem-row[data-key="fx/fx-rates"]');
    await until("the over_budget alert on the fx fleet", () => row.locator(".row-status").getAttribute("data-alerts"), (a) => (a ?? "").includes("over_budget"), 15_000);
    // Its caps exceed its budget while barely used: the row names that, and never "Saturated".
    expect(await row.locator(".c-status").textContent()).toContain("Over budget");
    expect(await row.locator(".c-status").textContent()).not.toContain("Saturated");
    // fx-rates never queues: its merged wait p99 is 0, as its instance's is.
    const instanceWait = await page.evaluate(() => {
      const s = (window as unknown as { __semscope: { store: { itemList(): { key: string; waitP99: number }[] } } }).__semscope.store.itemList().find((i) => i.key.startsWith("fx/fx-1/fx-rates"));
      return s?.waitP99 ?? null;
    });
    expect(instanceWait).toBe(0);
    expect(await row.locator(".c-num").nth(3).textContent()).toBe("0");
    // Its detail page says the same.
    await row.click();
    // The detail view may still show the semaphore an earlier test opened: wait for this one's title.
    await until("the fx fleet's detail page", () => page.locator(".detail-title h1").textContent(), (t) => (t ?? "").includes("fx-rates"), 10_000);
    expect(await page.locator(".detail-title h1").textContent()).toContain("Over budget");
    expect(await page.locator(".detail-title h1").textContent()).not.toContain("Saturated");
  }, 30_000);

  it("says when a filter word names no status or rule, and Esc clears the filter", async () => {
    await page.getByRole("button", { name: "Semaphores" }).click();
    await page.getByTestId("overview").waitFor();
    const filter = page.getByTestId("filter");
    await filter.fill("is:nonsense");
    expect(await page.getByTestId("filter-unknown").textContent()).toContain("is:nonsense");
    await filter.fill("is:leak");
    expect(await page.getByTestId("filter-unknown").count()).toBe(0);
    await page.keyboard.press("Escape");
    expect(await filter.inputValue()).toBe("");
    await until("every row back", () => page.locator(".sem-row").count(), (n) => n >= 5, 3000);
  }, 30_000);

  it("draws releases in the flight recorder's chart and marks the grant that never came back", async () => {
    await openAlerts();
    const withRing = (l: Alert[]) => l.find((a) => a.rule === "leak" && a.service === "billing" && a.evidence?.flight !== undefined);
    const leak = withRing(await until("the billing leak's ring", () => pageAlerts(page), (l) => withRing(l) !== undefined, 15_000)) as Alert;
    await page.locator(`.alert-item[data-alert-id="${leak.id}"]`).click();
    const flight = page.getByTestId("evidence").getByTestId("flight");
    await flight.waitFor({ timeout: 5000 });
    // Releases have bars of their own beside arrivals and grants.
    expect(await flight.locator("rect.flight-releases").count()).toBeGreaterThan(0);
    const released = await flight.locator("rect.flight-releases").evaluateAll((rs) => rs.reduce((n, r) => n + Number(r.getAttribute("height")), 0));
    expect(released).toBeGreaterThan(0);
    // The leaked permit's grant is marked on the chart, and says so on hover.
    const mark = flight.getByTestId("flight-leaked");
    expect(await mark.count()).toBeGreaterThanOrEqual(1);
    expect(await mark.first().locator("title").textContent()).toMatch(/granted \d\d:\d\d:\d\d, never released/);
  }, 30_000);

  it("greys a disconnected agent's rows, says since when, and lists its agent_down on the detail page", async () => {
    await page.getByRole("button", { name: "Semaphores" }).click();
    await page.getByTestId("overview").waitFor();
    await agents[3].kill("SIGKILL");
    const row = page.locator('.sem-row[data-key^="fx/fx-1/fx-rates"]').first();
    await until("the fx row stale", () => row.getAttribute("class"), (c) => (c ?? "").includes("agent-gone"), 15_000);
    // Its numbers are greyed: not the colour a live row's numbers have.
    const colour = (sel: string) => page.locator(sel).first().locator(".c-num").first().evaluate((e) => getComputedStyle(e).color);
    expect(await colour('.sem-row[data-key^="fx/fx-1/fx-rates"]')).not.toBe(await colour('.sem-row[data-key^="checkout/web-1/db"]'));
    const tag = page.locator(".instance-row", { hasText: "fx-1" }).locator(".tag", { hasText: "agent disconnected" });
    expect(await tag.textContent()).toMatch(/agent disconnected since \d\d:\d\d:\d\d/);

    await row.click();
    await page.getByTestId("detail").waitFor();
    const state = page.getByTestId("live-state");
    expect(await state.textContent()).toMatch(/Agent disconnected since \d\d:\d\d:\d\d/);
    expect(await state.textContent()).not.toContain("Live");
    expect(await page.getByTestId("stats").getAttribute("class")).toContain("stats-stale");
    const panel = page.getByTestId("detail-alerts");
    await until("its agent_down listed", () => panel.textContent(), (t) => (t ?? "").includes("Agent down"), 15_000);
    expect(await panel.locator(".card-head .muted").textContent()).not.toBe("0 active");
    expect(browser.errors).toEqual([]);
  }, 45_000);

  it("keeps every column of the fleet and semaphore tables on screen at 1024 px", async () => {
    const tab = await browser.context.newPage();
    try {
      await tab.setViewportSize({ width: 1024, height: 700 });
      await tab.goto(rig?.hub.url ?? "");
      await tab.getByTestId("overview").waitFor();
      await until("rows", () => tab.locator(".sem-row").count(), (n) => n > 0, 10_000);
      // Each header cell ends inside its table, and is not cut to nothing.
      const clipped = (table: string) =>
        tab.locator(`${table} .grid-head`).evaluate((head) => {
          const right = (head.parentElement as HTMLElement).getBoundingClientRect().right;
          return Array.from(head.children)
            .filter((c) => c.getBoundingClientRect().right > right + 0.5 || c.getBoundingClientRect().width < 30)
            .map((c) => c.textContent);
        });
      expect(await clipped(".sem-table")).toEqual([]);
      expect(await tab.locator(".sem-row .c-spark canvas").count()).toBeGreaterThan(0);
      // The disconnected agent's chip (the previous case killed it) is whole.
      const chip = tab.locator(".instance-row", { hasText: "fx-1" }).locator(".tag", { hasText: "agent disconnected" });
      expect(await chip.evaluate((e) => e.scrollWidth <= e.clientWidth && e.getBoundingClientRect().right <= (e.closest(".grid-row") as HTMLElement).getBoundingClientRect().right)).toBe(true);
      await tab.getByRole("button", { name: "Fleet" }).click();
      await until("fleet rows", () => tab.locator(".fleet-table .sem-row").count(), (n) => n > 0, 10_000);
      expect(await clipped(".fleet-table")).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 30_000);

  it("with nothing reporting, says so, and gives the snippet this hub's address and token", async () => {
    const empty = await createHub({ port: 0, staticDir: rig?.staticDir ?? "", token: "s3cret-token", log: () => undefined });
    const tab = await browser.context.newPage();
    try {
      await tab.goto(`${empty.url}/?token=s3cret-token`);
      const snippet = tab.getByTestId("agent-snippet");
      await snippet.waitFor({ timeout: 10_000 });
      const code = (await snippet.textContent()) ?? "";
      expect(code).toContain(`url: "${empty.url}"`);
      expect(code).toContain("token: process.env.SEMSCOPE_TOKEN");
      expect(code).not.toContain("s3cret-token");
      await tab.getByTestId("alerts-tab").click();
      const text = (await tab.locator(".list-empty").textContent()) ?? "";
      expect(text).toContain("no semaphore has reported yet");
      expect(text).not.toContain("Every semaphore is behaving");
    } finally {
      await tab.close();
      await empty.close();
    }
  }, 30_000);
});
