// `npm run docs:screenshots`: the README's screenshots, taken from web mode with the built-in
// demo: overview, an alert, a detail view, the fleet and a replay of the same run, in light and
// dark, at 1440x900 and 1024x700, into docs/screenshots/ (quantized with pngquant, so they stay
// small).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { startDemo } from "../agent/demo/fleet.js";
import { createHub, createReplayHub } from "../main/hub/index.js";
import { buildRendererIfNeeded } from "./build-if-needed.js";

const ROOT = join(import.meta.dirname, "..");
const OUT = join(ROOT, "docs/screenshots");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Long enough for the demo to have raised every rule once. */
const DEMO_RUN_MS = 45_000;
const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
] as const;
const THEMES = ["light", "dark"] as const;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function shot(page: Page, name: string): Promise<void> {
  const file = join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  // 256 colours: a dashboard's flat colours survive, and the file is a fraction of the size.
  const q = spawnSync("pngquant", ["--force", "--skip-if-larger", "--strip", "--quality=70-95", "--output", file, "256", file]);
  if (q.error !== undefined || (q.status !== 0 && q.status !== 98 && q.status !== 99)) console.error(`semscope: could not quantize ${file} (pngquant: apt-get install pngquant); kept as taken`);
}

async function liveShots(browser: Browser, url: string): Promise<void> {
  for (const theme of THEMES) {
    for (const size of SIZES) {
      const ctx = await browser.newContext({ viewport: size, colorScheme: theme });
      const page = await ctx.newPage();
      const tag = `${theme}-${size.width}`;
      await page.goto(url);
      await page.getByTestId("overview").waitFor();
      await sleep(1500);
      await shot(page, `overview-${tag}`);
      // The convoy's alert, with its diagnosis.
      await page.getByTestId("alerts-tab").click();
      await page.locator(".alert-item", { hasText: "Convoy" }).first().click();
      await sleep(500);
      await shot(page, `alert-${tag}`);
      await page.getByTestId("open-alert").click();
      await page.getByTestId("detail").waitFor();
      await sleep(2500);
      await shot(page, `detail-${tag}`);
      await page.getByRole("button", { name: "Fleet" }).click();
      await sleep(1000);
      await shot(page, `fleet-${tag}`);
      await ctx.close();
    }
  }
}

async function replayShots(browser: Browser, url: string): Promise<void> {
  for (const theme of THEMES) {
    for (const size of SIZES) {
      const ctx = await browser.newContext({ viewport: size, colorScheme: theme });
      const page = await ctx.newPage();
      await page.goto(url);
      await page.getByTestId("replay-bar").waitFor();
      await sleep(2000);
      await shot(page, `replay-${theme}-${size.width}`);
      await ctx.close();
    }
  }
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
  const staticDir = buildRendererIfNeeded();
  mkdirSync(OUT, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), "semscope-shots-"));
  const recording = join(dir, "demo.jsonl");
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const hub = await createHub({ port: 0, staticDir, record: recording, log: () => undefined });
    const demo = await startDemo({ url: hub.url });
    try {
      await sleep(DEMO_RUN_MS);
      await liveShots(browser, hub.url);
    } finally {
      await demo.stop();
      await hub.close();
    }
    const replay = await createReplayHub({ file: recording, port: 0, staticDir, log: () => undefined });
    try {
      await replayShots(browser, replay.url);
    } finally {
      await replay.close();
    }
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`semscope: screenshots in ${OUT}`);
}

main().catch((err: unknown) => {
  console.error(`semscope docs:screenshots: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
