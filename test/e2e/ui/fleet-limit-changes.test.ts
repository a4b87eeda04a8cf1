// A fleet's detail chart marks its replicas' adaptive limit changes, in a real browser against two
// real agents (two replicas of one adaptive semaphore): the hub's fleet window carries each
// member's kept changes naming its instance, the permits chart marks them, and hovering a marker
// names the replica, the change and its reason.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UiLimitChange } from "../../../shared/ui-protocol/types.js";
import { startDashboard, until, type DashboardRig } from "../browser.js";
import { drawnMarkers, hoverLimitMarkers } from "./chart-markers.js";

const FIXTURE = join(import.meta.dirname, "fixtures/ui-agent.ts");

/** The changes the hub gives a fleet's window, through the HTTP API (the same view as fleet:history). */
async function fleetChanges(url: string): Promise<UiLimitChange[]> {
  const res = await fetch(`${url}/api/fleet/history?service=shop&name=downstream`);
  if (!res.ok) return [];
  return ((await res.json()) as { window: { limitChanges?: UiLimitChange[] } }).window.limitChanges ?? [];
}

describe("a fleet's limit changes on its detail chart (web mode, two real agents)", () => {
  let rig: DashboardRig | undefined;

  beforeAll(async () => {
    rig = await startDashboard(FIXTURE, [
      ["adaptive", "shop", "web-1"],
      ["adaptive", "shop", "web-2"],
    ]);
  }, 60_000);

  afterAll(() => rig?.close());

  it("marks each replica's changes on the permits chart and names the replica and the reason on hover", async () => {
    const { page, hub, browser } = rig as DashboardRig;
    const both = (l: UiLimitChange[]) => ["web-1", "web-2"].every((i) => l.some((c) => c.instance === i && c.reason.includes("probing up")));
    const changes = await until("both replicas' probes in the fleet window", () => fleetChanges(hub.url), both, 20_000);
    // Oldest first, as a semaphore's window has them.
    expect(changes.map((c) => c.t)).toEqual([...changes.map((c) => c.t)].sort((a, b) => a - b));

    await page.evaluate(() => (location.hash = "#/f/shop/downstream?w=1m"));
    await page.getByTestId("detail").waitFor();
    await until("limit markers on the fleet's permits chart", () => drawnMarkers(page, "permits"), (g) => g.length > 0, 10_000);
    // The permits chart only: the others have no cap to explain.
    for (const chart of ["queue", "latency", "throughput"]) expect((await drawnMarkers(page, chart)).some((g) => g.includes("N→"))).toBe(false);
    const named = (l: string[], instance: string) => l.some((t) => new RegExp(`^${instance}: Limit \\d+ → \\d+ at \\d\\d:\\d\\d:\\d\\d: latency flat at .* probing up$`).test(t));
    const tips = await until("both replicas named on hover", () => hoverLimitMarkers(page), (l) => named(l, "web-1") && named(l, "web-2"), 15_000);
    expect(tips.every((t) => /^web-[12]: Limit /.test(t)), tips.join("\n")).toBe(true);
    expect(browser.errors).toEqual([]);
  }, 60_000);
});
