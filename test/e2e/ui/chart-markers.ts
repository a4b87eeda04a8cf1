// Reading a detail chart's markers in the browser suites: what a chart drew (its `data-markers`),
// and the limit lines its tooltip names with the cursor on each marker of the permits chart.
import type { Page } from "playwright-core";

/** What chart `chart` drew as markers: "x:count:label" groups. */
export async function drawnMarkers(page: Page, chart: string): Promise<string[]> {
  const m = (await page.locator(`[data-chart="${chart}"] .uplot`).getAttribute("data-markers")) ?? "";
  return m === "" ? [] : m.split(" | ");
}

/** The tooltip's limit lines with the cursor on each marker the permits chart drew. */
export async function hoverLimitMarkers(page: Page): Promise<string[]> {
  const card = page.locator('[data-chart="permits"]');
  const box = (await card.locator(".u-over").boundingBox()) as { x: number; y: number; width: number; height: number };
  const texts = new Set<string>();
  for (const g of await drawnMarkers(page, "permits")) {
    const x = Number(g.split(":")[0]);
    await page.mouse.move(box.x + x, box.y + box.height / 2);
    for (const t of await card.locator(".chart-tip .tip-limit").allTextContents()) texts.add(t);
  }
  await page.mouse.move(0, 0);
  return [...texts];
}
