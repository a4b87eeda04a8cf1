// An adaptive cap's changes on the detail chart, in a real browser (web mode) against a real
// agent in a child process: each change is a marker on the permits chart, and hovering it names
// the change and its reason; a change made while the view is open arrives live, and the hub
// serves the kept ones to a view opened later.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Diagnosis } from "../../../shared/diagnosis/index.js";
import type { Alert } from "../../../shared/protocol/types.js";
import { startDashboard, until, type DashboardRig } from "../browser.js";
import { drawnMarkers as drawn, hoverLimitMarkers as hoverEach } from "./chart-markers.js";

const FIXTURE = join(import.meta.dirname, "fixtures/ui-agent.ts");
const KEY = "shop/web-1/downstream";

type Change = { t: number; from?: number; limit: number; reason: string };

/** The changes the hub keeps for KEY, through the history API the dashboard reads. */
async function hubChanges(url: string): Promise<Change[]> {
  const res = await fetch(`${url}/api/history?key=${encodeURIComponent(KEY)}`);
  if (!res.ok) return [];
  return ((await res.json()) as { window: { limitChanges?: Change[] } }).window.limitChanges ?? [];
}

/** The alerts the page's store holds. */
function pageAlerts(page: Page): Promise<Alert[]> {
  return page.evaluate(() => (window as unknown as { __semscope: { store: { alertList(): Alert[] } } }).__semscope.store.alertList());
}

describe("an adaptive limit's changes on the detail chart (web mode, a real agent)", () => {
  let rig: DashboardRig | undefined;

  beforeAll(async () => {
    rig = await startDashboard(FIXTURE, [["adaptive", "shop", "web-1"]]);
  }, 60_000);

  afterAll(() => rig?.close());

  it("marks each change on the permits chart and names its reason on hover, live and when opened later", async () => {
    const { page, hub, agents, browser } = rig as DashboardRig;
    // The limit probes up while the downstream answers fast.
    await until("a probe up kept at the hub", () => hubChanges(hub.url), (l) => l.some((c) => c.reason.includes("probing up")), 20_000);
    // The 1 m window: changes a tenth of a second apart are still a few pixels apart.
    await page.evaluate((k) => (location.hash = `#/s/${encodeURIComponent(k)}?w=1m`), KEY);
    await page.getByTestId("detail").waitFor();
    await until("limit markers on the permits chart", () => drawn(page, "permits"), (g) => g.length > 0, 10_000);
    // On the permits chart only: the others have no cap to explain (an alert, e.g. agent_down on a loaded machine, is on all of them).
    const count = (groups: string[]) => groups.reduce((n, g) => n + Number(g.split(":")[1]), 0);
    const onPermits = count(await drawn(page, "permits"));
    for (const chart of ["queue", "latency", "throughput"]) {
      const groups = await drawn(page, chart);
      expect(groups.some((g) => g.includes("N→")), groups.join(" | ")).toBe(false);
      expect(count(groups)).toBeLessThan(onPermits);
    }
    const probes = await hoverEach(page);
    expect(probes.some((t) => /^Limit \d+ → \d+ at \d\d:\d\d:\d\d: latency flat at .* probing up$/.test(t)), probes.join("\n")).toBe(true);

    // The downstream slows while the view is open: the cut arrives with the samples.
    agents[0].proc.kill("SIGUSR1");
    // A cut: latency rose and the limit went down (a small rise may still let it grow by its queue allowance).
    const isCut = (t: string) => {
      const m = /^Limit (\d+) → (\d+) at \d\d:\d\d:\d\d: latency rose from [\d.]+ ms to [\d.]+ ms at in-flight \d+$/.exec(t);
      return m !== null && Number(m[2]) < Number(m[1]);
    };
    const live = await until("the cut named on hover", () => hoverEach(page), (l) => l.some(isCut), 20_000);
    const cut = live.find(isCut) as string;

    // Opened again, the view reads the same change from the hub's history.
    await page.getByRole("button", { name: "Semaphores" }).click();
    await page.getByTestId("overview").waitFor();
    await page.evaluate((k) => (location.hash = `#/s/${encodeURIComponent(k)}?w=1m`), KEY);
    await page.getByTestId("detail").waitFor();
    const reopened = await until("the cut after reopening", () => hoverEach(page), (l) => l.includes(cut), 10_000);
    expect(reopened).toContain(cut);
    expect(browser.errors).toEqual([]);
  }, 90_000);

  it("says the limit, not the demand, made the queue: in the Little's-law panel and under the convoy alert, with the limit's reason", async () => {
    const { page, browser, agents } = rig as DashboardRig;
    // The downstream slowed (as in the case before; again, so this case stands alone): the callers
    // outnumber the cut limit, they queue, and the queue is a convoy.
    agents[0].proc.kill("SIGUSR1");
    const lowered = (l: Alert[]) => l.find((a) => a.rule === "convoy" && a.key === KEY && (a.evidence?.diagnosis as Diagnosis | undefined)?.cause === "cap_lowered");
    const alert = lowered(await until("a convoy diagnosed cap_lowered", () => pageAlerts(page), (l) => lowered(l) !== undefined, 30_000)) as Alert;
    const d = alert.evidence?.diagnosis as Diagnosis;
    expect(d.headline).toMatch(/^The limit, not the demand: the adaptive limit cut N from \d+ to \d+$/);
    expect(d.numbers.capLoweredBy).toBe("adaptive");
    expect(d.numbers.capReason).toMatch(/^latency rose from/);

    // The detail view's panel names the same cause from the same rows.
    const verdict = page.getByTestId("littles-verdict");
    await until("the panel's cause", () => verdict.getAttribute("data-cause"), (c) => c === "cap_lowered", 15_000);
    expect(await verdict.textContent()).toContain("Limit lowered: The limit, not the demand");

    // And the alert's evidence shows it, with the reason and the N it fell from.
    await page.getByTestId("alerts-tab").click();
    await page.getByTestId("alerts").waitFor();
    await page.locator(`.alert-item[data-alert-id="${alert.id}"]`).click();
    const shown = page.getByTestId("evidence").getByTestId("diagnosis");
    await until("the diagnosis shown", () => shown.getAttribute("data-cause"), (c) => c === "cap_lowered", 10_000);
    const text = (await shown.textContent()) ?? "";
    expect(text).toContain("Limit lowered");
    expect(text).toMatch(/latency rose from [\d.]+ ms to [\d.]+ ms at in-flight \d+/);
    expect(await shown.getByTestId("cap-before").textContent()).toMatch(/^\d+ \(lowered by the adaptive limit\)$/);
    expect(browser.errors).toEqual([]);
  }, 60_000);
});
